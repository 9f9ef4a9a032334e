// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The integration tests of the webhooks of `Site` v1beta1: the API server calls them
//! (see `main.rs`). They check what the scaffolded webhooks do: change them with the webhooks.
//! The custom resource type is referred to as `v1beta1::Site`, so that no kind name can
//! clash with the names used here.

use kube::Api;
use rbuilder_testing::envtest::{Environment, from_yaml, step};

use multigroup::OPERATOR;
use multigroup::api::web_apps::v1beta1;
use multigroup::webhook::web_apps::v1beta1::site::VALIDATING;

/// The sample of `config/samples`, as `kubectl apply -k config/samples` applies it.
const SAMPLE: &str = include_str!("../../../config/samples/web-apps_v1beta1_site.yaml");

/// The sample is admitted by the validating webhook, which the API server calls.
#[tokio::test]
async fn the_validator_admits_the_sample() {
    let env = Environment::shared(&OPERATOR).await;
    let api: Api<v1beta1::Site> = env.api();
    let sample: v1beta1::Site = from_yaml(SAMPLE);

    step("the sample is admitted");
    env.apply(&api, &sample).await;
    assert!(env.webhook_calls(&VALIDATING) > 0);
}
