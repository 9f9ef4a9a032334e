// Copyright 2026 The demo-microservice Authors.
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

//! The integration tests of the webhooks of `DemoMicroService` v1: the API server calls them
//! (see `main.rs`). They check what the scaffolded webhooks do: change them with the webhooks.
//! The custom resource type is referred to as `v1::DemoMicroService`, so that no kind name can
//! clash with the names used here.

use kube::{Api, ResourceExt};
use rbuilder_testing::envtest::{Environment, from_yaml, step};

use demo_microservice::OPERATOR;
use demo_microservice::api::v1;
use demo_microservice::webhook::v1::demo_micro_service::DEFAULTING;

/// The sample of `config/samples`, as `kubectl apply -k config/samples` applies it.
const SAMPLE: &str = include_str!("../../config/samples/devops_v1_demomicroservice.yaml");

/// The `app.kubernetes.io/name` label the defaulter sets.
const NAME: &str = "demomicroservice";

/// A DemoMicroService created without the `app.kubernetes.io/name` label gets it from the
/// defaulting webhook.
#[tokio::test]
async fn the_defaulter_sets_the_name_label() {
    let env = Environment::shared(&OPERATOR).await;
    let api: Api<v1::DemoMicroService> = env.api();
    let mut sample: v1::DemoMicroService = from_yaml(SAMPLE);
    sample.metadata.labels = None;

    step("create the sample without labels");
    let created = env.apply(&api, &sample).await;
    let label = created.labels().get("app.kubernetes.io/name");
    assert_eq!(label.map(String::as_str), Some(NAME));
    assert!(env.webhook_calls(&DEFAULTING) > 0);
}

/// The sample is admitted, and an image without a tag is refused by the validating webhook,
/// with its message.
#[tokio::test]
async fn the_validator_refuses_an_untagged_image() {
    let env = Environment::shared(&OPERATOR).await;
    let api: Api<v1::DemoMicroService> = env.api();
    let mut sample: v1::DemoMicroService = from_yaml(SAMPLE);

    step("the sample is admitted");
    env.apply(&api, &sample).await;

    step("the same with an image without a tag is refused");
    sample.metadata.name = Some("untagged".into());
    sample.spec.image = "nginx".into();
    let refused = env.try_apply(&api, &sample).await;
    let error = refused.expect_err("an image without a tag is refused");
    let message = error.to_string();
    let expected = "denied the request: spec.image 'nginx' must name a tag";
    assert!(message.contains(expected), "{message}");
}
