// Copyright 2026 The demo-microservice Authors.
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

//! The `demo-microservice` operator: custom resource types, their controllers and the shared plumbing.
//!
//! `src/main.rs` runs the controllers; `src/bin/manifests.rs` writes the CRDs and RBAC rules
//! derived from this code into `config/`.

pub mod api;
pub mod context;
pub mod controller;
pub mod metrics;
#[cfg(test)]
pub mod testing;

pub use context::Context;

/// How this operator names itself to the API server: the server-side apply field manager, the
/// `reportingController` of its Events and the `app.kubernetes.io/managed-by` label of the objects
/// it creates.
pub const OPERATOR_NAME: &str = "demo-microservice-operator";

/// `error` and its sources, joined by ": ": kube's errors keep the useful part (e.g.
/// "Connection refused") in their sources.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        // Some errors repeat their source in their own message.
        if !text.contains(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text
}
