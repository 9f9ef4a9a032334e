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

//! The `Order` kind (`shop.example.com/v1`), with the API its CRD had in the kubebuilder project it
//! was migrated from (config/crd/kubebuilder/shop.example.com_orders.yaml): `make manifests` writes
//! the same schema from these types. Edit them to change the API, then run `make manifests`.
//!
//! An optional field is an `Option` whose schema is its type's (`#[schemars(with = ...)]`, which
//! keeps kube-derive from making it nullable); `#[schemars(extend(...))]` writes what schemars has
//! no attribute for, as the CRD has it.
#![allow(clippy::doc_lazy_continuation, clippy::doc_overindented_list_items)]

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// spec defines the desired state of Order
#[derive(CustomResource, Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
#[kube(group = "shop.example.com", version = "v1")]
#[kube(kind = "Order", plural = "orders")]
#[kube(namespaced)]
#[kube(shortname = "ord")]
#[kube(shortname = "ords")]
#[kube(category = "shop")]
#[kube(status = "OrderStatus")]
#[kube(scale(
    spec_replicas_path = ".spec.replicas",
    status_replicas_path = ".status.replicas",
    label_selector_path = ".status.selector"
))]
#[kube(printcolumn = r#"{"jsonPath":".spec.priority","name":"Priority","type":"string"}"#)]
#[kube(
    printcolumn = r#"{"description":"total price","jsonPath":".status.total","name":"Total","priority":1,"type":"string"}"#
)]
#[kube(printcolumn = r#"{"jsonPath":".metadata.creationTimestamp","name":"Age","type":"date"}"#)]
#[kube(doc = "Order is the Schema for the orders API")]
#[kube(validation = kube::core::Rule::new("self.metadata.name.size() <= 40").message("name too long"))]
#[kube(derive = "Default", derive = "PartialEq")]
pub struct OrderSpec {
    /// code is immutable once set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    #[schemars(extend("x-kubernetes-validations" = [{"message": "code is immutable", "reason": "FieldValueForbidden", "rule": "self == oldSelf"}, {"messageExpression": "'code must not be empty, got ' + self", "rule": "self.size() > 0"}]))]
    pub code: Option<String>,

    /// deadline by which the order must be delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "metav1::Time")]
    pub deadline: Option<metav1::Time>,

    /// delivery details; a nested struct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "OrderSpecDelivery")]
    pub delivery: Option<OrderSpecDelivery>,

    /// discount in percent, a multiple of 5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "i64", range(min = 0, max = 50))]
    #[schemars(extend("exclusiveMinimum" = true))]
    #[schemars(extend("multipleOf" = 5))]
    pub discount: Option<i64>,

    /// extra holds anything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Value")]
    #[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
    pub extra: Option<Value>,

    /// items of the order, at least one.
    #[schemars(length(min = 1))]
    #[schemars(extend("x-kubernetes-list-map-keys" = ["sku"]))]
    #[schemars(extend("x-kubernetes-list-type" = "map"))]
    pub items: Vec<OrderSpecItems>,

    /// labels to attach, at most 5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "BTreeMap<String, String>")]
    #[schemars(extend("maxProperties" = 5))]
    pub labels: Option<BTreeMap<String, String>>,

    /// matrix is a list of lists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<Vec<i32>>")]
    pub matrix: Option<Vec<Vec<i32>>>,

    /// notes, free text; nullable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    #[schemars(extend("nullable" = true))]
    pub notes: Option<String>,

    /// priority of the order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "OrderSpecPriority")]
    #[schemars(extend("default" = "Normal"))]
    pub priority: Option<OrderSpecPriority>,

    /// ratio is a float.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64")]
    #[schemars(extend("format" = null))]
    pub ratio: Option<f64>,

    /// replicas for the scale subresource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "i32")]
    pub replicas: Option<i32>,

    /// retries is an untyped integer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "i64")]
    #[schemars(extend("format" = null))]
    pub retries: Option<i64>,

    /// secretRef names a Secret in the order's namespace.
    #[serde(rename = "secretRef")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "OrderSpecSecretRef")]
    pub secret_ref: Option<OrderSpecSecretRef>,

    /// template is an embedded object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Value")]
    #[schemars(extend("type" = "object"))]
    #[schemars(extend("x-kubernetes-embedded-resource" = true))]
    #[schemars(extend("x-kubernetes-preserve-unknown-fields" = true))]
    pub template: Option<Value>,

    /// weights of the items by SKU, in kilograms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "BTreeMap<String, Quantity>")]
    #[schemars(extend("additionalProperties" = {"pattern": r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$", "x-kubernetes-int-or-string": true}))]
    pub weights: Option<BTreeMap<String, Quantity>>,
}

/// delivery details; a nested struct.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
pub struct OrderSpecDelivery {
    /// address to deliver to
    pub address: OrderSpecDeliveryAddress,

    /// contact is an email address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    #[schemars(extend("format" = "email"))]
    pub contact: Option<String>,

    /// port to call, a number or a name
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "IntOrString")]
    #[schemars(extend("nullable" = null))]
    pub port: Option<IntOrString>,

    /// window during which to deliver, e.g. "2h"
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub window: Option<String>,
}

/// address to deliver to
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
#[schemars(extend("x-kubernetes-map-type" = "atomic"))]
pub struct OrderSpecDeliveryAddress {
    /// city
    pub city: String,

    /// location, as latitude and longitude
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<i64>", length(min = 2, max = 2))]
    pub location: Option<Vec<i64>>,

    /// street and number
    #[schemars(length(min = 1, max = 200))]
    pub street: String,

    /// zip code
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub zip: Option<String>,
}

/// Item is one line of an order.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
#[schemars(extend("x-kubernetes-validations" = [{"message": "more than 100 needs bulk", "rule": "self.quantity <= 100 || self.bulk"}]))]
pub struct OrderSpecItems {
    /// bulk allows large quantities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub bulk: Option<bool>,

    /// price per unit, a quantity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Quantity")]
    #[schemars(extend("nullable" = null))]
    #[schemars(extend("pattern" = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"))]
    pub price: Option<Quantity>,

    /// quantity is how many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "i32", range(min = 1, max = 1000))]
    #[schemars(extend("default" = 1))]
    pub quantity: Option<i32>,

    /// sku identifies the product.
    #[schemars(regex(pattern = "^[A-Z]{3}-[0-9]{4}$"))]
    pub sku: String,

    /// tags are free labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<String>", length(max = 10), inner(length(min = 1)))]
    #[schemars(extend("x-kubernetes-list-type" = "set"))]
    pub tags: Option<Vec<String>>,
}

/// priority of the order.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OrderSpecPriority {
    Low,
    #[default]
    Normal,
    High,
    #[serde(rename = "Very-High")]
    VeryHigh,
}

/// secretRef names a Secret in the order's namespace.
#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]
#[schemars(extend("x-kubernetes-map-type" = "atomic"))]
pub struct OrderSpecSecretRef {
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    #[schemars(extend("default" = ""))]
    pub name: Option<String>,
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

    /// observedGeneration is the generation the status was computed from.
    #[serde(rename = "observedGeneration")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "i64")]
    pub observed_generation: Option<i64>,

    /// replicas counted for the scale subresource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "i32")]
    pub replicas: Option<i32>,

    /// selector for the scale subresource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub selector: Option<String>,

    /// shippedAt is when the order left.
    #[serde(rename = "shippedAt")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "metav1::Time")]
    pub shipped_at: Option<metav1::Time>,

    /// total price of the order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Quantity")]
    #[schemars(extend("nullable" = null))]
    #[schemars(extend("pattern" = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"))]
    pub total: Option<Quantity>,
}
