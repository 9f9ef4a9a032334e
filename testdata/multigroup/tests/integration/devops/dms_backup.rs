// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The integration tests of the `devops-dms-backup` controller, a second controller of
//! DemoMicroService objects, against a real API server (see `main.rs`).

use kube::api::DeleteParams;
use kube::{Api, ResourceExt};
use rbuilder_testing::envtest::{Environment, fetch, from_yaml, gone, step};

use multigroup::OPERATOR;
use multigroup::api::devops::v1;
use multigroup::controller::devops::dms_backup::CONTROLLER;

/// The sample of `config/samples`, as `kubectl apply -k config/samples` applies it.
const SAMPLE: &str = include_str!("../../../config/samples/devops_v1_demomicroservice.yaml");

/// Held by this controller on every DemoMicroService, so that it can clean up before deletion.
const FINALIZER: &str = "devops.example.com/dms-backup";

/// The controller, run alone with the manager's role, takes the sample in hand (its
/// finalizer), and lets it go when it is deleted.
#[tokio::test]
async fn the_sample_gets_its_finalizer() {
    let env = Environment::shared(&OPERATOR).await;
    env.run(&CONTROLLER).await;
    let api: Api<v1::DemoMicroService> = env.api();

    let sample: v1::DemoMicroService = from_yaml(SAMPLE);
    let name = sample.name_any();
    step(format!("apply the sample {name}"));
    env.apply(&api, &sample).await;

    step(format!("the controller adds the finalizer {FINALIZER}"));
    let what = format!("{name} to have the finalizer {FINALIZER}");
    env.wait_for(&what, async || {
        let obj = fetch(&api, &name).await?;
        let finalizers = obj.finalizers();
        if finalizers.iter().any(|finalizer| finalizer == FINALIZER) {
            Ok(())
        } else {
            Err(format!("finalizers {finalizers:?}"))
        }
    })
    .await;

    step("deleting the sample completes: the controller removes its finalizer");
    api.delete(&name, &DeleteParams::default())
        .await
        .unwrap_or_else(|error| panic!("cannot delete {name}: {error}"));
    let what = format!("{name} to be deleted");
    env.wait_for(&what, async || gone(&api, &name).await).await;
}
