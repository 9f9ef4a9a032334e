// Copyright 2026 Acme Robotics, Inc.
//
// Proprietary and confidential. Do not distribute without written permission
// from Acme Robotics, Inc.

//! Unit tests of what the Memcached controller decides: the Deployment, the status, and
//! what a refusal looks like. How the Deployment is applied (created, adopted, refused, left
//! unchanged, deleted) is the runtime's, tested there (`rbuilder_runtime::owned`); the
//! integration tests (`tests/integration/`) run the whole controller against kube-apiserver.

use k8s_openapi::api::apps::v1::DeploymentStatus;
use rbuilder_testing::testing::{Method, mock_context, within_timeout};
use serde_json::{Value, json};

use super::*;

/// The reconciler under test.
type Tested = MemcachedReconciler;

/// A Memcached as the API server sends it, with `spec`. Built from JSON, so that a
/// field added to the spec (with a default) needs no change here.
fn test_object(spec: Value) -> v1alpha1::Memcached {
    let obj = json!({
        "apiVersion": "cache.example.com/v1alpha1",
        "kind": "Memcached",
        "metadata": {"name": "test", "namespace": "default", "uid": "1234", "generation": 3},
        "spec": spec,
    });
    serde_json::from_value(obj).expect("the object")
}

fn deployment_of(spec: Value) -> Value {
    let deployment = deployment(&test_object(spec), "test-operator");
    json!(deployment)
}

#[test]
fn the_deployment_runs_the_image_as_specified() {
    let spec = json!({"image": "podinfo:1", "replicas": 2, "port": 8080});
    let deployment = deployment_of(spec);
    assert_eq!(deployment["spec"]["replicas"], 2);
    let labels = json!({
        "app.kubernetes.io/name": "memcached",
        "app.kubernetes.io/instance": "test",
        "app.kubernetes.io/managed-by": "test-operator",
    });
    assert_eq!(deployment["metadata"]["labels"], labels);
    assert_eq!(deployment["spec"]["template"]["metadata"]["labels"], labels);
    let selector = &deployment["spec"]["selector"]["matchLabels"];
    assert_eq!(selector["app.kubernetes.io/instance"], "test");

    let pod = &deployment["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(container["image"], "podinfo:1");
    let port = json!({"name": "memcached", "containerPort": 8080, "protocol": "TCP"});
    assert_eq!(container["ports"], json!([port]));
    // The restricted Pod Security Standard.
    for security in [&pod["securityContext"], &container["securityContext"]] {
        assert_eq!(security["runAsNonRoot"], true);
        assert_eq!(security["seccompProfile"]["type"], "RuntimeDefault");
    }
    let security = &container["securityContext"];
    assert_eq!(security["allowPrivilegeEscalation"], false);
    assert_eq!(security["capabilities"]["drop"], json!(["ALL"]));
}

/// With `spec.replicas` unset, the apply leaves the field out, so that a
/// HorizontalPodAutoscaler or `kubectl scale` owns it and the operator never takes it back.
#[test]
fn unset_replicas_are_left_to_whoever_scales_the_deployment() {
    let deployment = deployment_of(json!({"image": "podinfo:1"}));
    assert!(deployment["spec"].get("replicas").is_none(), "{deployment}");
}

/// The status of the test object with a Deployment whose status is `observed`.
fn status_with(observed: Value) -> Value {
    let obj = test_object(json!({"image": "podinfo:1", "replicas": 2}));
    let mut deployment = deployment(&obj, "test-operator");
    deployment.metadata.generation = Some(1);
    deployment.status = Some(serde_json::from_value::<DeploymentStatus>(observed).expect("status"));
    json!(status(&obj, Ok(&deployment)))
}

/// The status and reason of the condition `type_` in `status`.
fn condition<'a>(status: &'a Value, type_: &str) -> [&'a str; 2] {
    let conditions = status["conditions"].as_array().expect("conditions");
    let condition = conditions.iter().find(|c| c["type"] == type_).expect(type_);
    [&condition["status"], &condition["reason"]].map(|field| field.as_str().unwrap_or_default())
}

#[test]
fn status_reflects_a_rolled_out_deployment() {
    let available =
        json!({"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"});
    let status = status_with(json!({
        "observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2,
        "availableReplicas": 2, "conditions": [available],
    }));
    assert_eq!(status["readyReplicas"], 2);
    assert_eq!(status["observedGeneration"], 3);
    assert_eq!(
        condition(&status, "Available"),
        ["True", "MinimumReplicasAvailable"]
    );
    assert_eq!(
        condition(&status, "Progressing"),
        ["False", "RolloutComplete"]
    );
    assert_eq!(condition(&status, "Degraded"), ["False", "AsExpected"]);
}

#[test]
fn status_reflects_a_stuck_rollout() {
    let stuck =
        json!({"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"});
    let status = status_with(json!({
        "observedGeneration": 1, "replicas": 3, "updatedReplicas": 1, "readyReplicas": 1,
        "conditions": [stuck],
    }));
    assert_eq!(status["readyReplicas"], 1);
    assert_eq!(condition(&status, "Progressing"), ["True", "RollingOut"]);
    assert_eq!(
        condition(&status, "Degraded"),
        ["True", "ProgressDeadlineExceeded"]
    );
}

/// A Deployment of the same name that someone else made is left alone: the status says whose
/// it is, and the failure has a reason of its own.
#[tokio::test]
async fn someone_elses_deployment_is_refused_in_the_status() {
    let (ctx, mut server) = mock_context();
    let obj = Arc::new(test_object(json!({"image": "podinfo:1"})));
    let reconciled = tokio::spawn(Tested::apply(obj, ctx));
    let theirs = json!({
        "metadata": {"name": "test", "namespace": "default", "uid": "d-1"},
        "spec": {"selector": {}, "template": {}},
    });
    let deployment = "/apis/apps/v1/namespaces/default/deployments/test";
    server.expect(Method::GET, deployment, 200, theirs).await;
    let path = "/apis/cache.example.com/v1alpha1/namespaces/default/memcacheds/test/status";
    let stored = json!(test_object(json!({"image": "podinfo:1"})));
    let status = server.expect(Method::PATCH, path, 200, stored).await;
    let error = within_timeout(reconciled).await.expect("the task");
    let error = error.expect_err("refused");
    // The reason of the runtime's Warning Event and of the status: the kind, then `Taken`.
    let taken = owned::taken(&error).expect("someone else's Deployment");
    assert_eq!(taken.reason(), "DeploymentTaken");
    let says = error.to_string();
    let theirs = "Deployment test exists and has no controller";
    assert!(says.starts_with(theirs), "{says}");
    let status = &status["status"];
    assert_eq!(condition(status, "Available"), ["False", "DeploymentTaken"]);
    assert_eq!(condition(status, "Degraded"), ["True", "DeploymentTaken"]);
    assert_eq!(status["conditions"][2]["message"], says);
    assert_eq!(status["observedGeneration"], 3);
}
