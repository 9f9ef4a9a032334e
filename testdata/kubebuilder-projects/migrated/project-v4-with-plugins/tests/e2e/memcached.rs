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

//! The tests of the `Memcached` kind. The custom resource type is referred to as
//! `v1alpha1::Memcached`, so that no kind name can clash with the names used here.

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::DeleteParams;
use kube::{Api, ResourceExt};

use project_v4_with_plugins::api::v1alpha1;

use rbuilder_runtime::e2e::{TestEnv, fetch, gone, images, is_controlled_by, step};

use crate::PROJECT;

const SAMPLE: &str = "config/samples/example.com_v1alpha1_memcached.yaml";

/// The `controller` label of the controller's metrics.
const CONTROLLER: &str = "memcached";

/// What the test changes `spec.image` to: another name of the sample's image where it has one
/// (a Docker Hub image's full or short name), which a real cluster pulls as it pulls the
/// sample's, else another tag. Never `latest`, which a validating webhook may refuse. Only the
/// Deployment's spec is checked.
const UPDATED_IMAGE: &str = "docker.io/library/memcached:1.6.26-alpine3.19";

/// The sample runs as a Deployment that it controls, which follows its spec, is put back
/// when deleted by hand and goes away with it; the reconciles show in the metrics.
#[tokio::test]
#[ignore = "needs a Kubernetes cluster: run `make test-e2e`"]
async fn runs_its_image_as_a_deployment() {
    let env = TestEnv::start(&PROJECT, CONTROLLER).await;
    let api: Api<v1alpha1::Memcached> = env.api();
    let deployments: Api<Deployment> = env.api();
    let reconciles = env.reconcile_total(CONTROLLER).await;

    let mut sample: v1alpha1::Memcached = PROJECT.read_yaml(SAMPLE);
    let name = sample.name_any();
    step(format!("apply the sample {name}"));
    let owner = env.apply(&api, &sample).await;

    step("a Deployment controlled by it runs the sample's image");
    let deployment = wait_for_image(&env, &deployments, &owner, &sample.spec.image).await;

    step("changing spec.image updates the Deployment");
    sample.spec.image = UPDATED_IMAGE.to_owned();
    env.apply(&api, &sample).await;
    wait_for_image(&env, &deployments, &owner, UPDATED_IMAGE).await;

    step("a Deployment deleted by hand is put back");
    deployments
        .delete(&name, &DeleteParams::default())
        .await
        .unwrap_or_else(|error| panic!("cannot delete Deployment {name}: {error}"));
    let what = format!("Deployment {name} to be created again");
    env.wait_for(&what, async || {
        let recreated = fetch(&deployments, &name).await?;
        if recreated.uid() == deployment.uid() {
            return Err("the deleted Deployment is still there".to_owned());
        }
        is_controlled_by(&recreated, &owner)
    })
    .await;

    step("/metrics counts the reconciles");
    env.wait_for_reconciles(CONTROLLER, reconciles).await;

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

/// Waits until the Deployment of `owner` is controlled by it and runs `image`.
async fn wait_for_image(
    env: &TestEnv,
    deployments: &Api<Deployment>,
    owner: &v1alpha1::Memcached,
    image: &str,
) -> Deployment {
    let name = owner.name_any();
    let what = format!("Deployment {name} controlled by {name}, with image {image}");
    env.wait_for(&what, async || {
        let deployment = fetch(deployments, &name).await?;
        is_controlled_by(&deployment, owner)?;
        let running = images(&deployment);
        if !running.contains(&image) {
            return Err(format!("its containers run {running:?}"));
        }
        Ok(deployment)
    })
    .await
}
