// Copyright 2026.
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

//! Unit tests of the Memcached controller, with kubebuilder's deploy-image API: the
//! Deployment runs the manager's image with `spec.size` replicas and `spec.containerPort` as its port.
//! Each test that reconciles scripts, against a mocked API server, the requests the controller
//! must send and the API server's answers.

use rbuilder_runtime::envtest::from_yaml;
use rbuilder_runtime::testing::{Method, mock_context, status_error, within_timeout};
use serde_json::{Value, json};

use super::*;

/// The reconciler under test.
type Tested = MemcachedReconciler;

const PATH: &str = "/apis/shop.example.com/v1alpha1/namespaces/default/memcacheds/test";
const DEPLOYMENT: &str = "/apis/apps/v1/namespaces/default/deployments/test";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/default/events";
/// The field manager of `mock_context`'s operator.
const MANAGER: &str = "test-operator";

/// The sample of `config/samples`, which the kind's API comes with.
const SAMPLE: &str = include_str!("../../../config/samples/shop_v1alpha1_memcached.yaml");

/// The sample, as the API server stores it, with `spec.size` 2.
fn test_object() -> v1alpha1::Memcached {
    let mut sample: Value = from_yaml(SAMPLE);
    sample["spec"]["size"] = json!(2);
    let mut obj: v1alpha1::Memcached = serde_json::from_value(sample).expect("the sample");
    obj.metadata.name = Some("test".into());
    obj.metadata.namespace = Some("default".into());
    obj.metadata.uid = Some("1234".into());
    obj.metadata.generation = Some(3);
    obj
}

fn container(deployment: &Value) -> &Value {
    &deployment["spec"]["template"]["spec"]["containers"][0]
}

#[test]
fn the_deployment_runs_the_managers_image_with_the_specs_size_and_port() {
    let obj = test_object();
    let deployment = json!(deployment(&obj, MANAGER).expect("deployment"));
    assert_eq!(deployment["metadata"]["name"], "test");
    assert_eq!(deployment["spec"]["replicas"], 2);
    assert_eq!(deployment["metadata"]["ownerReferences"][0]["uid"], "1234");
    let container = container(&deployment);
    // The manager's environment variable, or the image the kind was made with.
    assert_eq!(container["image"], operand_image());
    let port = Some(obj.spec.container_port);
    assert_eq!(container["ports"][0]["containerPort"], json!(port));
    assert_eq!(container["securityContext"]["runAsNonRoot"], true);
}

/// With `spec.size` unset, the apply leaves the Deployment's replicas to whoever scales it.
#[test]
fn an_unset_size_is_left_to_whoever_scales_the_deployment() {
    let mut sample: Value = from_yaml(SAMPLE);
    if let Some(spec) = sample["spec"].as_object_mut() {
        spec.remove("size");
    }
    let mut obj: v1alpha1::Memcached = serde_json::from_value(sample).expect("the sample");
    obj.metadata.name = Some("test".into());
    obj.metadata.uid = Some("1234".into());
    let deployment = json!(deployment(&obj, MANAGER).expect("deployment"));
    assert!(deployment["spec"].get("replicas").is_none(), "{deployment}");
}

/// The Deployment is created by a server-side apply, and the status reports it with
/// conditions, the only status kubebuilder's API has.
#[tokio::test]
async fn a_missing_deployment_is_created_and_reported() {
    let (ctx, mut server) = mock_context();
    ctx.cache_of(None::<Deployment>);
    let script = tokio::spawn(async move {
        let not_found = status_error(404, "NotFound");
        server.expect(Method::GET, DEPLOYMENT, 404, not_found).await;
        let created = server.echo(Method::PATCH, DEPLOYMENT).await;
        assert_eq!(created["spec"]["replicas"], 2);
        let event = server.echo(Method::POST, EVENTS).await;
        assert_eq!(event["reason"], "Created");
        let stored = json!(test_object());
        let status = server
            .expect(Method::PATCH, &format!("{PATH}/status"), 200, stored)
            .await;
        let conditions = &status["status"]["conditions"];
        assert_eq!(conditions[0]["type"], "Available");
        assert_eq!(conditions[0]["observedGeneration"], 3);
    });
    let action = within_timeout(Tested::apply(Arc::new(test_object()), ctx))
        .await
        .expect("reconcile");
    script.await.expect("API server script");
    assert_eq!(action, Action::requeue(RESYNC_AFTER));
}
