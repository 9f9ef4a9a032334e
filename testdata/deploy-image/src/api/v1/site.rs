// Copyright 2026 Acme Robotics, Inc.
//
// Proprietary and confidential. Do not distribute without written permission
// from Acme Robotics, Inc.

//! The `Site` kind (`cache.example.com/v1`).
//!
//! Edit the spec and status below to define your API, then run `make manifests` to regenerate
//! the CRD. Only lower-case module aliases are imported here, so that any kind name (even
//! `Condition` or `Error`) can be defined in this file without clashing.

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;

/// SiteSpec defines the desired state of a Site.
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
    group = "cache.example.com",
    version = "v1",
    kind = "Site",
    plural = "sites",
    namespaced,
    status = "SiteStatus",
    doc = "Site is the Schema for the sites API."
)]
#[serde(rename_all = "camelCase")]
pub struct SiteSpec {
    /// An example field of Site: edit `src/api/v1/site.rs` to remove or update it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foo: Option<String>,
}

/// SiteStatus defines the observed state of a Site.
#[derive(
    schemars::JsonSchema, serde::Serialize, serde::Deserialize, Clone, Debug, Default, PartialEq,
)]
#[serde(rename_all = "camelCase")]
pub struct SiteStatus {
    /// The current state of the Site. `Ready` is `True` once the latest spec (see
    /// `observedGeneration`) has been reconciled.
    /// Listed as a map keyed by `type`, so that server-side apply merges conditions one by one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "rbuilder_runtime::conditions::schema")]
    pub conditions: Vec<metav1::Condition>,

    /// The `metadata.generation` that the status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
