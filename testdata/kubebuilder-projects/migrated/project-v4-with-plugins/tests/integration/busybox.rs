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

//! The integration tests of the `Busybox` controller, with kubebuilder's
//! deploy-image API, against a real API server (see `main.rs`). The custom resource type is
//! referred to as `v1alpha1::Busybox`, so that no kind name can clash with the names used here.

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::DeleteParams;
use kube::{Api, ResourceExt};
use rbuilder_testing::envtest::{
    Environment, fetch, from_yaml, gone, images, is_controlled_by, step,
};

use project_v4_with_plugins::OPERATOR;
use project_v4_with_plugins::api::v1alpha1;
use project_v4_with_plugins::controller::busybox::{CONTROLLER, operand_image};

/// The sample of `config/samples`, as `kubectl apply -k config/samples` applies it.
const SAMPLE: &str = include_str!("../../config/samples/example.com_v1alpha1_busybox.yaml");

/// The sample runs as a Deployment that it controls, with the manager's image, `spec.size`
/// replicas; a changed size scales it, and
/// deleting the sample deletes the Deployment.
#[tokio::test]
async fn the_sample_runs_as_a_deployment() {
    let env = Environment::shared(&OPERATOR).await;
    env.run(&CONTROLLER).await;
    let api: Api<v1alpha1::Busybox> = env.api();
    let deployments: Api<Deployment> = env.api();

    let mut sample: v1alpha1::Busybox = from_yaml(SAMPLE);
    let name = sample.name_any();
    step(format!("apply the sample {name}"));
    let owner = env.apply(&api, &sample).await;

    step("a Deployment controlled by it runs the manager's image, with the sample's size");
    let image = operand_image();
    let what = format!("Deployment {name} controlled by {name}, with image {image}");
    let deployment = env
        .wait_for(&what, async || {
            let deployment = fetch(&deployments, &name).await?;
            is_controlled_by(&deployment, &owner)?;
            let running = images(&deployment);
            if !running.contains(&image.as_str()) {
                return Err(format!("its containers run {running:?}"));
            }
            Ok(deployment)
        })
        .await;
    // As stored: the CRD's default size if the sample has none.
    let obj = &owner;
    assert_eq!(deployment.spec.replicas, obj.spec.size);

    step("changing spec.size scales the Deployment to it");
    sample.spec.size = Some(3);
    env.apply(&api, &sample).await;
    let what = format!("Deployment {name} to have 3 replicas");
    env.wait_for(&what, async || {
        let replicas = fetch(&deployments, &name).await?.spec.replicas;
        (replicas == Some(3))
            .then_some(())
            .ok_or(format!("replicas {replicas:?}"))
    })
    .await;

    step("deleting the sample deletes its Deployment, then itself");
    api.delete(&name, &DeleteParams::default())
        .await
        .unwrap_or_else(|error| panic!("cannot delete {name}: {error}"));
    let what = format!("Deployment {name} to be deleted");
    env.wait_for(&what, async || gone(&deployments, &name).await)
        .await;
    let what = format!("{name} to be deleted (its finalizer removed)");
    env.wait_for(&what, async || gone(&api, &name).await).await;
}
