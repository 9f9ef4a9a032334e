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

//! The `Memcached` kind (`example.com.testproject.org/v1alpha1`): runs a container image as a Deployment.
//!
//! Only lower-case module aliases are imported here, so that any kind name (even `Condition` or
//! `Deployment`) can be defined in this file without clashing.

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;

/// MemcachedSpec defines the desired state of a Memcached.
#[derive(
    kube::CustomResource, kube::KubeSchema, serde::Serialize, serde::Deserialize, Clone, Debug,
)]
#[kube(
    group = "example.com.testproject.org",
    version = "v1alpha1",
    kind = "Memcached",
    plural = "memcacheds",
    namespaced,
    status = "MemcachedStatus",
    doc = "Memcached runs a container image as a Deployment.",
    // The name becomes a label value of the Deployment and its pods, which Kubernetes limits
    // to 63 characters; without this rule a longer name would fail only in the reconciler.
    validation = kube::core::Rule::new("self.metadata.name.size() <= 63")
        .message("metadata.name must be at most 63 characters (it labels the Deployment)"),
    printcolumn(name = "Image", type_ = "string", json_path = ".spec.image"),
    printcolumn(name = "Ready", type_ = "integer", json_path = ".status.readyReplicas"),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedSpec {
    /// The container image to run, e.g. `memcached:1.6.26-alpine3.19`.
    #[schemars(length(min = 1))]
    pub image: String,

    /// How many pods to run. Leave it unset to let something else scale the Deployment, e.g. a
    /// HorizontalPodAutoscaler or `kubectl scale`; a new Deployment then starts with one pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub replicas: Option<i32>,

    /// The port the container listens on, declared as its container port.
    #[serde(default = "default_port", skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,
}

impl MemcachedSpec {
    /// Used when `spec.port` is not set (also written into the CRD as the default).
    pub const DEFAULT_PORT: i32 = 11211;
}

fn default_port() -> Option<i32> {
    Some(MemcachedSpec::DEFAULT_PORT)
}

/// MemcachedStatus defines the observed state of a Memcached.
#[derive(
    schemars::JsonSchema, serde::Serialize, serde::Deserialize, Clone, Debug, Default, PartialEq,
)]
#[serde(rename_all = "camelCase")]
pub struct MemcachedStatus {
    /// `Available`, `Progressing` and `Degraded`, derived from the Deployment's status.
    /// Listed as a map keyed by `type`, so that server-side apply merges conditions one by one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "rbuilder_runtime::conditions::schema")]
    pub conditions: Vec<metav1::Condition>,

    /// Pods of the Deployment that are ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ready_replicas: Option<i32>,

    /// The `metadata.generation` that the status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
