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

//! The `Memcached` controller: runs the image of the manager's `MEMCACHED_IMAGE` environment
//! variable as a Deployment of the same name, with `spec.size` replicas and `spec.containerPort` as
//! its port (kubebuilder's deploy-image API), and reports the Deployment's state in the
//! status.
//!
//! The Deployment is controlled by its Memcached (a controller owner reference) and
//! watched, so a Deployment that is deleted, or whose fields set here are edited by hand, is
//! put back at once; the watch also keeps the Deployments in a cache, which reconciles read
//! instead of asking the API server (see `find_deployment`). A Deployment of the same name that
//! the Memcached does not control is never touched, unless this operator made it for a
//! Memcached of that name and an orphaning deletion (`kubectl delete --cascade=orphan`)
//! left it behind: then it is adopted.
//! The runtime does the rest: the finalizer, retries, metrics, and a Warning Event for each
//! failure (see `rbuilder_runtime::controller`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, PodSecurityContext, PodSpec, PodTemplateSpec,
    SeccompProfile, SecurityContext,
};
use k8s_openapi::api::rbac::v1::PolicyRule;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use kube::api::{DeleteParams, Patch, PatchParams, Preconditions};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Resource, ResourceExt};
use rbuilder_runtime::applied;
use rbuilder_runtime::conditions::condition;
use rbuilder_runtime::controller::{Action, Controller};
use rbuilder_runtime::rbac::policy_rule;
use rbuilder_runtime::{Context, Event, EventType, Reconciler, Registration, register};

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
    const FINALIZER: Option<&'static str> = Some("example.com.testproject.org/finalizer");

    /// Creates or updates the Deployment, then copies its state into the status.
    async fn apply(obj: Arc<v1alpha1::Memcached>, ctx: Arc<Context>) -> Result<Action, Error> {
        let deployments = ctx.api_near::<Deployment>(&*obj);
        let name = obj.name_any();
        let mut desired = deployment(&obj, ctx.field_manager())?;
        applied::mark(&mut desired).map_err(kube::Error::SerdeError)?;
        let existing = find_deployment(&ctx, &deployments, &obj).await?;
        // Server-side apply, to create the Deployment too: one entry of this operator then
        // owns every field set here, and a field this code stops setting is removed.
        let params = match existing.as_deref() {
            // What this code sets is there as it set it: most reconciles (a status change of
            // the Deployment, a resync) end here, without a write.
            Some(existing)
                if is_controlled_by(existing, &obj) && applied::already(existing, &desired) =>
            {
                ctx.apply_status(&*obj, &status(&obj, existing)).await?;
                return Ok(Action::requeue(RESYNC_AFTER));
            }
            // Not forced: a Deployment of that name that someone else created meanwhile makes
            // it fail on each field they set to another value (409) instead of being taken
            // over.
            None => PatchParams::apply(ctx.field_manager()),
            Some(existing)
                if is_controlled_by(existing, &obj)
                    || is_orphan_of(existing, &obj, ctx.field_manager()) =>
            {
                // The uid makes it apply to that very Deployment: one created in its place
                // meanwhile is refused, not taken over. The resourceVersion makes it apply to
                // the Deployment as read (the cache may lag): if it changed since, e.g. someone
                // else took it, the apply is refused (409) and tried again with what it became.
                desired.metadata.uid = existing.metadata.uid.clone();
                desired.metadata.resource_version = existing.metadata.resource_version.clone();
                if desired.spec.replicas.is_none() {
                    // spec.replicas unset: the Deployment keeps its count for whoever scales it.
                    let replicas = ["spec", "replicas"];
                    let released = ctx.release_field(&deployments, existing, &replicas);
                    if let Some(released) = released.await? {
                        // The release changed the Deployment: apply to it as released.
                        desired.metadata.resource_version = released.metadata.resource_version;
                    }
                }
                // Forced: the fields set here are put back to these values (those that others
                // set, e.g. an added env var, stay theirs).
                ctx.apply_params()
            }
            Some(existing) => {
                let error = Error::DeploymentTaken {
                    name,
                    whose: whose(existing),
                };
                // The status says why, so that `kubectl wait` and health checks do not wait
                // forever; the runtime retries with a backoff.
                ctx.apply_status(&*obj, &refused_status(&obj, &error))
                    .await?;
                return Err(error);
            }
        };
        let applied = match deployments
            .patch(&name, &params, &Patch::Apply(&desired))
            .await
        {
            Ok(applied) => applied,
            // Changed since it was read (only an apply with a resourceVersion meets this 409: a
            // forced apply has no field conflicts). The change brings a reconcile of its own
            // once the cache holds it; the requeue is a safety net. No failure to report.
            Err(kube::Error::Api(status))
                if status.code == 409 && desired.metadata.resource_version.is_some() =>
            {
                return Ok(Action::requeue(STALE_RETRY));
            }
            Err(error) => return Err(error.into()),
        };
        let change = match existing.as_deref() {
            None => Some(("Created", format!("Created Deployment {name}"))),
            Some(orphan) if !is_controlled_by(orphan, &obj) => {
                Some(("Adopted", format!("Adopted Deployment {name}")))
            }
            // Only a spec change bumps the generation: that is what deserves an Event.
            Some(existing) if applied.metadata.generation != existing.metadata.generation => {
                Some(("Updated", format!("Updated Deployment {name}")))
            }
            Some(_) => None,
        };
        if let Some((reason, note)) = change {
            publish(&ctx, &obj, reason, note).await;
        }
        ctx.apply_status(&*obj, &status(&obj, &applied)).await?;
        Ok(Action::requeue(RESYNC_AFTER))
    }

    /// Deletes the Deployment (rather than leaving it to the garbage collector, so that it is
    /// gone before the Memcached is; its ReplicaSets and Pods follow in the background),
    /// unless the Memcached is deleted with `--cascade=orphan`.
    async fn cleanup(obj: Arc<v1alpha1::Memcached>, ctx: Arc<Context>) -> Result<Action, Error> {
        // `kubectl delete --cascade=orphan` asks to keep the Deployment: the API server adds
        // the orphan finalizer, and the garbage collector removes the owner reference.
        if obj.finalizers().iter().any(|f| f == "orphan") {
            return Ok(Action::await_change());
        }
        let deployments = ctx.api_near::<Deployment>(&*obj);
        let name = obj.name_any();
        // Only the Deployment this Memcached controls, and only that very object (the
        // uid precondition): one of the same name that belongs to someone else stays.
        let Some(deployment) = find_deployment(&ctx, &deployments, &obj).await? else {
            return Ok(Action::await_change());
        };
        if !is_controlled_by(&deployment, &obj) {
            return Ok(Action::await_change());
        }
        publish(
            &ctx,
            &obj,
            "Deleting",
            format!("Deleting Deployment {name}"),
        )
        .await;
        // The resourceVersion too: the Deployment as read (the cache may lag), not one that
        // someone else has taken since. A 409 (replaced, or changed since) fails the cleanup;
        // the retry reads it again, and leaves it if it is not ours any more.
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: deployment.uid(),
                resource_version: deployment.resource_version(),
            }),
            ..DeleteParams::default()
        };
        match deployments.delete(&name, &params).await {
            Ok(_) => {}
            // Already gone: what the deletion was for.
            Err(kube::Error::Api(status)) if status.is_not_found() => {}
            Err(error) => return Err(error.into()),
        }
        Ok(Action::await_change())
    }

    fn rbac_rules() -> Vec<PolicyRule> {
        let group = v1alpha1::Memcached::group(&());
        let plural = v1alpha1::Memcached::plural(&());
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

    /// A change to a Deployment reconciles its Memcached, and the same watch keeps
    /// the Deployments in the cache `find_deployment` reads. Only the Deployments this operator
    /// labels as its own are watched, not every Deployment in the cluster.
    fn watches(
        controller: Controller<Self::Resource>,
        ctx: &Context,
    ) -> Controller<Self::Resource> {
        let managed = format!("{MANAGED_BY}={}", ctx.field_manager());
        let config = watcher::Config::default().labels(&managed);
        controller.owns_stream(ctx.cache(ctx.api::<Deployment>(), config))
    }

    fn failure_reason(error: &Error) -> &'static str {
        match error {
            Error::Kube(_) => "ApplyFailed",
            Error::MissingObjectKey(_) => "InvalidObject",
            Error::DeploymentTaken { .. } => "DeploymentTaken",
        }
    }
}

/// When to reconcile again after a success without a change: a safety net against missed
/// watch events.
const RESYNC_AFTER: Duration = Duration::from_secs(60 * 60);

/// When to reconcile again after an apply refused because the Deployment changed since the
/// cache showed it: by then the cache holds the change.
const STALE_RETRY: Duration = Duration::from_secs(1);

/// The environment variable of the manager that names the image to run, as kubebuilder's
/// deploy-image controllers read it (config/manager/manager.yaml sets it).
const IMAGE_ENV: &str = "MEMCACHED_IMAGE";

/// The image run when the manager's environment has no `IMAGE_ENV` (`make run`, the tests).
const DEFAULT_IMAGE: &str = "memcached:1.6.26-alpine3.19";

/// The image to run: `IMAGE_ENV`'s, else `DEFAULT_IMAGE`.
pub fn operand_image() -> String {
    std::env::var(IMAGE_ENV).unwrap_or_else(|_| DEFAULT_IMAGE.to_owned())
}

/// The user id the container runs as; `None` keeps the image's own (non-root) user. Needed
/// when the image names its user rather than giving a numeric id, as Kubernetes can only check
/// a numeric user against `runAsNonRoot`.
const RUN_AS_USER: Option<i64> = Some(1001);

/// The container's command; empty keeps the image's entrypoint.
const CONTAINER_COMMAND: &[&str] = &["memcached", "--memory-limit=64", "-o", "modern", "-v"];

/// The `app.kubernetes.io/name` label of the Deployment and its pods, and the container's name.
const APP_NAME: &str = "memcached";

/// The name of the container port (at most 15 characters).
const PORT_NAME: &str = "memcached";

/// Labels the Deployment as this operator's: the controller watches only Deployments with it.
const MANAGED_BY: &str = "app.kubernetes.io/managed-by";

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Kube(#[from] kube::Error),

    #[error("the object has no {0}")]
    MissingObjectKey(&'static str),

    #[error("Deployment {name} {whose}: rename the Memcached or delete that Deployment")]
    DeploymentTaken { name: String, whose: String },
}

/// The Deployment of `obj`'s name: from the controller's cache when it is there, else read
/// from the API server.
///
/// The cache holds only the Deployments labelled as this operator's (see `watches`), so it
/// lacks one that does not exist, one that someone else made (which must be seen, to be
/// refused, not applied to), and one made too recently for the watch to have brought it. The
/// read tells these apart; it is rare: a creation, a refusal. A reconcile that finds the
/// Deployment as it applied it (most of them) sends no request for it.
///
/// A cached Deployment may lag the cluster, which costs at most a retry or an extra apply:
/// - every write based on it (the apply, the deletion) carries its uid and resourceVersion,
///   so the API server refuses it if the Deployment changed since (409), and the reconcile is
///   retried with what it became;
/// - a change it does not show yet (an edit by hand, a new status) brings a watch event,
///   hence another reconcile, once the cache holds it: a reconcile that saw the old state and
///   sent no apply, or a status that is one step behind, is followed by one that sees the new.
async fn find_deployment(
    ctx: &Context,
    deployments: &Api<Deployment>,
    obj: &v1alpha1::Memcached,
) -> Result<Option<Arc<Deployment>>, Error> {
    let name = obj.name_any();
    let key = ObjectRef::new(&name).within(&obj.namespace().unwrap_or_default());
    let cached = ctx.cached::<Deployment>().and_then(|cache| cache.get(&key));
    match cached {
        Some(deployment) => Ok(Some(deployment)),
        None => Ok(deployments.get_opt(&name).await?.map(Arc::new)),
    }
}

/// Whether `obj` is the controller owner of `deployment`.
fn is_controlled_by(deployment: &Deployment, obj: &v1alpha1::Memcached) -> bool {
    let uid = obj.uid();
    deployment
        .owner_references()
        .iter()
        .any(|o| o.controller == Some(true) && Some(&o.uid) == uid.as_ref())
}

/// Whether `deployment` is one this operator (`manager`) made for a Memcached of
/// `obj`'s name, left behind by `kubectl delete --cascade=orphan` (the garbage collector
/// removed its owner reference): `obj` adopts it, as a ReplicaSet adopts the Pods its selector matches, so that
/// deleting with `--cascade=orphan` and creating again replaces the Memcached while
/// its pods run on.
fn is_orphan_of(deployment: &Deployment, obj: &v1alpha1::Memcached, manager: &str) -> bool {
    let owners = deployment.owner_references();
    let labels = deployment.labels();
    let made_for_it = selector_labels(&obj.name_any())
        .iter()
        .all(|(key, value)| labels.get(key) == Some(value));
    !owners.iter().any(|owner| owner.controller == Some(true))
        && labels.get(MANAGED_BY).map(String::as_str) == Some(manager)
        && made_for_it
}

/// Whose `deployment` is, for the error that says it is not ours.
fn whose(deployment: &Deployment) -> String {
    let owners = deployment.owner_references();
    match owners.iter().find(|o| o.controller == Some(true)) {
        Some(owner) => format!("is controlled by {} {}", owner.kind, owner.name),
        None => "exists and has no controller".to_owned(),
    }
}

/// Publishes a Normal Event about the Deployment of `obj`.
async fn publish(ctx: &Context, obj: &v1alpha1::Memcached, reason: &str, note: String) {
    let event = Event {
        type_: EventType::Normal,
        reason: reason.into(),
        note: Some(note),
        action: "Reconcile".into(),
        secondary: None,
    };
    ctx.publish(obj, event).await;
}

/// The labels selecting the pods of the Deployment of `name`. (A Deployment's selector cannot
/// change, so neither can these.)
fn selector_labels(name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), APP_NAME.to_owned()),
        ("app.kubernetes.io/instance".to_owned(), name.to_owned()),
    ])
}

/// The Deployment that runs `obj`: same name and namespace, owned by it, labelled as managed
/// by `manager` (the operator's field manager).
pub fn deployment(obj: &v1alpha1::Memcached, manager: &str) -> Result<Deployment, Error> {
    let name = obj
        .meta()
        .name
        .clone()
        .ok_or(Error::MissingObjectKey("name"))?;
    // `blockOwnerDeletion`: foreground deletion of the Memcached waits for the
    // Deployment.
    let owner = OwnerReference {
        block_owner_deletion: Some(true),
        ..obj
            .controller_owner_ref(&())
            .ok_or(Error::MissingObjectKey("uid"))?
    };
    let selector = selector_labels(&name);
    let mut labels = selector.clone();
    labels.insert(MANAGED_BY.to_owned(), manager.to_owned());
    let seccomp = || SeccompProfile {
        type_: "RuntimeDefault".into(),
        ..SeccompProfile::default()
    };
    let command = CONTAINER_COMMAND
        .iter()
        .map(|arg| arg.to_string())
        .collect::<Vec<_>>();
    let ports = Some(obj.spec.container_port).map(|port| {
        vec![ContainerPort {
            name: Some(PORT_NAME.into()),
            container_port: port,
            protocol: Some("TCP".into()),
            ..ContainerPort::default()
        }]
    });

    Ok(Deployment {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: obj.namespace(),
            labels: Some(labels.clone()),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            // Unset: not applied, so that whoever scales the Deployment owns the field.
            replicas: obj.spec.size,
            selector: LabelSelector {
                match_labels: Some(selector),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    // The "restricted" Pod Security Standard.
                    security_context: Some(PodSecurityContext {
                        run_as_non_root: Some(true),
                        run_as_user: RUN_AS_USER,
                        seccomp_profile: Some(seccomp()),
                        ..PodSecurityContext::default()
                    }),
                    containers: vec![Container {
                        name: APP_NAME.into(),
                        image: Some(operand_image()),
                        image_pull_policy: Some("IfNotPresent".into()),
                        command: (!command.is_empty()).then_some(command),
                        ports,
                        security_context: Some(SecurityContext {
                            run_as_non_root: Some(true),
                            run_as_user: RUN_AS_USER,
                            allow_privilege_escalation: Some(false),
                            // Not readOnlyRootFilesystem: the restricted standard does not
                            // ask for it, and many images write to /tmp or a cache folder.
                            capabilities: Some(Capabilities {
                                drop: Some(vec!["ALL".into()]),
                                ..Capabilities::default()
                            }),
                            seccomp_profile: Some(seccomp()),
                            ..SecurityContext::default()
                        }),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    })
}

/// The status of `obj` as shown by its Deployment: `Available` mirrors the Deployment's own
/// condition, `Progressing` is `True` while a rollout is under way, `Degraded` is `True` when the
/// rollout is stuck (deadline exceeded, or pods cannot be created).
pub fn status(obj: &v1alpha1::Memcached, deployment: &Deployment) -> v1alpha1::MemcachedStatus {
    let current = obj
        .status
        .as_ref()
        .map(|status| status.conditions.as_slice())
        .unwrap_or_default();
    let generation = obj.metadata.generation;
    let observed = deployment.status.clone().unwrap_or_default();
    let deployment_condition = |type_: &str| {
        observed
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_.as_deref() == Some(type_))
    };
    // Kubernetes' default, when neither the Memcached nor an autoscaler sets it.
    let wanted = deployment.spec.replicas.unwrap_or(1);
    let ready = observed.ready_replicas.unwrap_or(0);
    let summary = format!("{ready}/{wanted} replicas ready");

    let available = match deployment_condition("Available") {
        Some(c) => condition(
            current,
            "Available",
            c.status.as_deref().unwrap_or("Unknown"),
            c.reason.as_deref().unwrap_or("Deployment"),
            c.message.clone().unwrap_or_default(),
            generation,
        ),
        None => condition(
            current,
            "Available",
            "Unknown",
            "Pending",
            "Waiting for the Deployment to report its state",
            generation,
        ),
    };

    // The rollout is complete when the Deployment controller has seen the latest spec and all
    // replicas run it and are available (what `kubectl rollout status` waits for).
    let rolled_out = observed.observed_generation >= deployment.metadata.generation
        && observed.updated_replicas.unwrap_or(0) == wanted
        && observed.available_replicas.unwrap_or(0) == wanted
        && observed.replicas.unwrap_or(0) == wanted;
    let progressing = if rolled_out {
        condition(
            current,
            "Progressing",
            "False",
            "RolloutComplete",
            summary,
            generation,
        )
    } else {
        condition(
            current,
            "Progressing",
            "True",
            "RollingOut",
            summary,
            generation,
        )
    };

    let stuck = deployment_condition("ReplicaFailure")
        .filter(|c| c.status.as_deref() == Some("True"))
        .or_else(|| {
            deployment_condition("Progressing")
                .filter(|c| c.reason.as_deref() == Some("ProgressDeadlineExceeded"))
        });
    let degraded = match stuck {
        Some(c) => condition(
            current,
            "Degraded",
            "True",
            c.reason.as_deref().unwrap_or("DeploymentFailed"),
            c.message.clone().unwrap_or_default(),
            generation,
        ),
        None => condition(current, "Degraded", "False", "AsExpected", "", generation),
    };

    v1alpha1::MemcachedStatus {
        conditions: vec![available, progressing, degraded],
    }
}

/// The status of `obj` when its Deployment is someone else's: not available, degraded, for
/// the current generation.
fn refused_status(obj: &v1alpha1::Memcached, error: &Error) -> v1alpha1::MemcachedStatus {
    let current = obj
        .status
        .as_ref()
        .map(|status| status.conditions.as_slice())
        .unwrap_or_default();
    let generation = obj.metadata.generation;
    let message = error.to_string();
    v1alpha1::MemcachedStatus {
        conditions: vec![
            condition(
                current,
                "Available",
                "False",
                "DeploymentTaken",
                &message,
                generation,
            ),
            condition(
                current,
                "Progressing",
                "False",
                "DeploymentTaken",
                &message,
                generation,
            ),
            condition(
                current,
                "Degraded",
                "True",
                "DeploymentTaken",
                message,
                generation,
            ),
        ],
    }
}
