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

//! The integration tests of the conversion of `Wordpress` v2 to and from
//! the hub, v1, which the API server asks the webhook for (see `main.rs`).

use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use rbuilder_testing::envtest::{Environment, from_yaml, step};
use serde_json::json;

use project_v4_with_plugins::OPERATOR;
use project_v4_with_plugins::api::{v1, v2};
use project_v4_with_plugins::webhook::v2::wordpress_conversion::CONVERSION;

/// The sample of v1, the version stored, from `config/samples`.
const SAMPLE: &str = include_str!("../../config/samples/example.com_v1_wordpress.yaml");

/// The sample, created in v1, reads in v2 and takes a change
/// made there; read back in v1, it has the spec it had: a round trip
/// through the webhook keeps every field.
#[tokio::test]
async fn the_sample_converts_both_ways() {
    let env = Environment::shared(&OPERATOR).await;
    let stored: Api<v1::Wordpress> = env.api();
    let converted: Api<v2::Wordpress> = env.api();
    let sample: v1::Wordpress = from_yaml(SAMPLE);
    let name = sample.name_any();

    step(format!("create {name} in v1"));
    let created = env.apply(&stored, &sample).await;

    step("read it in v2, and label it there");
    let read = converted.get(&name).await.expect("the object, in v2");
    assert_eq!(read.metadata.uid, created.metadata.uid);
    let label = json!({"metadata": {"labels": {"written-in": "v2"}}});
    let params = PatchParams::default();
    converted
        .patch(&name, &params, &Patch::Merge(&label))
        .await
        .expect("a change made in v2");

    step("read it back in v1: the same spec, and the label");
    let back = stored.get(&name).await.expect("the object, in v1");
    assert_eq!(json!(back.spec), json!(created.spec));
    let written_in = back.labels().get("written-in").map(String::as_str);
    assert_eq!(written_in, Some("v2"));
    assert!(env.webhook_calls(&CONVERSION) > 0);
}
