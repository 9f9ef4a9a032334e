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

//! The integration tests of the `crew-captain-backup` controller, a second controller of
//! Captain objects, against a real API server (see `main.rs`).

use kube::api::DeleteParams;
use kube::{Api, ResourceExt};
use rbuilder_testing::envtest::{Environment, fetch, from_yaml, gone, step};

use project_v4_multigroup::OPERATOR;
use project_v4_multigroup::api::crew::v1;
use project_v4_multigroup::controller::crew::captain_backup::CONTROLLER;

/// The sample of `config/samples`, as `kubectl apply -k config/samples` applies it.
const SAMPLE: &str = include_str!("../../../config/samples/crew_v1_captain.yaml");

/// Held by this controller on every Captain, so that it can clean up before deletion.
const FINALIZER: &str = "crew.testproject.org/captain-backup";

/// The controller, run alone with the manager's role, takes the sample in hand (its
/// finalizer), and lets it go when it is deleted.
#[tokio::test]
async fn the_sample_gets_its_finalizer() {
    let env = Environment::shared(&OPERATOR).await;
    env.run(&CONTROLLER).await;
    let api: Api<v1::Captain> = env.api();

    let sample: v1::Captain = from_yaml(SAMPLE);
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
