// Copyright 2026 The kind-names Authors.
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

//! Unit tests of the ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsToo controller, against a mocked API server: each test
//! fills the controller's cache of Deployments, and scripts the requests the controller must
//! send and the API server's answers.

use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry, Time};
use k8s_openapi::jiff::Timestamp;
use rbuilder_runtime::testing::{ApiServer, Method, mock_context, status_error, within_timeout};
use serde_json::{Value, json};

use super::*;

/// The reconciler under test.
type Tested = ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsTooReconciler;

const PATH: &str = "/apis/devops.my.domain/v1beta1/namespaces/default/extraordinarilylongdeployimagekindnamethatfitsthelimitstoos/test";
const DEPLOYMENT: &str = "/apis/apps/v1/namespaces/default/deployments/test";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/default/events";
/// The field manager of `mock_context`'s operator.
const MANAGER: &str = "test-operator";
/// The controller's finalizer.
const FINALIZER: &str = "devops.my.domain/finalizer";

fn test_object(image: &str) -> v1beta1::ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsToo {
    let spec = v1beta1::ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsTooSpec {
        image: image.into(),
        replicas: Some(2),
        port: Some(8080),
    };
    let mut obj =
        v1beta1::ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsToo::new("test", spec);
    obj.metadata.namespace = Some("default".into());
    obj.metadata.uid = Some("1234".into());
    obj.metadata.generation = Some(3);
    obj
}

/// The Deployment of `obj` as the API server stores it.
fn stored(
    obj: &v1beta1::ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsToo,
    generation: i64,
) -> Deployment {
    let mut deployment = deployment(obj, MANAGER).expect("deployment");
    deployment.metadata.uid = Some("d-1".into());
    deployment.metadata.generation = Some(generation);
    deployment.metadata.resource_version = Some("41".into());
    deployment
}

/// The same Deployment, controlled by another object (`None`: by none).
fn deployment_of(owner_uid: Option<&str>) -> Deployment {
    let mut deployment = stored(&test_object("podinfo:1"), 1);
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

/// A Deployment of the same name that this operator did not make: no labels of its own.
fn someone_elses(owner_uid: Option<&str>) -> Deployment {
    let mut deployment = deployment_of(owner_uid);
    deployment.metadata.labels = None;
    deployment
}

/// Runs `apply` (or `cleanup`, with `deleting`) on `obj` against `script`, which plays
/// the API server, with `cached` in the controller's cache of Deployments (the watch's cache
/// holds only those labelled as this operator's).
async fn reconcile_with<F>(
    obj: v1beta1::ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsToo,
    deleting: bool,
    cached: Option<Deployment>,
    script: impl FnOnce(ApiServer) -> F,
) -> Result<Action, Error>
where
    F: Future<Output = ()> + Send + 'static,
{
    let (ctx, server) = mock_context();
    ctx.cache_of(cached);
    let server = tokio::spawn(script(server));
    let obj = Arc::new(obj);
    let result = if deleting {
        within_timeout(Tested::cleanup(obj, ctx)).await
    } else {
        within_timeout(Tested::apply(obj, ctx)).await
    };
    server.await.expect("API server script");
    result
}

fn container(deployment: &Value) -> &Value {
    &deployment["spec"]["template"]["spec"]["containers"][0]
}

#[test]
fn the_deployment_runs_the_image_as_specified() {
    let deployment = json!(deployment(&test_object("podinfo:1"), MANAGER).expect("deployment"));
    assert_eq!(deployment["metadata"]["name"], "test");
    assert_eq!(deployment["metadata"]["namespace"], "default");
    assert_eq!(deployment["spec"]["replicas"], 2);

    let labels = json!({
        "app.kubernetes.io/name": "extraordinarilylongdeployimagekindnamethatfitsthelimitstoo",
        "app.kubernetes.io/instance": "test",
        "app.kubernetes.io/managed-by": MANAGER,
    });
    assert_eq!(deployment["metadata"]["labels"], labels);
    assert_eq!(deployment["spec"]["template"]["metadata"]["labels"], labels);
    let selector = &deployment["spec"]["selector"]["matchLabels"];
    assert_eq!(selector["app.kubernetes.io/instance"], "test");

    let owner = &deployment["metadata"]["ownerReferences"][0];
    let kind = v1beta1::ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsToo::kind(&());
    assert_eq!(owner["kind"], kind.as_ref());
    let api_version =
        v1beta1::ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsToo::api_version(&());
    assert_eq!(owner["apiVersion"], api_version.as_ref());
    assert_eq!(owner["uid"], "1234");
    assert_eq!(owner["controller"], true);
    assert_eq!(owner["blockOwnerDeletion"], true);

    let container = container(&deployment);
    assert_eq!(container["image"], "podinfo:1");
    assert_eq!(
        container["ports"],
        json!([{"name": PORT_NAME, "containerPort": 8080, "protocol": "TCP"}])
    );
    let security = &container["securityContext"];
    assert_eq!(security["runAsNonRoot"], true);
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(security["capabilities"]["drop"], json!(["ALL"]));
    assert_eq!(security["seccompProfile"]["type"], "RuntimeDefault");
}

/// With `spec.replicas` unset, the apply leaves the field out, so that a
/// HorizontalPodAutoscaler or `kubectl scale` owns it and the operator never takes it back.
#[test]
fn unset_replicas_are_left_to_whoever_scales_the_deployment() {
    let mut obj = test_object("podinfo:1");
    obj.spec.replicas = None;
    let deployment = json!(deployment(&obj, MANAGER).expect("deployment"));
    assert!(deployment["spec"].get("replicas").is_none(), "{deployment}");
}

/// Created by a server-side apply, as every later change is: one entry of the operator owns
/// the Deployment's fields.
#[tokio::test]
async fn a_missing_deployment_is_created_by_an_apply() {
    let obj = test_object("podinfo:1");
    reconcile_with(obj, false, None, |mut server| async move {
        // Not in the cache: read, to tell it from a Deployment that someone else made.
        let not_found = status_error(404, "NotFound");
        server.expect(Method::GET, DEPLOYMENT, 404, not_found).await;
        let created = server.echo(Method::PATCH, DEPLOYMENT).await;
        assert_eq!(container(&created)["image"], "podinfo:1");
        // No uid: there is no Deployment to name.
        assert!(created["metadata"].get("uid").is_none(), "{created}");
        let event = server.echo(Method::POST, EVENTS).await;
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
async fn a_changed_image_is_applied_to_that_very_deployment() {
    let old = stored(&test_object("podinfo:1"), 1);
    let new = stored(&test_object("podinfo:2"), 2);
    let obj = test_object("podinfo:2");
    let action = reconcile_with(obj, false, Some(old), |mut server| async move {
        // Read from the cache: the apply is the first request.
        let applied = server
            .expect(Method::PATCH, DEPLOYMENT, 200, json!(new))
            .await;
        assert_eq!(container(&applied)["image"], "podinfo:2");
        // The uid and resourceVersion of the Deployment read: the API server refuses the apply
        // if it was replaced, or changed since the cache saw it.
        assert_eq!(applied["metadata"]["uid"], "d-1");
        assert_eq!(applied["metadata"]["resourceVersion"], "41");
        let event = server.echo(Method::POST, EVENTS).await;
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

/// A Deployment changed since the cache showed it: the apply, made to it as cached, is refused,
/// and the reconcile tried again shortly, without a failure.
#[tokio::test]
async fn an_apply_to_a_deployment_changed_since_is_tried_again() {
    let old = stored(&test_object("podinfo:1"), 1);
    let obj = test_object("podinfo:2");
    let action = reconcile_with(obj, false, Some(old), |mut server| async move {
        let error = status_error(409, "Conflict");
        let applied = server.expect(Method::PATCH, DEPLOYMENT, 409, error).await;
        assert_eq!(applied["metadata"]["resourceVersion"], "41");
    })
    .await
    .expect("no failure");
    assert_eq!(action, Action::requeue(STALE_RETRY));
}

/// The Deployment of `obj` as this controller's last apply left it (marked with its hash),
/// with what the API server adds.
fn applied_before(
    obj: &v1beta1::ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsToo,
) -> Deployment {
    let mut deployment = deployment(obj, MANAGER).expect("deployment");
    applied::mark(&mut deployment).expect("a serializable Deployment");
    deployment.metadata.uid = Some("d-1".into());
    deployment.metadata.generation = Some(1);
    deployment.metadata.resource_version = Some("42".into());
    deployment
}

/// A reconcile that finds the Deployment as it applied it (a resync, a status change of the
/// Deployment) sends no apply: only the status, which the object does not have yet.
#[tokio::test]
async fn a_deployment_as_applied_is_not_applied_again() {
    let obj = test_object("podinfo:1");
    let existing = applied_before(&obj);
    let action = reconcile_with(obj, false, Some(existing), |mut server| async move {
        // No request for the Deployment at all (it is in the cache), no Event: the script
        // ends with the status.
        let stored = json!(test_object("podinfo:1"));
        server
            .expect(Method::PATCH, &format!("{PATH}/status"), 200, stored)
            .await;
    })
    .await
    .expect("reconcile");
    assert_eq!(action, Action::requeue(RESYNC_AFTER));
}

/// A field set here and changed by hand (the image) is applied back.
#[tokio::test]
async fn a_deployment_edited_by_hand_is_applied_back() {
    let obj = test_object("podinfo:1");
    let mut edited = applied_before(&obj);
    let pod = edited.spec.template.spec.as_mut().expect("a pod template");
    pod.containers[0].image = Some("podinfo:edited".into());
    let answer = json!(edited);
    reconcile_with(obj, false, Some(edited), |mut server| async move {
        let applied = server.expect(Method::PATCH, DEPLOYMENT, 200, answer).await;
        assert_eq!(container(&applied)["image"], "podinfo:1");
        let stored = json!(test_object("podinfo:1"));
        server
            .expect(Method::PATCH, &format!("{PATH}/status"), 200, stored)
            .await;
    })
    .await
    .expect("reconcile");
}

#[tokio::test]
async fn a_deployment_it_does_not_control_is_left_alone_and_the_status_says_why() {
    // Labelled as this operator's, the Deployment is in the cache; someone else's is not, and
    // is read.
    for (theirs, labelled, says) in [
        (deployment_of(Some("5678")), true, "is controlled by"),
        (someone_elses(Some("5678")), false, "is controlled by"),
        (someone_elses(None), false, "has no controller"),
    ] {
        let cached = labelled.then(|| theirs.clone());
        let theirs = json!(theirs);
        let obj = test_object("podinfo:1");
        let result = reconcile_with(obj, false, cached, |mut server| async move {
            if !labelled {
                server.expect(Method::GET, DEPLOYMENT, 200, theirs).await;
            }
            let stored = json!(test_object("podinfo:1"));
            let status = server
                .expect(Method::PATCH, &format!("{PATH}/status"), 200, stored)
                .await;
            let status = &status["status"];
            assert_eq!(status["observedGeneration"], 3);
            let degraded = &status["conditions"][2];
            assert_eq!(degraded["type"], "Degraded");
            assert_eq!(degraded["status"], "True");
            assert_eq!(degraded["reason"], "DeploymentTaken");
            assert!(
                degraded["message"]
                    .as_str()
                    .expect("message")
                    .contains(says)
            );
            assert_eq!(status["conditions"][0]["status"], "False"); // Available
        })
        .await;
        let error = result.expect_err("reconcile must fail");
        assert!(error.to_string().contains(says), "{error}");
        assert_eq!(Tested::failure_reason(&error), "DeploymentTaken");
    }
}

#[tokio::test]
async fn an_api_error_fails_the_reconcile() {
    let obj = test_object("podinfo:1");
    let result = reconcile_with(obj, false, None, |mut server| async move {
        let error = status_error(500, "InternalError");
        server.expect(Method::GET, DEPLOYMENT, 500, error).await;
    })
    .await;
    let error = result.expect_err("reconcile must fail");
    assert!(
        error.to_string().contains("mocked InternalError"),
        "{error}"
    );
    assert_eq!(Tested::failure_reason(&error), "ApplyFailed");
}

/// A Deployment this operator made for an ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsToo of the same name, left behind by an
/// orphaning deletion (no controller any more), is adopted: applied to, owner reference and all.
#[tokio::test]
async fn an_orphan_it_made_is_adopted() {
    let orphan = deployment_of(None);
    let obj = test_object("podinfo:2");
    reconcile_with(obj, false, Some(orphan), |mut server| async move {
        let applied = server.echo(Method::PATCH, DEPLOYMENT).await;
        assert_eq!(applied["metadata"]["uid"], "d-1");
        assert_eq!(applied["metadata"]["ownerReferences"][0]["uid"], "1234");
        let event = server.echo(Method::POST, EVENTS).await;
        assert_eq!(event["reason"], "Adopted");
        let stored = json!(test_object("podinfo:2"));
        server
            .expect(Method::PATCH, &format!("{PATH}/status"), 200, stored)
            .await;
    })
    .await
    .expect("reconcile");
}

/// With `spec.replicas` unset after it was set, the replicas the operator's apply owned are
/// handed over first (the same count, applied by a field manager of their own), so that the
/// apply that leaves them out does not take the Deployment back to 1.
#[tokio::test]
async fn unset_replicas_are_released_at_their_count() {
    let mut obj = test_object("podinfo:1");
    obj.spec.replicas = None;
    // The cache drops managedFields, which tell who owns the replicas: they are read.
    let cached = stored(&test_object("podinfo:1"), 1);
    let mut read = cached.clone();
    read.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
        manager: Some(MANAGER.into()),
        operation: Some("Apply".into()),
        fields_v1: Some(FieldsV1(json!({"f:spec": {"f:replicas": {}}}))),
        ..ManagedFieldsEntry::default()
    }]);
    let mut released = read.clone();
    released.metadata.resource_version = Some("43".into());
    let (read, released) = (json!(read), json!(released));
    reconcile_with(obj, false, Some(cached), |mut server| async move {
        server.expect(Method::GET, DEPLOYMENT, 200, read).await;
        let release = server
            .expect(Method::PATCH, DEPLOYMENT, 200, released.clone())
            .await;
        assert_eq!(release["spec"], json!({"replicas": 2}));
        // That very Deployment: no apply may create one in its place.
        assert_eq!(release["metadata"]["uid"], "d-1");
        let applied = server
            .expect(Method::PATCH, DEPLOYMENT, 200, released)
            .await;
        assert!(applied["spec"].get("replicas").is_none(), "{applied}");
        // The Deployment as released: the release changed its resourceVersion.
        assert_eq!(applied["metadata"]["resourceVersion"], "43");
        let stored = json!(test_object("podinfo:1"));
        server
            .expect(Method::PATCH, &format!("{PATH}/status"), 200, stored)
            .await;
    })
    .await
    .expect("reconcile");
}

/// An ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsToo being deleted.
fn deleted(
    finalizers: &[&str],
) -> v1beta1::ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsToo {
    let mut obj = test_object("podinfo:1");
    obj.metadata.deletion_timestamp = Some(Time(Timestamp::now()));
    obj.metadata.finalizers = Some(finalizers.iter().map(|f| f.to_string()).collect());
    obj
}

#[tokio::test]
async fn deletion_deletes_that_very_deployment() {
    let deployment = stored(&test_object("podinfo:1"), 1);
    let answer = json!(deployment);
    let obj = deleted(&[FINALIZER]);
    reconcile_with(obj, true, Some(deployment), |mut server| async move {
        let event = server.echo(Method::POST, EVENTS).await;
        assert_eq!(event["reason"], "Deleting");
        let delete = server.expect(Method::DELETE, DEPLOYMENT, 200, answer).await;
        // Only that very Deployment as the cache saw it, not one created in its place or taken
        // by someone else meanwhile.
        assert_eq!(delete["preconditions"]["uid"], "d-1");
        assert_eq!(delete["preconditions"]["resourceVersion"], "41");
    })
    .await
    .expect("cleanup");
}

/// A Deployment changed since the cache saw it is not deleted: the cleanup fails, and its
/// retry sees what the Deployment has become.
#[tokio::test]
async fn deletion_of_a_deployment_changed_since_is_retried() {
    let deployment = stored(&test_object("podinfo:1"), 1);
    let obj = deleted(&[FINALIZER]);
    let result = reconcile_with(obj, true, Some(deployment), |mut server| async move {
        let event = server.echo(Method::POST, EVENTS).await;
        assert_eq!(event["reason"], "Deleting");
        let error = status_error(409, "Conflict");
        server.expect(Method::DELETE, DEPLOYMENT, 409, error).await;
    })
    .await;
    result.expect_err("the cleanup must fail, to be retried");
}

#[tokio::test]
async fn deletion_leaves_a_deployment_it_does_not_control() {
    for owner in [Some("5678"), None] {
        let theirs = deployment_of(owner);
        // No request: the Deployment is in the cache, and not this ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsToo's.
        let obj = deleted(&[FINALIZER]);
        reconcile_with(obj, true, Some(theirs), |_server| async {})
            .await
            .expect("cleanup");
    }
}

/// `kubectl delete --cascade=orphan`: the API server adds the `orphan` finalizer, and the
/// Deployment must survive its owner.
#[tokio::test]
async fn an_orphaning_deletion_keeps_the_deployment() {
    let orphaning = deleted(&["orphan", FINALIZER]);
    // No request at all: the script expects none.
    reconcile_with(orphaning, true, None, |_server| async {})
        .await
        .expect("cleanup");
}

fn deployment_condition(type_: &str, status: &str, reason: &str) -> DeploymentCondition {
    DeploymentCondition {
        type_: Some(type_.into()),
        status: Some(status.into()),
        reason: Some(reason.into()),
        ..DeploymentCondition::default()
    }
}

fn condition_status<'a>(
    status: &'a v1beta1::ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsTooStatus,
    type_: &str,
) -> &'a str {
    let condition = status.conditions.iter().find(|c| c.type_ == type_);
    condition.map(|c| c.status.as_str()).expect(type_)
}

#[test]
fn status_reflects_a_rolled_out_deployment() {
    let obj = test_object("podinfo:1");
    let mut deployment = stored(&obj, 1);
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
    let mut deployment = stored(&obj, 2);
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
