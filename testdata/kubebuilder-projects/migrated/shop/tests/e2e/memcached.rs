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

//! The tests of the `Memcached` kind, with kubebuilder's deploy-image API. The custom
//! resource type is referred to as `v1alpha1::Memcached`, so that no kind name can clash
//! with the names used here.

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::DeleteParams;
use kube::{Api, ResourceExt};

use shop::api::v1alpha1;

use rbuilder_testing::e2e::{
    TestEnv, fetch, gone, has_condition, is_controlled_by, is_rolled_out, step,
};

use crate::PROJECT;

const SAMPLE: &str = "config/samples/shop_v1alpha1_memcached.yaml";

/// The `controller` label of the controller's metrics.
const CONTROLLER: &str = "memcached";

/// The sample runs as a Deployment that it controls, which follows its size and goes away with
/// it; its status reports the Deployment's rollout; the reconciles show in the metrics.
///
/// The rollout needs a cluster whose Pods run (kind, or a cluster with KWOK's simulated nodes):
/// the Deployment becomes available once its pods are ready.
#[tokio::test]
#[ignore = "needs a Kubernetes cluster: run `make test-e2e`"]
async fn runs_the_managers_image_as_a_deployment() {
    let env = TestEnv::start(&PROJECT, CONTROLLER).await;
    let api: Api<v1alpha1::Memcached> = env.api();
    let deployments: Api<Deployment> = env.api();
    let reconciles = env.reconcile_total(CONTROLLER).await;

    let mut sample: v1alpha1::Memcached = PROJECT.read_yaml(SAMPLE);
    let name = sample.name_any();
    step(format!("apply the sample {name}"));
    let owner = env.apply(&api, &sample).await;

    step("a Deployment controlled by it runs");
    let what = format!("Deployment {name} controlled by {name}");
    env.wait_for(&what, async || {
        is_controlled_by(&fetch(&deployments, &name).await?, &owner)
    })
    .await;

    step("changing spec.size scales the Deployment to it: its pods run, and its status says so");
    sample.spec.size = Some(2);
    env.apply(&api, &sample).await;
    let what = format!("{name} to report its Deployment available with 2 ready replicas");
    env.wait_for_pods(&what, async || {
        let rolled_out = is_rolled_out(&fetch(&deployments, &name).await?)?;
        if rolled_out != 2 {
            return Err(format!("the Deployment has {rolled_out} replicas"));
        }
        let obj = fetch(&api, &name).await?;
        let generation = obj.metadata.generation;
        let conditions = obj.status.map(|status| status.conditions);
        let conditions = conditions.unwrap_or_default();
        has_condition(&conditions, "Available", "True", generation)?;
        has_condition(&conditions, "Progressing", "False", generation)
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
