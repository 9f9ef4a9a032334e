//! The versions of what generated projects build against: one place, read by the
//! templates (Cargo.toml, Dockerfile, CI) and by `rbuilder version`. The crates' versions are
//! those of the runtime's manifest, `runtime/core/Cargo.toml` (read by build.rs), which rbuilder's
//! own `cargo test` builds and tests against: bump them there, then run the generated-project
//! tests.

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
    /// The envtest release (kube-apiserver, etcd, kubectl, published by controller-tools) that
    /// a generated project's `make setup-envtest` downloads: a release of `kubernetes` that
    /// exists (rbuilder's own tests build the patch release tools/envtest/go.mod pins).
    pub envtest: &'static str,
    /// The kind release the e2e workflow and the dev container create local clusters with.
    pub kind: &'static str,
}

/// rbuilder's own version as `rbuilder --version` and `rbuilder version` show it: the crate's
/// version and the commit it was built from, with the commit's day (`0.1.0 (commit
/// 0123456789ab, 2026-12-05)`), as `kubebuilder version` shows its GitCommit; the crate's
/// version alone when built outside a git checkout.
pub const RBUILDER: &str = match env!("RBUILDER_COMMIT").is_empty() {
    true => env!("CARGO_PKG_VERSION"),
    false => concat!(
        env!("CARGO_PKG_VERSION"),
        " (commit ",
        env!("RBUILDER_COMMIT"),
        ", ",
        env!("RBUILDER_COMMIT_DATE"),
        ")"
    ),
};

pub const VERSIONS: Versions = Versions {
    kube: env!("RUNTIME_KUBE"),
    k8s_openapi: env!("RUNTIME_K8S_OPENAPI"),
    k8s_openapi_feature: env!("RUNTIME_K8S_OPENAPI_FEATURE"),
    kubernetes: env!("RUNTIME_KUBERNETES"),
    schemars: env!("RUNTIME_SCHEMARS"),
    serde_saphyr: env!("RUNTIME_SERDE_SAPHYR"),
    rust: "1.95",
    envtest: "1.37.0",
    kind: "v0.32.0",
};

#[cfg(test)]
mod tests {
    /// Generated projects test against the Kubernetes release their types are compiled for,
    /// and so do rbuilder's own tests.
    #[test]
    fn the_api_servers_tested_against_are_of_the_kubernetes_version() {
        let minor = format!("{}.", super::VERSIONS.kubernetes);
        assert!(super::VERSIONS.envtest.starts_with(&minor), "{minor}");
        let go_mod = include_str!("../tools/envtest/go.mod");
        let pinned = format!("k8s.io/kubernetes v{minor}");
        assert!(
            go_mod.contains(&pinned),
            "tools/envtest/go.mod lacks {pinned}"
        );
    }

    /// The manifests of the runtime's crates, by their folder in a project.
    const RUNTIME_MANIFESTS: [(&str, &str); 4] = [
        ("runtime", include_str!("../embedded/runtime-Cargo.toml")),
        (
            "runtime/core",
            include_str!("../embedded/runtime-core-Cargo.toml"),
        ),
        (
            "runtime/manifests",
            include_str!("../embedded/runtime-manifests-Cargo.toml"),
        ),
        (
            "runtime/testing",
            include_str!("../embedded/runtime-testing-Cargo.toml"),
        ),
    ];

    /// The runtime written into a project carries the version of the rbuilder that wrote it,
    /// in each of its crates.
    #[test]
    fn the_runtime_is_versioned_with_rbuilder() {
        let version = format!("\nversion = \"{}\"\n", env!("CARGO_PKG_VERSION"));
        for (path, manifest) in RUNTIME_MANIFESTS {
            assert!(
                manifest.contains(&version),
                "{path}/Cargo.toml lacks {version:?}"
            );
        }
    }

    /// The versions projects build against are read from runtime/core/Cargo.toml alone; the
    /// other runtime crates name the same crates, and must name them at the same versions (a
    /// bump made in one manifest only would build two kubes, or fail to resolve).
    #[test]
    fn the_runtimes_crates_pin_the_versions_the_core_does() {
        let pinned = [
            ("kube", super::VERSIONS.kube),
            ("k8s-openapi", super::VERSIONS.k8s_openapi),
            ("schemars", super::VERSIONS.schemars),
            ("serde-saphyr", super::VERSIONS.serde_saphyr),
        ];
        for (path, manifest) in RUNTIME_MANIFESTS {
            for line in manifest.lines() {
                for (name, version) in pinned {
                    let Some(rest) = line.strip_prefix(&format!("{name} = ")) else {
                        continue;
                    };
                    let named = rest.strip_prefix("{ version = ").unwrap_or(rest);
                    let named = named.split('"').nth(1).unwrap_or_default();
                    assert_eq!(named, version, "{path}/Cargo.toml: {line}");
                }
            }
        }
        let feature = format!("\"{}\"", super::VERSIONS.k8s_openapi_feature);
        for (path, manifest) in RUNTIME_MANIFESTS {
            for line in manifest.lines().filter(|l| l.starts_with("k8s-openapi = ")) {
                assert!(line.contains(&feature), "{path}/Cargo.toml: {line}");
            }
        }
    }
}
