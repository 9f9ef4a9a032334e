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

//! The integration tests of the `Match` controller, against a real API server
//! (see `main.rs`). The custom resource type is referred to as `v1::Match`, so that
//! no kind name can clash with the names used here.

use kube::api::DeleteParams;
use kube::{Api, ResourceExt};
use rbuilder_runtime::Reconciler as _;
use rbuilder_testing::envtest::{Environment, fetch, from_yaml, gone, is_ready, step};

use kind_names::OPERATOR;
use kind_names::api::v1;
use kind_names::controller::r#match::CONTROLLER;

/// The sample of `config/samples`, as `kubectl apply -k config/samples` applies it.
const SAMPLE: &str = include_str!("../../config/samples/devops_v1_match.yaml");

/// The controller's finalizer, if it holds one (none unless its `cleanup` has work to do).
const FINALIZER: Option<&str> = kind_names::controller::r#match::MatchReconciler::FINALIZER;

/// The controller takes the sample in hand (Ready=True for the current generation, and its
/// finalizer if it has one), and lets it go when it is deleted.
#[tokio::test]
async fn the_sample_becomes_ready() {
    let env = Environment::shared(&OPERATOR).await;
    env.run(&CONTROLLER).await;
    let api: Api<v1::Match> = env.api();

    let sample: v1::Match = from_yaml(SAMPLE);
    let name = sample.name_any();
    step(format!("apply the sample {name}"));
    env.apply(&api, &sample).await;

    if let Some(finalizer) = FINALIZER {
        step(format!("the controller adds its finalizer {finalizer}"));
        let what = format!("{name} to have the finalizer {finalizer}");
        env.wait_for(&what, async || {
            let obj = fetch(&api, &name).await?;
            let finalizers = obj.finalizers();
            if finalizers.iter().any(|held| held == finalizer) {
                Ok(())
            } else {
                Err(format!("finalizers {finalizers:?}"))
            }
        })
        .await;
    }

    step("the controller reports Ready=True for the current generation");
    let what = format!("{name} to be Ready for its generation");
    env.wait_for(&what, async || {
        let obj = fetch(&api, &name).await?;
        let status = obj.status.as_ref();
        let conditions = status.map(|status| status.conditions.as_slice());
        is_ready(conditions.unwrap_or_default(), obj.metadata.generation)
    })
    .await;

    step("deleting the sample completes (after `cleanup`, if the controller has a finalizer)");
    api.delete(&name, &DeleteParams::default())
        .await
        .unwrap_or_else(|error| panic!("cannot delete {name}: {error}"));
    let what = format!("{name} to be deleted");
    env.wait_for(&what, async || gone(&api, &name).await).await;
}
