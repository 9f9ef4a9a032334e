// Copyright 2026 Acme Robotics, Inc.
//
// Proprietary and confidential. Do not distribute without written permission
// from Acme Robotics, Inc.

//! The integration tests of the `Memcached` controller, against a real API server
//! (see `main.rs`). The custom resource type is referred to as `v1alpha1::Memcached`, so that
//! no kind name can clash with the names used here.

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Resource, ResourceExt};
use rbuilder_testing::envtest::{
    Environment, fetch, from_yaml, gone, images, is_controlled_by, step,
};
use serde_json::json;

use deploy_image::OPERATOR;
use deploy_image::api::v1alpha1;
use deploy_image::controller::memcached::CONTROLLER;

/// The sample of `config/samples`, as `kubectl apply -k config/samples` applies it.
const SAMPLE: &str = include_str!("../../config/samples/cache_v1alpha1_memcached.yaml");

/// What the test changes `spec.image` to. No Pod runs in these tests: it need not exist.
const UPDATED_IMAGE: &str = "registry.example.com/updated:1.0";

/// The sample runs as a Deployment that it controls, with its image and port and the
/// restricted Pod Security Standard; a changed image is rolled out, and deleting the sample
/// deletes the Deployment.
#[tokio::test]
async fn the_sample_runs_as_a_deployment() {
    let env = Environment::shared(&OPERATOR).await;
    env.run(&CONTROLLER).await;
    let api: Api<v1alpha1::Memcached> = env.api();
    let deployments: Api<Deployment> = env.api();

    let mut sample: v1alpha1::Memcached = from_yaml(SAMPLE);
    let name = sample.name_any();
    step(format!("apply the sample {name}"));
    let owner = env.apply(&api, &sample).await;

    step("a Deployment controlled by it runs the sample's image and port");
    let deployment = wait_for_image(&env, &deployments, &owner, &sample.spec.image).await;
    let pod = deployment.spec.template.spec.expect("a pod template");
    let container = &pod.containers[0];
    let ports = container.ports.iter().flatten();
    let ports: Vec<i32> = ports.map(|port| port.container_port).collect();
    // As stored: with the CRD's default port if the sample has none.
    assert_eq!(ports, Vec::from_iter(owner.spec.port));

    step("one server-side apply of the operator owns the fields it sets");
    let manager = OPERATOR.field_manager();
    let entries = deployment.metadata.managed_fields.iter().flatten();
    let ours = entries.filter(|entry| entry.manager.as_deref() == Some(manager.as_str()));
    let operations: Vec<_> = ours.map(|entry| entry.operation.clone()).collect();
    assert_eq!(operations, [Some("Apply".to_owned())]);

    step("the pods follow the restricted Pod Security Standard");
    let pod_security = pod.security_context.expect("a pod security context");
    assert_eq!(pod_security.run_as_non_root, Some(true));
    let seccomp = pod_security.seccomp_profile.map(|profile| profile.type_);
    assert_eq!(seccomp.as_deref(), Some("RuntimeDefault"));
    let security = container.security_context.clone();
    let security = security.expect("a container security context");
    assert_eq!(security.allow_privilege_escalation, Some(false));
    let capabilities = security.capabilities.unwrap_or_default();
    assert_eq!(capabilities.drop, Some(vec!["ALL".to_owned()]));

    step("changing spec.image rolls the Deployment to it");
    sample.spec.image = UPDATED_IMAGE.to_owned();
    env.apply(&api, &sample).await;
    wait_for_image(&env, &deployments, &owner, UPDATED_IMAGE).await;

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

/// Unsetting `spec.replicas` leaves the Deployment's count to whoever scales it, at the count
/// it had: the operator hands the field over instead of dropping it to the default of 1.
#[tokio::test]
async fn unset_replicas_keep_the_deployments_count() {
    let env = Environment::shared(&OPERATOR).await;
    env.run(&CONTROLLER).await;
    let api: Api<v1alpha1::Memcached> = env.api();
    let deployments: Api<Deployment> = env.api();
    let mut sample: v1alpha1::Memcached = from_yaml(SAMPLE);
    let name = sample.name_any();

    step("the sample without spec.replicas gets a Deployment");
    sample.spec.replicas = None;
    let owner = env.apply(&api, &sample).await;
    wait_for_image(&env, &deployments, &owner, &sample.spec.image).await;

    step("spec.replicas: 3 scales the Deployment to 3");
    sample.spec.replicas = Some(3);
    env.apply(&api, &sample).await;
    let what = format!("Deployment {name} to have 3 replicas");
    env.wait_for(&what, async || {
        let replicas = fetch(&deployments, &name).await?.spec.replicas;
        (replicas == Some(3))
            .then_some(())
            .ok_or(format!("replicas {replicas:?}"))
    })
    .await;

    step("without spec.replicas, the Deployment keeps 3");
    sample.spec.replicas = None;
    let unset = env.apply(&api, &sample).await;
    let generation = unset.meta().generation;
    let what = format!("{name} to be reconciled at generation {generation:?}");
    env.wait_for(&what, async || {
        let obj = fetch(&api, &name).await?;
        let observed = obj.status.and_then(|status| status.observed_generation);
        (observed == generation)
            .then_some(())
            .ok_or(format!("observed generation {observed:?}"))
    })
    .await;
    let deployment = fetch(&deployments, &name).await.expect("the Deployment");
    assert_eq!(deployment.spec.replicas, Some(3));
}

/// A field the operator sets on the Deployment and someone changes by hand (here the image,
/// as `kubectl set image` does) is put back: the change brings a reconcile, which finds the
/// Deployment no longer as it applied it.
#[tokio::test]
async fn a_deployment_edited_by_hand_is_put_back() {
    let env = Environment::shared(&OPERATOR).await;
    env.run(&CONTROLLER).await;
    let api: Api<v1alpha1::Memcached> = env.api();
    let deployments: Api<Deployment> = env.api();
    let sample: v1alpha1::Memcached = from_yaml(SAMPLE);
    let name = sample.name_any();
    let owner = env.apply(&api, &sample).await;
    let deployment = wait_for_image(&env, &deployments, &owner, &sample.spec.image).await;

    step(format!("set the image of Deployment {name} by hand"));
    let pod = deployment.spec.template.spec.expect("a pod template");
    let container = &pod.containers[0].name;
    let image = json!({"name": container, "image": UPDATED_IMAGE});
    let edit = json!({"spec": {"template": {"spec": {"containers": [image]}}}});
    let edited = deployments
        .patch(&name, &PatchParams::default(), &Patch::Strategic(&edit))
        .await
        .expect("the image edited");
    assert_eq!(images(&edited), [UPDATED_IMAGE]);

    step("the operator puts the sample's image back");
    wait_for_image(&env, &deployments, &owner, &sample.spec.image).await;
}

/// A reconcile that finds the Deployment as the operator applied it reads it from the cache
/// the controller's watch keeps, and sends no request for it: here a label added by hand
/// brings such a reconcile.
#[tokio::test]
async fn a_reconcile_reads_the_deployment_from_the_cache() {
    let env = Environment::shared(&OPERATOR).await;
    env.run(&CONTROLLER).await;
    let api: Api<v1alpha1::Memcached> = env.api();
    let deployments: Api<Deployment> = env.api();
    let sample: v1alpha1::Memcached = from_yaml(SAMPLE);
    let name = sample.name_any();
    let owner = env.apply(&api, &sample).await;
    wait_for_image(&env, &deployments, &owner, &sample.spec.image).await;
    // Settled: the status, once written, brings no further change.
    env.wait_for("the status", async || {
        let obj = fetch(&api, &name).await?;
        obj.status.map(drop).ok_or("no status yet".to_owned())
    })
    .await;
    let (reads, reconciles) = (env.reads(), env.reconciles(&CONTROLLER));

    step(format!("label Deployment {name} by hand"));
    let label = json!({"metadata": {"labels": {"touched": "by-hand"}}});
    deployments
        .patch(&name, &PatchParams::default(), &Patch::Merge(&label))
        .await
        .expect("the label added");
    env.wait_for("one more reconcile", async || {
        match env.reconciles(&CONTROLLER) {
            done if done > reconciles => Ok(()),
            done => Err(format!("{done} reconciles")),
        }
    })
    .await;
    assert_eq!(env.reads(), reads, "the reconcile read the Deployment");
}

/// A Deployment of the sample's name that someone else made (not labelled as the operator's,
/// so not in its cache) is read from the API server, and refused: left as it is, and the
/// status says why.
#[tokio::test]
async fn someone_elses_deployment_is_left_alone() {
    let env = Environment::shared(&OPERATOR).await;
    env.run(&CONTROLLER).await;
    let api: Api<v1alpha1::Memcached> = env.api();
    let deployments: Api<Deployment> = env.api();
    let sample: v1alpha1::Memcached = from_yaml(SAMPLE);
    let name = sample.name_any();

    step(format!("someone else creates Deployment {name}"));
    let labels = json!({"app": "theirs"});
    let container = json!({"name": "theirs", "image": UPDATED_IMAGE});
    let theirs: Deployment = serde_json::from_value(json!({
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }))
    .expect("a Deployment");
    deployments
        .create(&PostParams::default(), &theirs)
        .await
        .expect("their Deployment created");

    step("the sample is refused, and its status says why");
    env.apply(&api, &sample).await;
    env.wait_for("the status to say DeploymentTaken", async || {
        let status = fetch(&api, &name).await?.status.unwrap_or_default();
        let degraded = status.conditions.iter().find(|c| c.type_ == "Degraded");
        match degraded.map(|c| c.reason.as_str()) {
            Some("DeploymentTaken") => Ok(()),
            other => Err(format!("Degraded reason {other:?}")),
        }
    })
    .await;
    let deployment = fetch(&deployments, &name).await.expect("their Deployment");
    assert_eq!(images(&deployment), [UPDATED_IMAGE]);
    assert!(deployment.owner_references().is_empty(), "taken over");
}

/// After `kubectl delete --cascade=orphan`, the Deployment is left running without an owner;
/// a Memcached created again with the same name adopts it instead of refusing it.
#[tokio::test]
async fn an_orphaned_deployment_is_adopted() {
    let env = Environment::shared(&OPERATOR).await;
    env.run(&CONTROLLER).await;
    let api: Api<v1alpha1::Memcached> = env.api();
    let deployments: Api<Deployment> = env.api();
    let sample: v1alpha1::Memcached = from_yaml(SAMPLE);
    let name = sample.name_any();
    let first = env.apply(&api, &sample).await;
    let orphan = wait_for_image(&env, &deployments, &first, &sample.spec.image).await;

    step(format!("delete {name} with --cascade=orphan"));
    api.delete(&name, &DeleteParams::orphan())
        .await
        .unwrap_or_else(|error| panic!("cannot delete {name}: {error}"));
    // What kube-controller-manager's garbage collector does then, which envtest does not run:
    // it removes the owner reference from the Deployment, then the orphan finalizer.
    let what = format!("{name} to have only the orphan finalizer");
    env.wait_for(&what, async || {
        let finalizers = fetch(&api, &name).await?.finalizers().to_vec();
        (finalizers == ["orphan"])
            .then_some(())
            .ok_or(format!("finalizers {finalizers:?}"))
    })
    .await;
    let params = PatchParams::default();
    let unowned = json!({"metadata": {"ownerReferences": null}});
    deployments
        .patch(&name, &params, &Patch::Merge(&unowned))
        .await
        .expect("the owner reference removed");
    let unfinalized = json!({"metadata": {"finalizers": null}});
    api.patch(&name, &params, &Patch::Merge(&unfinalized))
        .await
        .expect("the orphan finalizer removed");
    let what = format!("{name} to be deleted");
    env.wait_for(&what, async || gone(&api, &name).await).await;

    step(format!("create {name} again: it adopts the Deployment"));
    let second = env.apply(&api, &sample).await;
    let adopted = wait_for_image(&env, &deployments, &second, &sample.spec.image).await;
    assert_eq!(adopted.uid(), orphan.uid(), "the orphan was replaced");
}

/// Waits until the Deployment of `owner` is controlled by it and runs `image`.
async fn wait_for_image(
    env: &Environment,
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
