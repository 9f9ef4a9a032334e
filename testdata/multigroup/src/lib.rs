// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The `multigroup` operator: its custom resource types and its controllers.
//!
//! The runtime in `runtime/` (crate `rbuilder_runtime`, owned by rbuilder) runs them:
//! `src/main.rs` starts the manager, `src/bin/manifests.rs` writes the CRDs and the RBAC rules
//! derived from this code into `config/`.

use rbuilder_runtime::{Operator, WatchScope};

pub mod api;
pub mod controller;

/// This operator, as the runtime runs it. (A static, not a const: the controllers are compiled
/// once, in this library, rather than in each binary that uses them.)
pub static OPERATOR: Operator = Operator {
    name: "multigroup",
    version: env!("CARGO_PKG_VERSION"),
    controllers: controller::CONTROLLERS,
    crds: api::crds,
    scope: WatchScope::Cluster,
};
