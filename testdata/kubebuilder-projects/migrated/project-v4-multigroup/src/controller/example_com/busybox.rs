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

//! The `Busybox` controller: runs the image of the manager's `BUSYBOX_IMAGE` environment
//! variable as a Deployment of the same name, with `spec.size` replicas (kubebuilder's deploy-image API), and reports the Deployment's state in the
//! status.
//!
//! This file says what the Deployment and the status are; the runtime applies, watches and
//! deletes the Deployment (see `rbuilder_runtime::owned`), and never touches someone else's.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::ResourceExt;
use rbuilder_runtime::controller::Action;
use rbuilder_runtime::owned::{self, MANAGED_BY, Owns};
use rbuilder_runtime::{Context, Reconciler, Registration, conditions, pod_security, register};

use crate::api::example_com::v1alpha1;

#[cfg(test)]
mod tests;

/// Reconciles Busyboxs: each runs as a Deployment.
pub struct BusyboxReconciler;

/// This controller, for the list in `src/controller/mod.rs`.
pub const CONTROLLER: Registration = register::<BusyboxReconciler>();

impl Reconciler for BusyboxReconciler {
    type Resource = v1alpha1::Busybox;
    type Error = Error;
    const NAME: &'static str = "example.com-busybox";
    const FINALIZER: Option<&'static str> = Some("example.com.testproject.org/finalizer");

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
async fn run(obj: &v1alpha1::Busybox, ctx: &Context) -> Result<Action, Error> {
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

/// The environment variable of the manager that names the image to run, as kubebuilder's
/// deploy-image controllers read it (config/manager/manager.yaml sets it).
const IMAGE_ENV: &str = "BUSYBOX_IMAGE";

/// The image run when the manager's environment has no `IMAGE_ENV` (`make run`, the tests).
const DEFAULT_IMAGE: &str = "busybox:1.36.1";

/// The image to run: `IMAGE_ENV`'s, else `DEFAULT_IMAGE`.
pub fn operand_image() -> String {
    std::env::var(IMAGE_ENV).unwrap_or_else(|_| DEFAULT_IMAGE.to_owned())
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
pub fn deployment(obj: &v1alpha1::Busybox, manager: &str) -> Deployment {
    let name = "busybox";
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
        image: Some(operand_image()),
        image_pull_policy: Some("IfNotPresent".to_owned()),
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
            replicas: obj.spec.size,
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
    obj: &v1alpha1::Busybox,
    deployment: Result<&Deployment, &owned::Taken>,
) -> v1alpha1::BusyboxStatus {
    let current = obj.status.as_ref().map(|s| s.conditions.as_slice());
    let (current, generation) = (current.unwrap_or_default(), obj.metadata.generation);
    let conditions = match deployment {
        Ok(deployment) => conditions::of_deployment(current, deployment, generation),
        Err(taken) => conditions::refused(current, &taken.reason(), &taken.to_string(), generation),
    };
    v1alpha1::BusyboxStatus { conditions }
}
