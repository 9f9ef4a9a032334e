//! The `Memcached` controller: runs `spec.image` as a Deployment of the same name and
//! reports the Deployment's state in the status.
//!
//! This file says what the Deployment and the status are; the runtime applies, watches and
//! deletes the Deployment (see `rbuilder_runtime::owned`), and never touches someone else's.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, ContainerPort, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::ResourceExt;
use rbuilder_runtime::controller::Action;
use rbuilder_runtime::owned::{self, MANAGED_BY, Owns};
use rbuilder_runtime::{Context, Reconciler, Registration, conditions, pod_security, register};

use crate::api::v1alpha1;

#[cfg(test)]
mod tests;

/// Reconciles Memcacheds: each runs as a Deployment.
pub struct MemcachedReconciler;

/// This controller, for the list in `src/controller/mod.rs`.
pub const CONTROLLER: Registration = register::<MemcachedReconciler>();

impl Reconciler for MemcachedReconciler {
    type Resource = v1alpha1::Memcached;
    type Error = Error;
    const NAME: &'static str = "memcached";
    const FINALIZER: Option<&'static str> = Some("devops.my.domain/finalizer");

    /// Runs `run`. An object someone else holds where `run` applies one (the Deployment, or
    /// any kind you add) is left alone, and the status says whose it is.
    async fn apply(obj: Arc<Self::Resource>, ctx: Arc<Context>) -> Result<Action, Error> {
        let result = run(&obj, &ctx).await;
        if let Err(Error::Owned(owned::Error::Taken(taken))) = &result {
            // The runtime retries with a backoff; its Event's reason names the kind.
            let refused = status(&obj, Err(taken.as_ref()));
            ctx.apply_status(&*obj, &refused).await?;
        }
        result
    }

    /// Deletes the Deployment first, unless `kubectl delete --cascade=orphan` keeps it.
    async fn cleanup(obj: Arc<Self::Resource>, ctx: Arc<Context>) -> Result<Action, Error> {
        ctx.owned::<Deployment>(&*obj).delete().await?;
        Ok(Action::await_change())
    }

    /// Its Deployment: the runtime watches it (a change reconciles the owner), keeps it in
    /// the cache `apply` reads, and grants the manager what `owned` does to it. The manager's
    /// other rules come from `Resource` and `FINALIZER`; add those your own code needs in
    /// `rbac_rules` (then `make manifests`).
    fn owns() -> Owns<Self::Resource> {
        Owns::kind::<Deployment>()
    }
}

/// Applies the Deployment, then reports its state in the status.
async fn run(obj: &v1alpha1::Memcached, ctx: &Context) -> Result<Action, Error> {
    // Without spec.replicas, whoever scales the Deployment owns its replicas.
    let owned = ctx.owned(obj).release(&["spec", "replicas"]);
    let applied = owned.apply(deployment(obj, ctx.field_manager())).await?;
    // A new Deployment: its controller reports on it within moments, which brings another
    // reconcile; a status written before that would only say "Pending".
    if let Some(wait) = conditions::first_report_due(&applied.object) {
        return Ok(Action::requeue(wait));
    }
    let status = status(obj, Ok(&applied.object));
    ctx.apply_status(obj, &status).await?;
    // Again after an hour without a change: a safety net against missed watch events.
    Ok(Action::requeue(Duration::from_secs(60 * 60)))
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Kube(#[from] kube::Error),
    #[error("{0}")]
    Owned(#[from] owned::Error),
}

/// The Deployment that runs `obj`, labelled as `manager`'s (the operator's). The runtime names
/// and places it as `obj` and adds the owner reference; fields left `None` are left out of
/// the apply.
pub fn deployment(obj: &v1alpha1::Memcached, manager: &str) -> Deployment {
    let name = "memcached";
    // The labels that select its pods (a Deployment's selector cannot change).
    let selector = BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), name.to_owned()),
        ("app.kubernetes.io/instance".to_owned(), obj.name_any()),
    ]);
    let mut labels = selector.clone();
    labels.insert(MANAGED_BY.to_owned(), manager.to_owned());
    // The "restricted" Pod Security Standard. The user id is a number: Kubernetes checks
    // `runAsNonRoot` against a number only, not an image's user name; `None` keeps the image's.
    let user = None;
    let container = Container {
        name: name.to_owned(),
        image: Some(obj.spec.image.clone()),
        image_pull_policy: Some("IfNotPresent".to_owned()),
        ports: obj.spec.port.map(|port| {
            vec![ContainerPort {
                name: Some("memcached".to_owned()),
                container_port: port,
                protocol: Some("TCP".to_owned()),
                ..Default::default()
            }]
        }),
        security_context: Some(pod_security::restricted_container(user)),
        ..Default::default()
    };
    Deployment {
        metadata: ObjectMeta {
            labels: Some(labels.clone()),
            ..Default::default()
        },
        spec: DeploymentSpec {
            // Left out of the apply when unset, so that whoever scales the Deployment owns it.
            replicas: obj.spec.replicas,
            selector: LabelSelector {
                match_labels: Some(selector),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    security_context: Some(pod_security::restricted_pod(user)),
                    containers: vec![container],
                    ..Default::default()
                }),
            },
            ..Default::default()
        },
        ..Default::default()
    }
}

/// The status of `obj` as its Deployment shows it: `Available` mirrors the Deployment's own
/// condition, `Progressing` is `True` while a rollout is under way, `Degraded` is `True` when it
/// is stuck (see `rbuilder_runtime::conditions::of_deployment`). When an object it runs as is
/// someone else's (`Err`): not available, degraded, saying whose it is.
pub fn status(
    obj: &v1alpha1::Memcached,
    deployment: Result<&Deployment, &owned::Taken>,
) -> v1alpha1::MemcachedStatus {
    let current = obj.status.as_ref().map(|s| s.conditions.as_slice());
    let (current, generation) = (current.unwrap_or_default(), obj.metadata.generation);
    let conditions = match deployment {
        Ok(deployment) => conditions::of_deployment(current, deployment, generation),
        Err(taken) => conditions::refused(current, &taken.reason(), &taken.to_string(), generation),
    };
    let observed = deployment.ok().and_then(|d| d.status.as_ref());
    v1alpha1::MemcachedStatus {
        conditions,
        ready_replicas: Some(observed.and_then(|s| s.ready_replicas).unwrap_or(0)),
        observed_generation: generation,
    }
}
