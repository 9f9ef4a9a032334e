// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The `devops-dms-backup` controller: a second controller of DemoMicroService objects
//! (`devops.example.com/v1`), beside the kind's own in `demo_micro_service.rs`.
//!
//! The runtime runs it as it runs every controller, on its own: it calls
//! [`DmsBackupReconciler`]'s `apply` for every change of a DemoMicroService, retries failures and
//! reports them as Events (see `rbuilder_runtime::controller`), under this controller's name in
//! logs and metrics.
//!
//! Its finalizer is its own, so that its `cleanup` runs before a DemoMicroService is deleted,
//! whatever the kind's own controller does.
//!
//! Both controllers see every DemoMicroService: give each its own part of the work (its own
//! status conditions, the objects it creates), so that they never undo each other's changes.

use std::sync::Arc;
use std::time::Duration;

use rbuilder_runtime::controller::Action;
use rbuilder_runtime::{Context, Reconciler, Registration, register};

use crate::api::devops::v1;

#[cfg(test)]
mod tests;

/// Reconciles demomicroservices, beside the kind's own controller.
pub struct DmsBackupReconciler;

/// This controller, for the list in `src/controller/mod.rs`.
pub const CONTROLLER: Registration = register::<DmsBackupReconciler>();

impl Reconciler for DmsBackupReconciler {
    type Resource = v1::DemoMicroService;
    type Error = Error;
    const NAME: &'static str = "devops-dms-backup";
    const FINALIZER: Option<&'static str> = Some("devops.example.com/dms-backup");

    async fn apply(_obj: Arc<v1::DemoMicroService>, _ctx: Arc<Context>) -> Result<Action, Error> {
        // TODO(user): this controller's reconcile logic. `_obj` is the DemoMicroService as
        // last seen; act on it through `_ctx.client` (e.g. `_ctx.api_near::<...>(&*_obj)`) and
        // return errors with `?`. The manager may get, list and watch demomicroservices; grant
        // what else `apply` calls in `rbac_rules` (then `make manifests`).

        // Again after an hour without a change: a safety net against missed watch events.
        Ok(Action::requeue(Duration::from_secs(60 * 60)))
    }

    /// Releases what `apply` made outside the cluster, before the DemoMicroService is deleted.
    async fn cleanup(_obj: Arc<v1::DemoMicroService>, _ctx: Arc<Context>) -> Result<Action, Error> {
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
