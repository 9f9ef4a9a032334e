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

//! The `DemoMicroService` controller: runs `spec.image` as a Deployment of the same name and
//! reports the Deployment's state in the status.
//!
//! This file says what the Deployment and the status are; the runtime applies, watches and
//! deletes the Deployment (see `rbuilder_runtime::owned`), and never touches someone else's.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::rbac::v1::PolicyRule;
use kube::{Resource, ResourceExt};
use rbuilder_runtime::controller::{Action, Controller};
use rbuilder_runtime::owned::{self, ControllerExt, MANAGED_BY};
use rbuilder_runtime::rbac::policy_rule;
use rbuilder_runtime::{Context, Reconciler, Registration, conditions, register};
use serde_json::json;

use crate::api::v1;

#[cfg(test)]
mod tests;

/// Reconciles DemoMicroServices: each runs as a Deployment.
pub struct DemoMicroServiceReconciler;

/// This controller, for the list in `src/controller/mod.rs`.
pub const CONTROLLER: Registration = register::<DemoMicroServiceReconciler>();

impl Reconciler for DemoMicroServiceReconciler {
    type Resource = v1::DemoMicroService;
    type Error = Error;
    const NAME: &'static str = "demomicroservice";
    const FINALIZER: Option<&'static str> = Some("devops.my.domain/finalizer");

    /// Applies the Deployment, then reports its state in the status.
    async fn apply(obj: Arc<Self::Resource>, ctx: Arc<Context>) -> Result<Action, Error> {
        let deployment = deployment(&obj, ctx.field_manager())?;
        // Without spec.replicas, whoever scales the Deployment owns its replicas.
        let owned = ctx.owned(&*obj).release(&["spec", "replicas"]);
        let status = match owned.apply(deployment).await {
            Ok(applied) => {
                // A new Deployment: its controller reports on it within moments, which brings
                // another reconcile; a status written before that would only say "Pending".
                if let Some(wait) = conditions::first_report_due(&applied.object) {
                    return Ok(Action::requeue(wait));
                }
                status(&obj, &applied.object)
            }
            Err(owned::Error::Taken(taken)) => {
                // Someone else's: the status says whose; the runtime retries with a backoff.
                ctx.apply_status(&*obj, &refused_status(&obj, &taken))
                    .await?;
                return Err(owned::Error::Taken(taken).into());
            }
            Err(error) => return Err(error.into()),
        };
        ctx.apply_status(&*obj, &status).await?;
        // Again after an hour without a change: a safety net against missed watch events.
        Ok(Action::requeue(Duration::from_secs(60 * 60)))
    }

    /// Deletes the Deployment first, unless `kubectl delete --cascade=orphan` keeps it.
    async fn cleanup(obj: Arc<Self::Resource>, ctx: Arc<Context>) -> Result<Action, Error> {
        ctx.owned::<Deployment>(&*obj).delete().await?;
        Ok(Action::await_change())
    }

    fn rbac_rules() -> Vec<PolicyRule> {
        let group = v1::DemoMicroService::group(&());
        let plural = v1::DemoMicroService::plural(&());
        vec![
            policy_rule(&group, &[&plural], &["get", "list", "watch", "patch"]),
            policy_rule(&group, &[&format!("{plural}/status")], &["patch"]),
            // Needed to set blockOwnerDeletion in the Deployment's owner reference.
            policy_rule(&group, &[&format!("{plural}/finalizers")], &["update"]),
            policy_rule(
                "apps",
                &["deployments"],
                &["get", "list", "watch", "create", "patch", "delete"],
            ),
        ]
    }

    /// A change to its Deployment reconciles the owner; the watch fills the cache `apply` reads.
    fn watches(
        controller: Controller<Self::Resource>,
        ctx: &Context,
    ) -> Controller<Self::Resource> {
        controller.watch_owned::<Deployment>(ctx)
    }

    fn failure_reason(error: &Error) -> &'static str {
        match error {
            Error::Owned(owned::Error::Taken(_)) => "DeploymentTaken",
            _ => "ApplyFailed",
        }
    }
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
/// and places it as `obj` and adds the owner reference.
pub fn deployment(obj: &v1::DemoMicroService, manager: &str) -> Result<Deployment, Error> {
    // The labels that select its pods (a Deployment's selector cannot change).
    let selector = json!({
        "app.kubernetes.io/name": "demomicroservice",
        "app.kubernetes.io/instance": obj.name_any(),
    });
    let mut labels = selector.clone();
    labels[MANAGED_BY] = json!(manager);
    // The user id the container runs as: Kubernetes checks `runAsNonRoot` against a number
    // only, not an image's user name. `null` keeps the image's own (non-root) user.
    let user = json!(1001);
    let ports = obj.spec.port.map(|port| {
        let port = json!({"name": "demomicroservic", "containerPort": port, "protocol": "TCP"});
        [port]
    });
    let deployment = json!({
        "metadata": {"labels": labels},
        "spec": {
            // Left out of the apply when unset, so that whoever scales the Deployment owns it.
            "replicas": obj.spec.replicas,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    // The "restricted" Pod Security Standard.
                    "securityContext": {
                        "runAsNonRoot": true,
                        "runAsUser": user,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "containers": [{
                        "name": "demomicroservice",
                        "image": obj.spec.image,
                        "imagePullPolicy": "IfNotPresent",
                        "ports": ports,
                        "securityContext": {
                            "runAsNonRoot": true,
                            "runAsUser": user,
                            "allowPrivilegeEscalation": false,
                            // Not readOnlyRootFilesystem: the restricted standard does not ask
                            // for it, and many images write to /tmp or a cache folder.
                            "capabilities": {"drop": ["ALL"]},
                            "seccompProfile": {"type": "RuntimeDefault"},
                        },
                    }],
                },
            },
        },
    });
    serde_json::from_value(deployment).map_err(|error| kube::Error::SerdeError(error).into())
}

/// The status of `obj` as its Deployment shows it: `Available` mirrors the Deployment's own
/// condition, `Progressing` is `True` while a rollout is under way, `Degraded` is `True` when it
/// is stuck (see `rbuilder_runtime::conditions::of_deployment`).
pub fn status(obj: &v1::DemoMicroService, deployment: &Deployment) -> v1::DemoMicroServiceStatus {
    let current = obj.status.as_ref().map(|s| s.conditions.as_slice());
    let generation = obj.metadata.generation;
    let ready = deployment.status.as_ref().and_then(|s| s.ready_replicas);
    v1::DemoMicroServiceStatus {
        conditions: conditions::of_deployment(current.unwrap_or_default(), deployment, generation),
        ready_replicas: Some(ready.unwrap_or(0)),
        observed_generation: generation,
    }
}

/// The status of `obj` when its Deployment is someone else's: not available, degraded, saying
/// whose it is.
fn refused_status(obj: &v1::DemoMicroService, taken: &owned::Taken) -> v1::DemoMicroServiceStatus {
    let current = obj.status.as_ref().map(|s| s.conditions.as_slice());
    let (generation, message) = (obj.metadata.generation, taken.to_string());
    let reason = "DeploymentTaken";
    v1::DemoMicroServiceStatus {
        conditions: conditions::refused(current.unwrap_or_default(), reason, &message, generation),
        observed_generation: generation,
        ..Default::default()
    }
}
