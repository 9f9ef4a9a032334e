//! The `ConfigMap` controller: reconciles Kubernetes' own ConfigMap objects
//! (`core/v1`; this project defines no CRD for them).
//!
//! The runtime calls [`ConfigMapReconciler`]'s `apply` for every change of a
//! ConfigMap; it also retries failures and reports them as Events (see
//! `rbuilder_runtime::controller`). No finalizer: the objects are not this operator's.

use std::sync::Arc;
use std::time::Duration;

use rbuilder_runtime::controller::Action;
use rbuilder_runtime::{Context, Reconciler, Registration, register};

use k8s_openapi::api::core::v1;

#[cfg(test)]
mod tests;

/// Reconciles configmaps.
pub struct ConfigMapReconciler;

/// This controller, for the list in `src/controller/mod.rs`.
pub const CONTROLLER: Registration = register::<ConfigMapReconciler>();

impl Reconciler for ConfigMapReconciler {
    type Resource = v1::ConfigMap;
    type Error = Error;
    const NAME: &'static str = "configmap";
    const FINALIZER: Option<&'static str> = None;

    async fn apply(_obj: Arc<v1::ConfigMap>, _ctx: Arc<Context>) -> Result<Action, Error> {
        // TODO(user): your reconcile logic. `_obj` is the ConfigMap as last
        // seen; act on it through `_ctx.client` (e.g. `_ctx.api_near::<...>(&*_obj)`) and return
        // errors with `?`. The manager may get, list and watch configmaps; grant what
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
