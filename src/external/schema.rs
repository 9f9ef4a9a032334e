//! The part of a CRD's `openAPIV3Schema` (Kubernetes' JSONSchemaProps) that decides the shape
//! of the Rust types. A structural schema (apiextensions.k8s.io/v1 requires one) gives every
//! node a `type`, except int-or-string and preserve-unknown-fields nodes; `allOf`, `anyOf`,
//! `oneOf` and `not` only validate, so they are not read.

use std::collections::BTreeMap;

use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Schema {
    #[serde(default, rename = "type")]
    pub type_: Option<String>,
    #[serde(default)]
    pub format: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub properties: BTreeMap<String, Schema>,
    #[serde(default)]
    pub required: Vec<String>,
    #[serde(default)]
    pub items: Option<Box<Schema>>,
    #[serde(default)]
    pub additional_properties: Option<AdditionalProperties>,
    #[serde(default)]
    pub nullable: bool,
    #[serde(default, rename = "x-kubernetes-int-or-string")]
    pub int_or_string: bool,
    #[serde(default, rename = "x-kubernetes-preserve-unknown-fields")]
    pub preserve_unknown_fields: bool,
    #[serde(default, rename = "x-kubernetes-embedded-resource")]
    pub embedded_resource: bool,
}

/// `additionalProperties`: a schema for a map's values, or `true` (any value) / `false`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum AdditionalProperties {
    Allowed(bool),
    Schema(Box<Schema>),
}
