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

//! The integration tests of the webhooks of `Memcached` v1alpha1: the API server calls them
//! (see `main.rs`). They check what the scaffolded webhooks do: change them with the webhooks.
//! The custom resource type is referred to as `v1alpha1::Memcached`, so that no kind name can
//! clash with the names used here.

use kube::Api;
use rbuilder_testing::envtest::{Environment, from_yaml, step};

use project_v4_multigroup::OPERATOR;
use project_v4_multigroup::api::example_com::v1alpha1;
use project_v4_multigroup::webhook::example_com::v1alpha1::memcached::VALIDATING;

/// The sample of `config/samples`, as `kubectl apply -k config/samples` applies it.
const SAMPLE: &str = include_str!("../../../config/samples/example.com_v1alpha1_memcached.yaml");

/// The sample is admitted by the validating webhook, which the API server calls.
#[tokio::test]
async fn the_validator_admits_the_sample() {
    let env = Environment::shared(&OPERATOR).await;
    let api: Api<v1alpha1::Memcached> = env.api();
    let sample: v1alpha1::Memcached = from_yaml(SAMPLE);

    step("the sample is admitted");
    env.apply(&api, &sample).await;
    assert!(env.webhook_calls(&VALIDATING) > 0);
}
