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

//! The `Leviathan` kind (`sea-creatures.testproject.org/v1beta2`), with the API its CRD had in the
//! kubebuilder project it was migrated from
//! (config/crd/kubebuilder/sea-creatures.testproject.org_leviathans.yaml): `make manifests` writes
//! the same schema from these types. Edit them to change the API, then run `make manifests`.
//!
//! An optional field is an `Option` whose schema is its type's (`#[schemars(with = ...)]`, which
//! keeps kube-derive from making it nullable); `#[schemars(extend(...))]` writes what schemars has
//! no attribute for, as the CRD has it.
#![allow(clippy::doc_lazy_continuation, clippy::doc_overindented_list_items)]

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// spec defines the desired state of Leviathan
#[derive(CustomResource, Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
#[kube(group = "sea-creatures.testproject.org", version = "v1beta2")]
#[kube(kind = "Leviathan", plural = "leviathans")]
#[kube(namespaced)]
#[kube(status = "LeviathanStatus")]
#[kube(doc = "Leviathan is the Schema for the leviathans API")]
#[kube(derive = "Default", derive = "PartialEq")]
pub struct LeviathanSpec {
    /// foo is an example field of Leviathan. Edit leviathan_types.go to remove/update
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub foo: Option<String>,
}

/// status defines the observed state of Leviathan
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
pub struct LeviathanStatus {
    /// conditions represent the current state of the Leviathan resource.
    /// Each condition has a unique type and reflects the status of a specific aspect of the resource.
    ///
    /// Standard condition types include:
    /// - "Available": the resource is fully functional
    /// - "Progressing": the resource is being created or updated
    /// - "Degraded": the resource failed to reach or maintain its desired state
    ///
    /// The status of each condition is one of True, False, or Unknown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "rbuilder_runtime::conditions::schema")]
    pub conditions: Vec<metav1::Condition>,
}
