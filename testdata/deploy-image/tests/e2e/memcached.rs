// Copyright 2026 Acme Robotics, Inc.
//
// Proprietary and confidential. Do not distribute without written permission
// from Acme Robotics, Inc.

//! The tests of the `Memcached` kind. The custom resource type is referred to as
//! `v1alpha1::Memcached`, so that no kind name can clash with the names used here.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::json;

use deploy_image::api::v1alpha1;

use rbuilder_testing::e2e::{
    TestEnv, fetch, gone, has_condition, images, is_controlled_by, is_rolled_out, replica_sets,
    step,
};

use crate::PROJECT;

const SAMPLE: &str = "config/samples/cache_v1alpha1_memcached.yaml";

/// The `controller` label of the controller's metrics.
const CONTROLLER: &str = "memcached";

/// What the test changes `spec.image` to: another name of the sample's image where it has one
/// (a Docker Hub image's full or short name), which a real cluster pulls as it pulls the
/// sample's, for the rollout to it waits for its pods to run; else another tag (`e2e`), which
/// must exist in the image's registry. Never `latest`, which a validating webhook may refuse.
const UPDATED_IMAGE: &str = "docker.io/library/memcached:1.6.26-alpine3.19";

/// The sample runs as a Deployment that it controls, which follows its spec, is put back
/// when deleted by hand and goes away with it; its status reports the Deployment's rollouts;
/// the reconciles show in the metrics.
///
/// The rollouts need a cluster whose Pods run (kind, or a cluster with KWOK's simulated nodes):
/// the Deployment becomes available once its pods are ready.
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
    let replicas = sample.spec.replicas.unwrap_or(1);

    step("its pods run, and its status says the Deployment is available");
    wait_for_rollout(&env, &api, &name, &sample.spec.image, replicas).await;

    step("changing spec.image rolls the Deployment out to a new ReplicaSet");
    sample.spec.image = UPDATED_IMAGE.to_owned();
    env.apply(&api, &sample).await;
    wait_for_image(&env, &deployments, &owner, UPDATED_IMAGE).await;
    wait_for_rollout(&env, &api, &name, UPDATED_IMAGE, replicas).await;

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

/// Without `spec.replicas`, the Deployment keeps the replica count that someone else gives it
/// (`kubectl scale`, a HorizontalPodAutoscaler), and the status reports it.
#[tokio::test]
#[ignore = "needs a Kubernetes cluster: run `make test-e2e`"]
async fn leaves_scaling_to_others_without_replicas() {
    let env = TestEnv::start(&PROJECT, CONTROLLER).await;
    let api: Api<v1alpha1::Memcached> = env.api();
    let deployments: Api<Deployment> = env.api();

    let mut sample: v1alpha1::Memcached = PROJECT.read_yaml(SAMPLE);
    sample.spec.replicas = None;
    let name = sample.name_any();
    step(format!("apply the sample {name} without spec.replicas"));
    env.apply(&api, &sample).await;

    step("its Deployment runs one pod, Kubernetes' default");
    wait_for_rollout(&env, &api, &name, &sample.spec.image, 1).await;

    step("scaling the Deployment by hand, as kubectl scale does, is left alone");
    let scale = json!({ "spec": { "replicas": 3 } });
    deployments
        .patch_scale(&name, &PatchParams::default(), &Patch::Merge(&scale))
        .await
        .unwrap_or_else(|error| panic!("cannot scale Deployment {name}: {error}"));
    // Each change of the Deployment's status brings a reconcile: the status that counts 3
    // ready replicas was written after the scale, by a reconcile that kept it.
    wait_for_rollout(&env, &api, &name, &sample.spec.image, 3).await;
}

/// Waits until the Deployment `name` has rolled out `image` to `replicas` ready pods, and the
/// status of `name` says so for its current generation: one ReplicaSet of the Deployment runs
/// the image with every replica ready, the others have no pods left.
async fn wait_for_rollout(
    env: &TestEnv,
    api: &Api<v1alpha1::Memcached>,
    name: &str,
    image: &str,
    replicas: i32,
) {
    let deployments: Api<Deployment> = env.api();
    let replica_set_api: Api<ReplicaSet> = env.api();
    let what = format!("{name} to report {replicas} ready replicas of {image}, rolled out");
    env.wait_for_pods(&what, async || {
        let deployment = fetch(&deployments, name).await?;
        let rolled_out = is_rolled_out(&deployment)?;
        if rolled_out != replicas {
            return Err(format!("the Deployment has {rolled_out} replicas"));
        }
        let sets = replica_sets(&replica_set_api, &deployment).await?;
        let (current, old): (Vec<_>, Vec<_>) = sets.iter().partition(|set| set.images == [image]);
        if !matches!(current.as_slice(), [set] if set.ready == replicas)
            || old.iter().any(|set| set.replicas != 0)
        {
            return Err(format!("its ReplicaSets: {sets:?}"));
        }
        let obj = fetch(api, name).await?;
        let generation = obj.metadata.generation;
        let status = obj.status.unwrap_or_default();
        has_condition(&status.conditions, "Available", "True", generation)?;
        has_condition(&status.conditions, "Progressing", "False", generation)?;
        if status.ready_replicas != Some(replicas) || status.observed_generation != generation {
            return Err(format!(
                "status readyReplicas {:?}, observedGeneration {:?} (generation {generation:?})",
                status.ready_replicas, status.observed_generation
            ));
        }
        Ok(())
    })
    .await;
}
