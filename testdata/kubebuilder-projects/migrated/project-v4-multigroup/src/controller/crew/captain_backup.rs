// Copyright 2026 The Kubernetes authors.
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

//! The `crew-captain-backup` controller: a second controller of Captain objects
//! (`crew.testproject.org/v1`), beside the kind's own in `captain.rs`.
//!
//! The runtime runs it as it runs every controller, on its own: it calls
//! [`CaptainBackupReconciler`]'s `apply` for every change of a Captain, retries failures and
//! reports them as Events (see `rbuilder_runtime::controller`), under this controller's name in
//! logs and metrics.
//!
//! Its finalizer is its own, so that its `cleanup` runs before a Captain is deleted,
//! whatever the kind's own controller does.
//!
//! Both controllers see every Captain: give each its own part of the work (its own
//! status conditions, the objects it creates), so that they never undo each other's changes.

use std::sync::Arc;
use std::time::Duration;

use rbuilder_runtime::controller::Action;
use rbuilder_runtime::{Context, Reconciler, Registration, register};

use crate::api::crew::v1;

#[cfg(test)]
mod tests;

/// Reconciles captains, beside the kind's own controller.
pub struct CaptainBackupReconciler;

/// This controller, for the list in `src/controller/mod.rs`.
pub const CONTROLLER: Registration = register::<CaptainBackupReconciler>();

impl Reconciler for CaptainBackupReconciler {
    type Resource = v1::Captain;
    type Error = Error;
    const NAME: &'static str = "crew-captain-backup";
    const FINALIZER: Option<&'static str> = Some("crew.testproject.org/captain-backup");

    async fn apply(_obj: Arc<v1::Captain>, _ctx: Arc<Context>) -> Result<Action, Error> {
        // TODO(user): this controller's reconcile logic. `_obj` is the Captain as
        // last seen; act on it through `_ctx.client` (e.g. `_ctx.api_near::<...>(&*_obj)`) and
        // return errors with `?`. The manager may get, list and watch captains; grant
        // what else `apply` calls in `rbac_rules` (then `make manifests`).

        // Again after an hour without a change: a safety net against missed watch events.
        Ok(Action::requeue(Duration::from_secs(60 * 60)))
    }

    /// Releases what `apply` made outside the cluster, before the Captain is deleted.
    async fn cleanup(_obj: Arc<v1::Captain>, _ctx: Arc<Context>) -> Result<Action, Error> {
        // TODO(user): this controller's clean-up logic.
        Ok(Action::await_change())
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Kube(#[from] kube::Error),
}
