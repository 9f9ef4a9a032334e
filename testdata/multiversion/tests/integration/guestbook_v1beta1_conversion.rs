// Copyright 2026 The multiversion Authors.
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

//! The integration tests of the conversion of `Guestbook` v1beta1 to and from
//! the hub, v1, which the API server asks the webhook for (see `main.rs`).

use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use rbuilder_testing::envtest::{Environment, from_yaml, step};
use serde_json::json;

use multiversion::OPERATOR;
use multiversion::api::{v1alpha1, v1beta1};
use multiversion::webhook::v1beta1::guestbook_conversion::CONVERSION;

/// The sample of v1alpha1, the version stored, from `config/samples`.
const SAMPLE: &str = include_str!("../../config/samples/devops_v1alpha1_guestbook.yaml");

/// The sample, created in v1alpha1, reads in v1beta1 and takes a change
/// made there; read back in v1alpha1, it has the spec it had: a round trip
/// through the webhook keeps every field.
#[tokio::test]
async fn the_sample_converts_both_ways() {
    let env = Environment::shared(&OPERATOR).await;
    let stored: Api<v1alpha1::Guestbook> = env.api();
    let converted: Api<v1beta1::Guestbook> = env.api();
    let sample: v1alpha1::Guestbook = from_yaml(SAMPLE);
    let name = sample.name_any();

    step(format!("create {name} in v1alpha1"));
    let created = env.apply(&stored, &sample).await;

    step("read it in v1beta1, and label it there");
    let read = converted.get(&name).await.expect("the object, in v1beta1");
    assert_eq!(read.metadata.uid, created.metadata.uid);
    let label = json!({"metadata": {"labels": {"written-in": "v1beta1"}}});
    let params = PatchParams::default();
    converted
        .patch(&name, &params, &Patch::Merge(&label))
        .await
        .expect("a change made in v1beta1");

    step("read it back in v1alpha1: the same spec, and the label");
    let back = stored.get(&name).await.expect("the object, in v1alpha1");
    assert_eq!(json!(back.spec), json!(created.spec));
    let written_in = back.labels().get("written-in").map(String::as_str);
    assert_eq!(written_in, Some("v1beta1"));
    assert!(env.webhook_calls(&CONVERSION) > 0);
}
