// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The `apps-deployment-scaler` controller: a second controller of Deployment objects
//! (`apps/v1`), beside the kind's own in `deployment.rs`.
//!
//! The runtime runs it as it runs every controller, on its own: it calls
//! [`DeploymentScalerReconciler`]'s `apply` for every change of a Deployment, retries failures and
//! reports them as Events (see `rbuilder_runtime::controller`), under this controller's name in
//! logs and metrics. No finalizer: the objects are not this operator's.
//!
//! Both controllers see every Deployment: give each its own part of the work (its own
//! status conditions, the objects it creates), so that they never undo each other's changes.

use std::sync::Arc;
use std::time::Duration;

use rbuilder_runtime::controller::Action;
use rbuilder_runtime::{Context, Reconciler, Registration, register};

use k8s_openapi::api::apps::v1;

#[cfg(test)]
mod tests;

/// Reconciles deployments, beside the kind's own controller.
pub struct DeploymentScalerReconciler;

/// This controller, for the list in `src/controller/mod.rs`.
pub const CONTROLLER: Registration = register::<DeploymentScalerReconciler>();

impl Reconciler for DeploymentScalerReconciler {
    type Resource = v1::Deployment;
    type Error = Error;
    const NAME: &'static str = "apps-deployment-scaler";
    const FINALIZER: Option<&'static str> = None;

    async fn apply(_obj: Arc<v1::Deployment>, _ctx: Arc<Context>) -> Result<Action, Error> {
        // TODO(user): this controller's reconcile logic. `_obj` is the Deployment as
        // last seen; act on it through `_ctx.client` (e.g. `_ctx.api_near::<...>(&*_obj)`) and
        // return errors with `?`. The manager may get, list and watch deployments; grant
        // what else `apply` calls in `rbac_rules` (then `make manifests`).

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
