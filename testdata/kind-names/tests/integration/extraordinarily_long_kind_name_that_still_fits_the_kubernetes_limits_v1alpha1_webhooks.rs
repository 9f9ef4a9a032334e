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

//! The integration tests of the webhooks of `ExtraordinarilyLongKindNameThatStillFitsTheKubernetesLimits` v1alpha1: the API server calls them
//! (see `main.rs`). They check what the scaffolded webhooks do: change them with the webhooks.
//! The custom resource type is referred to as `v1alpha1::ExtraordinarilyLongKindNameThatStillFitsTheKubernetesLimits`, so that no kind name can
//! clash with the names used here.

use kube::{Api, ResourceExt};
use rbuilder_testing::envtest::{Environment, from_yaml, step};

use kind_names::OPERATOR;
use kind_names::api::v1alpha1;
use kind_names::webhook::v1alpha1::extraordinarily_long_kind_name_that_still_fits_the_kubernetes_limits::DEFAULTING;
use kind_names::webhook::v1alpha1::extraordinarily_long_kind_name_that_still_fits_the_kubernetes_limits::VALIDATING;

/// The sample of `config/samples`, as `kubectl apply -k config/samples` applies it.
const SAMPLE: &str = include_str!(
    "../../config/samples/devops_v1alpha1_extraordinarilylongkindnamethatstillfitsthekuberneteslimits.yaml"
);

/// The `app.kubernetes.io/name` label the defaulter sets.
const NAME: &str = "extraordinarilylongkindnamethatstillfitsthekuberneteslimits";

/// An ExtraordinarilyLongKindNameThatStillFitsTheKubernetesLimits created without the `app.kubernetes.io/name` label gets it from the
/// defaulting webhook.
#[tokio::test]
async fn the_defaulter_sets_the_name_label() {
    let env = Environment::shared(&OPERATOR).await;
    let api: Api<v1alpha1::ExtraordinarilyLongKindNameThatStillFitsTheKubernetesLimits> = env.api();
    let mut sample: v1alpha1::ExtraordinarilyLongKindNameThatStillFitsTheKubernetesLimits =
        from_yaml(SAMPLE);
    sample.metadata.labels = None;

    step("create the sample without labels");
    let created = env.apply(&api, &sample).await;
    let label = created.labels().get("app.kubernetes.io/name");
    assert_eq!(label.map(String::as_str), Some(NAME));
    assert!(env.webhook_calls(&DEFAULTING) > 0);
}

/// The sample is admitted by the validating webhook, which the API server calls.
#[tokio::test]
async fn the_validator_admits_the_sample() {
    let env = Environment::shared(&OPERATOR).await;
    let api: Api<v1alpha1::ExtraordinarilyLongKindNameThatStillFitsTheKubernetesLimits> = env.api();
    let sample: v1alpha1::ExtraordinarilyLongKindNameThatStillFitsTheKubernetesLimits =
        from_yaml(SAMPLE);

    step("the sample is admitted");
    env.apply(&api, &sample).await;
    assert!(env.webhook_calls(&VALIDATING) > 0);
}
