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

//! The `Bar` kind (`foo.testproject.org/v1`).
//!
//! Edit the spec and status below to define your API, then run `make manifests` to regenerate
//! the CRD. Only lower-case module aliases are imported here, so that any kind name (even
//! `Condition` or `Error`) can be defined in this file without clashing.

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;

/// BarSpec defines the desired state of a Bar.
#[derive(
    kube::CustomResource,
    schemars::JsonSchema,
    serde::Serialize,
    serde::Deserialize,
    Clone,
    Debug,
    Default,
)]
#[kube(
    group = "foo.testproject.org",
    version = "v1",
    kind = "Bar",
    plural = "bars",
    namespaced,
    status = "BarStatus",
    doc = "Bar is the Schema for the bars API."
)]
#[serde(rename_all = "camelCase")]
pub struct BarSpec {
    /// An example field of Bar: edit `src/api/foo/v1/bar.rs` to remove or update it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foo: Option<String>,
}

/// BarStatus defines the observed state of a Bar.
#[derive(
    schemars::JsonSchema, serde::Serialize, serde::Deserialize, Clone, Debug, Default, PartialEq,
)]
#[serde(rename_all = "camelCase")]
pub struct BarStatus {
    /// The current state of the Bar. `Ready` is `True` once the latest spec (see
    /// `observedGeneration`) has been reconciled.
    /// Listed as a map keyed by `type`, so that server-side apply merges conditions one by one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "rbuilder_runtime::conditions::schema")]
    pub conditions: Vec<metav1::Condition>,

    /// The `metadata.generation` that the status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
