// Copyright 2026 The conversion-only Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The `conversion-only` operator: its custom resource types, its controllers and its
//! webhooks.
//!
//! The runtime in `runtime/` (crate `rbuilder_runtime`, owned by rbuilder) runs them:
//! `src/main.rs` starts the manager; the `manifests` binary (`manifests/`, `make manifests`)
//! writes the CRDs and the RBAC rules derived from this code into `config/`.

use rbuilder_runtime::{Operator, WatchScope};

pub mod api;
pub mod controller;
pub mod webhook;

/// This operator, as the runtime runs it. (A static, not a const: the controllers are compiled
/// once, in this library, rather than in each binary that uses them.) Made with `Operator::new`
/// and its methods, so that what a later runtime adds to an operator takes its default, and
/// this file compiles as it is after `rbuilder update`.
pub static OPERATOR: Operator = Operator::new("conversion-only")
    .version(env!("CARGO_PKG_VERSION"))
    .controllers(controller::CONTROLLERS)
    .webhooks(webhook::WEBHOOKS)
    .crds(api::crds)
    .scope(WatchScope::Cluster);
