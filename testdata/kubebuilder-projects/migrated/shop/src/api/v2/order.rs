// Copyright 2026.
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

//! The `Order` kind (`shop.example.com/v2`), with the API its CRD had in the kubebuilder project it
//! was migrated from (config/crd/kubebuilder/shop.example.com_orders.yaml): `make manifests` writes
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

/// spec defines the desired state of Order
#[derive(CustomResource, Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
#[kube(group = "shop.example.com", version = "v2")]
#[kube(kind = "Order", plural = "orders")]
#[kube(namespaced)]
#[kube(shortname = "ord")]
#[kube(shortname = "ords")]
#[kube(category = "shop")]
#[kube(status = "OrderStatus")]
#[kube(storage = false)]
#[kube(doc = "Order is the Schema for the orders API")]
#[kube(derive = "Default", derive = "PartialEq")]
pub struct OrderSpec {
    /// lines of the order.
    pub lines: Vec<OrderSpecLines>,

    /// note is a free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(max = 500))]
    pub note: Option<String>,

    /// urgency from 1 to 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "i32")]
    #[schemars(extend("default" = 2))]
    #[schemars(extend("enum" = [1, 2, 3]))]
    pub urgency: Option<i32>,
}

/// Line is one line of an order.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
pub struct OrderSpecLines {
    /// count of units
    #[schemars(range(min = 1))]
    pub count: i32,

    /// product code
    pub product: String,
}

/// status defines the observed state of Order
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
pub struct OrderStatus {
    /// conditions represent the current state of the Order resource.
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
