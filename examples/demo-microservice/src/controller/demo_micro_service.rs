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
//! The Deployment is owned by the DemoMicroService (controller owner reference) and watched, so
//! a Deployment that is deleted, or whose fields set here are edited by hand, is put back at once.
//! A Deployment of the same name that the DemoMicroService does not control is never touched.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, PodSecurityContext, PodSpec, PodTemplateSpec,
    SeccompProfile, SecurityContext,
};
use k8s_openapi::api::rbac::v1::PolicyRule;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use kube::api::{DeleteParams, Patch, PatchParams, Preconditions};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType};
use kube::runtime::finalizer::{self, finalizer};
use kube::runtime::watcher;
use kube::{Api, Resource, ResourceExt};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use tracing::info;

use super::{ControllerDescriptor, condition, policy_rule};
use crate::api::v1;
use crate::{Context, OPERATOR_NAME};

/// The name of this controller in logs and metrics.
pub const NAME: &str = "demomicroservice";

/// Registers this controller: listed in `CONTROLLERS` in `src/controller/mod.rs`.
pub const CONTROLLER: ControllerDescriptor = ControllerDescriptor {
    name: NAME,
    run: |ctx, shutdown| Box::pin(run(ctx, shutdown)),
    rbac_rules,
};

/// Held on every DemoMicroService so that [`cleanup`] runs before it is deleted.
const FINALIZER: &str = "devops.my.domain/finalizer";

/// The user id the container runs as; `None` keeps the image's own (non-root) user.
/// Needed when the image names its user rather than giving a numeric id, as Kubernetes can only
/// check a numeric user against `runAsNonRoot`.
const RUN_AS_USER: Option<i64> = Some(1001);

/// The container's command; empty keeps the image's entrypoint.
const CONTAINER_COMMAND: &[&str] = &[];

/// Labels the Deployment as this operator's: the controller watches only Deployments with it.
const MANAGED_BY: &str = "app.kubernetes.io/managed-by";

/// When to retry a failed reconcile. A fixed delay keeps this simple; watch events still
/// trigger a reconcile right away, so a fix made by the user is picked up without waiting.
const ERROR_REQUEUE_AFTER: Duration = Duration::from_secs(15);

/// When to reconcile again after a success, even without a change: a safety net against missed
/// watch events.
const RESYNC_AFTER: Duration = Duration::from_secs(60 * 60);

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    // Transparent: the error's own message says it all, and reporters that walk the
    // source chain do not print it twice.
    #[error(transparent)]
    Kube(#[from] kube::Error),

    #[error(transparent)]
    Finalizer(Box<finalizer::Error<Error>>),

    #[error("object has no {0}")]
    MissingObjectKey(&'static str),

    #[error("Deployment {name} {whose}: rename the DemoMicroService or delete that Deployment")]
    DeploymentTaken { name: String, whose: String },
}

/// The RBAC rules this controller needs.
pub fn rbac_rules() -> Vec<PolicyRule> {
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
            &[
                // create: a server-side apply that creates the Deployment is authorized as create.
                "get", "list", "watch", "create", "patch", "delete",
            ],
        ),
        policy_rule("events.k8s.io", &["events"], &["create", "patch"]),
    ]
}

/// Runs the controller until `shutdown` is cancelled.
async fn run(ctx: Arc<Context>, shutdown: CancellationToken) -> Result<(), kube::Error> {
    let api = ctx.api::<v1::DemoMicroService>();
    super::check_api(&api).await?;
    // Watch only the Deployments this operator manages, not every Deployment in the cluster.
    let managed = watcher::Config::default().labels(&format!("{MANAGED_BY}={OPERATOR_NAME}"));
    info!(controller = NAME, "starting");
    Controller::new(api, watcher::Config::default())
        .owns(ctx.api::<Deployment>(), managed)
        .graceful_shutdown_on(shutdown.cancelled_owned())
        .run(reconcile, error_policy, ctx)
        .for_each(|result| async move { super::log_result(NAME, result) })
        .await;
    Ok(())
}

/// Called for every change of a DemoMicroService or of its Deployment: adds the finalizer,
/// then runs [`apply`], or [`cleanup`] once the DemoMicroService is being deleted.
async fn reconcile(obj: Arc<v1::DemoMicroService>, ctx: Arc<Context>) -> Result<Action, Error> {
    let started = Instant::now();
    let result = reconcile_with_finalizer(obj.clone(), &ctx).await;
    ctx.metrics
        .observe_reconcile(NAME, started.elapsed(), result.is_ok());
    if let Err(error) = &result {
        super::publish(&ctx, NAME, obj.as_ref(), super::failure_event(error)).await;
    }
    result
}

async fn reconcile_with_finalizer(
    obj: Arc<v1::DemoMicroService>,
    ctx: &Context,
) -> Result<Action, Error> {
    let namespace = obj
        .namespace()
        .ok_or(Error::MissingObjectKey("namespace"))?;
    let api: Api<v1::DemoMicroService> = Api::namespaced(ctx.client.clone(), &namespace);
    let deployments: Api<Deployment> = Api::namespaced(ctx.client.clone(), &namespace);
    finalizer(&api, FINALIZER, obj, |event| async {
        match event {
            finalizer::Event::Apply(obj) => apply(&obj, &api, &deployments, ctx).await,
            finalizer::Event::Cleanup(obj) => cleanup(&obj, &deployments, ctx).await,
        }
    })
    .await
    .map_err(|error| Error::Finalizer(Box::new(error)))
}

/// Applies the Deployment, then copies its state into the status.
async fn apply(
    obj: &v1::DemoMicroService,
    api: &Api<v1::DemoMicroService>,
    deployments: &Api<Deployment>,
    ctx: &Context,
) -> Result<Action, Error> {
    let name = obj.name_any();
    let desired = deployment(obj)?;
    let existing = deployments.get_opt(&name).await?;
    // Never take over a Deployment this DemoMicroService does not control, even one without
    // an owner: it would then be deleted with the DemoMicroService. Say whose it is instead.
    if let Some(existing) = &existing
        && !is_controlled_by(existing, obj)
    {
        let whose = match existing
            .owner_references()
            .iter()
            .find(|o| o.controller == Some(true))
        {
            Some(owner) => format!("is controlled by {} {}", owner.kind, owner.name),
            None => "exists and was not created by this DemoMicroService".to_owned(),
        };
        return Err(Error::DeploymentTaken { name, whose });
    }
    // Server-side apply: the fields set here are forced back to these values (fields that
    // others set, e.g. an added env var, stay theirs); unchanged content changes nothing.
    let params = PatchParams::apply(OPERATOR_NAME).force();
    let applied = deployments
        .patch(&name, &params, &Patch::Apply(&desired))
        .await?;

    // Only a spec change bumps the generation: that is what deserves an Event.
    let reason = match existing {
        None => Some("Created"),
        Some(old) if old.metadata.generation != applied.metadata.generation => Some("Updated"),
        Some(_) => None,
    };
    if let Some(reason) = reason {
        let event = deployment_event(reason, format!("{reason} Deployment {name}"));
        super::publish(ctx, NAME, obj, event).await;
    }

    let patch = json!({
        "apiVersion": v1::DemoMicroService::api_version(&()),
        "kind": v1::DemoMicroService::kind(&()),
        "status": status(obj, &applied),
    });
    api.patch_status(&name, &params, &Patch::Apply(patch))
        .await?;
    Ok(Action::requeue(RESYNC_AFTER))
}

/// Runs while a deleted DemoMicroService is still held by the finalizer: deletes its Deployment
/// (instead of leaving it to the garbage collector, so that the Deployment object is gone
/// before the DemoMicroService is; its ReplicaSets and Pods follow in the background). The
/// finalizer is removed once this succeeds.
async fn cleanup(
    obj: &v1::DemoMicroService,
    deployments: &Api<Deployment>,
    ctx: &Context,
) -> Result<Action, Error> {
    let name = obj.name_any();
    // Only the Deployment this DemoMicroService controls, and only that very object (the uid
    // precondition): one of the same name that belongs to someone else stays.
    let Some(deployment) = deployments.get_opt(&name).await? else {
        return Ok(Action::await_change());
    };
    if !is_controlled_by(&deployment, obj) {
        return Ok(Action::await_change());
    }
    let event = deployment_event("Deleting", format!("Deleting Deployment {name}"));
    super::publish(ctx, NAME, obj, event).await;
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: deployment.uid(),
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match deployments.delete(&name, &params).await {
        Ok(_) => {}
        // Already gone (404), or replaced by another object of that name (409): not ours.
        Err(kube::Error::Api(status)) if status.is_not_found() || status.code == 409 => {}
        Err(error) => return Err(error.into()),
    }
    Ok(Action::await_change())
}

/// Whether `obj` is the controller owner of `deployment`.
fn is_controlled_by(deployment: &Deployment, obj: &v1::DemoMicroService) -> bool {
    let uid = obj.uid();
    deployment
        .owner_references()
        .iter()
        .any(|o| o.controller == Some(true) && Some(&o.uid) == uid.as_ref())
}

/// A Normal Event about the Deployment.
fn deployment_event(reason: &str, note: String) -> Event {
    Event {
        type_: EventType::Normal,
        reason: reason.into(),
        note: Some(note),
        action: "Reconcile".into(),
        secondary: None,
    }
}

/// Decides when to retry a failed reconcile (the error itself is logged by the controller loop).
fn error_policy(_obj: Arc<v1::DemoMicroService>, _error: &Error, _ctx: Arc<Context>) -> Action {
    Action::requeue(ERROR_REQUEUE_AFTER)
}

/// The labels selecting the pods of the Deployment of `name`. (A Deployment's selector cannot
/// change, so neither can these.)
fn selector_labels(name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "app.kubernetes.io/name".to_owned(),
            "demomicroservice".to_owned(),
        ),
        ("app.kubernetes.io/instance".to_owned(), name.to_owned()),
    ])
}

/// The Deployment that runs `obj`: same name and namespace, owned by it.
pub fn deployment(obj: &v1::DemoMicroService) -> Result<Deployment, Error> {
    let name = obj
        .meta()
        .name
        .clone()
        .ok_or(Error::MissingObjectKey("name"))?;
    // `blockOwnerDeletion`: foreground deletion of the DemoMicroService waits for the Deployment.
    let owner = OwnerReference {
        block_owner_deletion: Some(true),
        ..obj
            .controller_owner_ref(&())
            .ok_or(Error::MissingObjectKey("uid"))?
    };
    let selector = selector_labels(&name);
    let mut labels = selector.clone();
    labels.insert(MANAGED_BY.to_owned(), OPERATOR_NAME.to_owned());
    let seccomp = || SeccompProfile {
        type_: "RuntimeDefault".into(),
        ..SeccompProfile::default()
    };
    let command = CONTAINER_COMMAND
        .iter()
        .map(|arg| arg.to_string())
        .collect::<Vec<_>>();

    Ok(Deployment {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: obj.namespace(),
            labels: Some(labels.clone()),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: Some(
                obj.spec
                    .replicas
                    .unwrap_or(v1::DemoMicroServiceSpec::DEFAULT_REPLICAS),
            ),
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
                        name: "demomicroservice".into(),
                        image: Some(obj.spec.image.clone()),
                        image_pull_policy: Some("IfNotPresent".into()),
                        command: (!command.is_empty()).then_some(command),
                        ports: Some(vec![ContainerPort {
                            name: Some("http".into()),
                            container_port: obj
                                .spec
                                .port
                                .unwrap_or(v1::DemoMicroServiceSpec::DEFAULT_PORT),
                            protocol: Some("TCP".into()),
                            ..ContainerPort::default()
                        }]),
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
pub fn status(obj: &v1::DemoMicroService, deployment: &Deployment) -> v1::DemoMicroServiceStatus {
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
    let wanted = deployment
        .spec
        .replicas
        .unwrap_or(v1::DemoMicroServiceSpec::DEFAULT_REPLICAS);
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

    v1::DemoMicroServiceStatus {
        conditions: vec![available, progressing, degraded],
        ready_replicas: Some(ready),
        observed_generation: generation,
    }
}

#[cfg(test)]
mod tests {
    use http::Method;
    use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentStatus};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;
    use serde_json::Value;

    use super::*;
    use crate::metrics::Metrics;
    use crate::testing::{ApiServer, mock_client, status_error, within_timeout};

    const PATH: &str = "/apis/devops.my.domain/v1/namespaces/default/demomicroservices/test";
    const DEPLOYMENT_PATH: &str = "/apis/apps/v1/namespaces/default/deployments/test";
    const EVENTS_PATH: &str = "/apis/events.k8s.io/v1/namespaces/default/events";

    fn test_object(image: &str) -> v1::DemoMicroService {
        let spec = v1::DemoMicroServiceSpec {
            image: image.into(),
            replicas: Some(2),
            port: Some(8080),
        };
        let mut obj = v1::DemoMicroService::new("test", spec);
        obj.metadata.namespace = Some("default".into());
        obj.metadata.uid = Some("1234".into());
        obj.metadata.generation = Some(3);
        obj.metadata.finalizers = Some(vec![FINALIZER.into()]);
        obj
    }

    fn with_generation(mut deployment: Deployment, generation: i64) -> Deployment {
        deployment.metadata.generation = Some(generation);
        deployment
    }

    fn context() -> (Arc<Context>, ApiServer) {
        let (client, server) = mock_client();
        (
            Arc::new(Context::new(client, Metrics::default(), None)),
            server,
        )
    }

    /// Runs `reconcile` on `obj` against `script`, which plays the API server.
    async fn reconcile_with<F>(
        obj: v1::DemoMicroService,
        script: impl FnOnce(ApiServer) -> F,
    ) -> Result<Action, Error>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let (ctx, server) = context();
        let server = tokio::spawn(script(server));
        let result = within_timeout(reconcile(Arc::new(obj), ctx)).await;
        server.await.expect("API server script");
        result
    }

    fn container(deployment: &Value) -> &Value {
        &deployment["spec"]["template"]["spec"]["containers"][0]
    }

    #[tokio::test]
    async fn a_new_service_gets_the_finalizer() {
        let mut new = test_object("podinfo:1");
        new.metadata.finalizers = None;
        let stored = json!(test_object("podinfo:1"));
        reconcile_with(new, |mut server| async move {
            let patch = server.expect(Method::PATCH, PATH, 200, stored).await;
            assert_eq!(patch[1]["op"], "add");
            assert_eq!(patch[1]["value"], json!([FINALIZER]));
        })
        .await
        .expect("reconcile");
    }

    #[test]
    fn the_deployment_runs_the_image_as_specified() {
        let deployment = deployment(&test_object("podinfo:1")).expect("deployment");
        let deployment = json!(deployment);
        assert_eq!(deployment["metadata"]["name"], "test");
        assert_eq!(deployment["metadata"]["namespace"], "default");
        assert_eq!(deployment["spec"]["replicas"], 2);

        let labels = json!({
            "app.kubernetes.io/name": "demomicroservice",
            "app.kubernetes.io/instance": "test",
            "app.kubernetes.io/managed-by": OPERATOR_NAME,
        });
        assert_eq!(deployment["metadata"]["labels"], labels);
        assert_eq!(deployment["spec"]["template"]["metadata"]["labels"], labels);
        let selector = &deployment["spec"]["selector"]["matchLabels"];
        assert_eq!(selector["app.kubernetes.io/instance"], "test");

        let owner = &deployment["metadata"]["ownerReferences"][0];
        assert_eq!(owner["kind"], "DemoMicroService");
        assert_eq!(owner["apiVersion"], "devops.my.domain/v1");
        assert_eq!(owner["uid"], "1234");
        assert_eq!(owner["controller"], true);
        assert_eq!(owner["blockOwnerDeletion"], true);

        let container = container(&deployment);
        assert_eq!(container["image"], "podinfo:1");
        assert_eq!(
            container["ports"],
            json!([{"name": "http", "containerPort": 8080, "protocol": "TCP"}])
        );
        let security = &container["securityContext"];
        assert_eq!(security["runAsNonRoot"], true);
        assert_eq!(security["allowPrivilegeEscalation"], false);
        assert_eq!(security["capabilities"]["drop"], json!(["ALL"]));
        assert_eq!(security["seccompProfile"]["type"], "RuntimeDefault");
    }

    #[tokio::test]
    async fn a_missing_deployment_is_created() {
        reconcile_with(test_object("podinfo:1"), |mut server| async move {
            let not_found = status_error(404, "NotFound");
            server
                .expect(Method::GET, DEPLOYMENT_PATH, 404, not_found)
                .await;
            let applied = server.echo(Method::PATCH, DEPLOYMENT_PATH).await;
            assert_eq!(container(&applied)["image"], "podinfo:1");
            let event = server.echo(Method::POST, EVENTS_PATH).await;
            assert_eq!(event["reason"], "Created");
            let stored = json!(test_object("podinfo:1"));
            server
                .expect(Method::PATCH, &format!("{PATH}/status"), 200, stored)
                .await;
        })
        .await
        .expect("reconcile");
    }

    #[tokio::test]
    async fn a_changed_image_is_applied() {
        let old = with_generation(deployment(&test_object("podinfo:1")).expect("old"), 1);
        let new = with_generation(deployment(&test_object("podinfo:2")).expect("new"), 2);
        let action = reconcile_with(test_object("podinfo:2"), |mut server| async move {
            server
                .expect(Method::GET, DEPLOYMENT_PATH, 200, json!(old))
                .await;
            let applied = server
                .expect(Method::PATCH, DEPLOYMENT_PATH, 200, json!(new))
                .await;
            assert_eq!(container(&applied)["image"], "podinfo:2");
            let event = server.echo(Method::POST, EVENTS_PATH).await;
            assert_eq!(event["reason"], "Updated");
            let stored = json!(test_object("podinfo:2"));
            let status = server
                .expect(Method::PATCH, &format!("{PATH}/status"), 200, stored)
                .await;
            assert_eq!(status["status"]["observedGeneration"], 3);
        })
        .await
        .expect("reconcile");
        assert_eq!(action, Action::requeue(RESYNC_AFTER));
    }

    /// A DemoMicroService being deleted, and what the API server stores once its
    /// finalizer is removed.
    fn deleted_object() -> (v1::DemoMicroService, v1::DemoMicroService) {
        let mut deleted = test_object("podinfo:1");
        deleted.metadata.deletion_timestamp = Some(Time(Timestamp::now()));
        let mut stored = deleted.clone();
        stored.metadata.finalizers = None;
        (deleted, stored)
    }

    /// The Deployment of `test_object`, as stored by the API server.
    fn stored_deployment() -> Deployment {
        let mut deployment = deployment(&test_object("podinfo:1")).expect("deployment");
        deployment.metadata.uid = Some("d-1".into());
        deployment
    }

    /// The same Deployment, controlled by another object (`None`: by none).
    fn deployment_of(owner_uid: Option<&str>) -> Deployment {
        let mut deployment = stored_deployment();
        deployment.metadata.owner_references = owner_uid.map(|uid| {
            let owners = deployment.metadata.owner_references.unwrap_or_default();
            owners
                .into_iter()
                .map(|owner| OwnerReference {
                    uid: uid.into(),
                    ..owner
                })
                .collect()
        });
        deployment
    }

    async fn expect_finalizer_removed(server: &mut ApiServer, stored: v1::DemoMicroService) {
        let patch = server.expect(Method::PATCH, PATH, 200, json!(stored)).await;
        assert_eq!(
            patch[1],
            json!({"op": "remove", "path": "/metadata/finalizers/0"})
        );
    }

    #[tokio::test]
    async fn deletion_deletes_the_deployment_then_removes_the_finalizer() {
        let (deleted, stored) = deleted_object();
        let deployment = json!(stored_deployment());
        reconcile_with(deleted, |mut server| async move {
            server
                .expect(Method::GET, DEPLOYMENT_PATH, 200, deployment.clone())
                .await;
            let event = server.echo(Method::POST, EVENTS_PATH).await;
            assert_eq!(event["reason"], "Deleting");
            let delete = server
                .expect(Method::DELETE, DEPLOYMENT_PATH, 200, deployment)
                .await;
            // Only that very Deployment, not one created in its place meanwhile.
            assert_eq!(delete["preconditions"]["uid"], "d-1");
            expect_finalizer_removed(&mut server, stored).await;
        })
        .await
        .expect("reconcile");
    }

    #[tokio::test]
    async fn deletion_leaves_a_deployment_it_does_not_control() {
        for owner in [Some("5678"), None] {
            let (deleted, stored) = deleted_object();
            let theirs = json!(deployment_of(owner));
            reconcile_with(deleted, |mut server| async move {
                server
                    .expect(Method::GET, DEPLOYMENT_PATH, 200, theirs)
                    .await;
                expect_finalizer_removed(&mut server, stored).await;
            })
            .await
            .expect("reconcile");
        }
    }

    #[tokio::test]
    async fn a_deployment_it_does_not_control_is_left_alone() {
        for (owner, says) in [
            (Some("5678"), "is controlled by"),
            (None, "was not created by this"),
        ] {
            let theirs = json!(deployment_of(owner));
            let result = reconcile_with(test_object("podinfo:1"), |mut server| async move {
                server
                    .expect(Method::GET, DEPLOYMENT_PATH, 200, theirs)
                    .await;
                let event = server.echo(Method::POST, EVENTS_PATH).await;
                assert_eq!(event["type"], "Warning");
                assert_eq!(event["reason"], "ReconcileFailed");
                assert!(event["note"].as_str().expect("note").contains(says));
            })
            .await;
            let error = result.expect_err("reconcile must fail");
            assert!(error.to_string().contains(says), "{error}");
        }
    }

    #[tokio::test]
    async fn an_api_error_fails_the_reconcile_and_is_retried() {
        let result = reconcile_with(test_object("podinfo:1"), |mut server| async move {
            let error = status_error(500, "InternalError");
            server
                .expect(Method::GET, DEPLOYMENT_PATH, 500, error)
                .await;
            let event = server.echo(Method::POST, EVENTS_PATH).await;
            assert_eq!(event["type"], "Warning");
        })
        .await;
        let error = result.expect_err("reconcile must fail");
        assert!(
            error.to_string().contains("mocked InternalError"),
            "{error}"
        );

        let (ctx, _server) = context();
        let action = error_policy(Arc::new(test_object("podinfo:1")), &error, ctx);
        assert_eq!(action, Action::requeue(ERROR_REQUEUE_AFTER));
    }

    fn deployment_condition(type_: &str, status: &str, reason: &str) -> DeploymentCondition {
        DeploymentCondition {
            type_: Some(type_.into()),
            status: Some(status.into()),
            reason: Some(reason.into()),
            ..DeploymentCondition::default()
        }
    }

    fn condition_status<'a>(status: &'a v1::DemoMicroServiceStatus, type_: &str) -> &'a str {
        let condition = status.conditions.iter().find(|c| c.type_ == type_);
        condition.map(|c| c.status.as_str()).expect(type_)
    }

    #[test]
    fn status_reflects_a_rolled_out_deployment() {
        let obj = test_object("podinfo:1");
        let mut deployment = with_generation(deployment(&obj).expect("deployment"), 1);
        deployment.status = Some(DeploymentStatus {
            observed_generation: Some(1),
            replicas: Some(2),
            updated_replicas: Some(2),
            ready_replicas: Some(2),
            available_replicas: Some(2),
            conditions: Some(vec![
                deployment_condition("Available", "True", "MinimumReplicasAvailable"),
                deployment_condition("Progressing", "True", "NewReplicaSetAvailable"),
            ]),
            ..DeploymentStatus::default()
        });

        let status = status(&obj, &deployment);
        assert_eq!(status.ready_replicas, Some(2));
        assert_eq!(status.observed_generation, Some(3));
        assert_eq!(condition_status(&status, "Available"), "True");
        assert_eq!(condition_status(&status, "Progressing"), "False");
        assert_eq!(condition_status(&status, "Degraded"), "False");
    }

    #[test]
    fn status_reflects_a_stuck_rollout() {
        let obj = test_object("podinfo:404");
        let mut deployment = with_generation(deployment(&obj).expect("deployment"), 2);
        deployment.status = Some(DeploymentStatus {
            observed_generation: Some(2),
            replicas: Some(3),
            updated_replicas: Some(1),
            ready_replicas: Some(2),
            available_replicas: Some(2),
            conditions: Some(vec![
                deployment_condition("Available", "True", "MinimumReplicasAvailable"),
                deployment_condition("Progressing", "False", "ProgressDeadlineExceeded"),
            ]),
            ..DeploymentStatus::default()
        });

        let status = status(&obj, &deployment);
        assert_eq!(status.ready_replicas, Some(2));
        assert_eq!(condition_status(&status, "Progressing"), "True");
        assert_eq!(condition_status(&status, "Degraded"), "True");
        let degraded = status.conditions.iter().find(|c| c.type_ == "Degraded");
        assert_eq!(
            degraded.map(|c| c.reason.as_str()),
            Some("ProgressDeadlineExceeded")
        );
    }
}
