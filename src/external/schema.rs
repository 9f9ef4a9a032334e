//! The part of a CRD's `openAPIV3Schema` (Kubernetes' JSONSchemaProps) that decides the shape
//! of the Rust types. A structural schema (apiextensions.k8s.io/v1 requires one) gives every
//! node a `type`, except int-or-string and preserve-unknown-fields nodes; `allOf`, `anyOf`,
//! `oneOf` and `not` only validate, so they are not read for the shape. The other keywords
//! (validations, defaults, the `x-kubernetes-*` list and map types) are kept as they are, for
//! the types of a project's own kind, whose CRD is made from them (`derived`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Schema {
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, Schema>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Box<Schema>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_properties: Option<AdditionalProperties>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nullable: bool,
    #[serde(
        default,
        rename = "x-kubernetes-int-or-string",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub int_or_string: bool,
    #[serde(
        default,
        rename = "x-kubernetes-preserve-unknown-fields",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub preserve_unknown_fields: bool,
    #[serde(
        default,
        rename = "x-kubernetes-embedded-resource",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub embedded_resource: bool,
    /// Every other keyword, as the CRD has it: `minimum`, `enum`, `default`,
    /// `x-kubernetes-validations`, `x-kubernetes-list-type`, ...
    #[serde(flatten)]
    pub keywords: BTreeMap<String, Value>,
}

/// `additionalProperties`: a schema for a map's values, or `true` (any value) / `false`.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum AdditionalProperties {
    Allowed(bool),
    Schema(Box<Schema>),
}

impl Schema {
    /// The node as the CRD has it, every keyword included.
    pub fn node(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(node)) => node,
            _ => Map::new(),
        }
    }
}
