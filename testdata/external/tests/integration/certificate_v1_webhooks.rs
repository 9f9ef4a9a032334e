// Copyright 2026 The external Authors.
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

//! The integration tests of the webhooks of `Certificate` v1: the API server calls them
//! (see `main.rs`) once the CRD of this other project's custom resource is installed, as in
//! the cluster the operator runs in. The type is referred to as `v1::Certificate`, so that no
//! kind name can clash with the names used here.

use kube::Api;
use rbuilder_testing::envtest::{Environment, step};

use external::OPERATOR;
use external::api::external::cert_manager::v1;
use external::webhook::v1::certificate::VALIDATING;

/// The CRD its types were made from (`path` in PROJECT): another project's, which the
/// environment does not install with the operator's own.
const CRD: &str = include_str!("../../../crds/cert-manager/certificates.cert-manager.io.yaml");

/// A new Certificate goes through the webhooks, which the API server calls.
#[tokio::test]
async fn the_api_server_calls_the_webhooks() {
    let env = Environment::shared(&OPERATOR).await;
    env.install_crds(CRD).await;
    let api: Api<v1::Certificate> = env.api();
    let mut obj = v1::Certificate::default();
    obj.metadata.name = Some("sample".into());

    step("create the sample");
    env.apply(&api, &obj).await;
    assert!(env.webhook_calls(&VALIDATING) > 0);
}
