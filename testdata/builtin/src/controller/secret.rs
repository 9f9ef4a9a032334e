// Copyright 2026 The builtin Authors.
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

//! The `Secret` controller: reconciles Kubernetes' own Secret objects
//! (`core/v1`; this project defines no CRD for them).
//!
//! The runtime calls [`SecretReconciler`]'s `apply` for every change of a
//! Secret; it also retries failures and reports them as Events (see
//! `rbuilder_runtime::controller`). No finalizer: the objects are not this operator's.

use std::sync::Arc;
use std::time::Duration;

use rbuilder_runtime::controller::Action;
use rbuilder_runtime::{Context, Reconciler, Registration, register};

use k8s_openapi::api::core::v1;

#[cfg(test)]
mod tests;

/// Reconciles secrets.
pub struct SecretReconciler;

/// This controller, for the list in `src/controller/mod.rs`.
pub const CONTROLLER: Registration = register::<SecretReconciler>();

impl Reconciler for SecretReconciler {
    type Resource = v1::Secret;
    type Error = Error;
    const NAME: &'static str = "secret";
    const FINALIZER: Option<&'static str> = None;

    async fn apply(_obj: Arc<v1::Secret>, _ctx: Arc<Context>) -> Result<Action, Error> {
        // TODO(user): your reconcile logic. `_obj` is the Secret as last
        // seen; act on it through `_ctx.client` (e.g. `_ctx.api_near::<...>(&*_obj)`) and return
        // errors with `?`. The manager may get, list and watch secrets; grant what
        // else `apply` calls in `rbac_rules` (then `make manifests`).

        // Again after an hour without a change: a safety net against missed watch events.
        Ok(Action::requeue(Duration::from_secs(60 * 60)))
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Kube(#[from] kube::Error),
}
