//! The versions of what generated projects build against: one place, read by the
//! templates (Cargo.toml, Dockerfile, CI) and by `rbuilder version`. Checked together on
//! 2026-11; bump them together, then run the generated-project tests.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Versions {
    pub kube: &'static str,
    pub k8s_openapi: &'static str,
    /// The k8s-openapi feature choosing the Kubernetes API version compiled in.
    pub k8s_openapi_feature: &'static str,
    pub kubernetes: &'static str,
    pub schemars: &'static str,
    pub serde_saphyr: &'static str,
    /// The Rust toolchain image the generated Dockerfile builds with.
    pub rust: &'static str,
}

pub const VERSIONS: Versions = Versions {
    kube: "5.0",
    k8s_openapi: "0.29",
    k8s_openapi_feature: "v1_37",
    kubernetes: "1.37",
    schemars: "1",
    serde_saphyr: "2.2",
    rust: "1.95",
};
