//! Rebuilds when a template or the runtime changes (include_dir! only tracks the files that
//! existed at the last build), and reads the versions generated projects build against from
//! the runtime's manifest, `runtime/Cargo.toml`: the one place they are written (see
//! src/versions.rs).

use std::fs;

fn main() {
    // The runtime through embedded/, its links, which the packaged crate holds as files.
    println!("cargo:rerun-if-changed=templates");
    println!("cargo:rerun-if-changed=embedded/runtime-src");
    println!("cargo:rerun-if-changed=embedded/runtime-Cargo.toml");
    let manifest = match fs::read_to_string("embedded/runtime-Cargo.toml") {
        Ok(manifest) => manifest,
        Err(error) => panic!("cannot read runtime/Cargo.toml: {error}"),
    };
    for (variable, crate_name) in [
        ("RUNTIME_KUBE", "kube"),
        ("RUNTIME_K8S_OPENAPI", "k8s-openapi"),
        ("RUNTIME_SCHEMARS", "schemars"),
        ("RUNTIME_SERDE_SAPHYR", "serde-saphyr"),
    ] {
        let version = dependency_version(&manifest, crate_name);
        println!("cargo:rustc-env={variable}={version}");
    }
    // The Kubernetes version is k8s-openapi's feature, e.g. "v1_37".
    let feature = manifest
        .lines()
        .find(|line| line.starts_with("k8s-openapi = "))
        .and_then(|line| line.split('"').find(|word| word.starts_with("v1_")))
        .unwrap_or_else(|| panic!("runtime/Cargo.toml: k8s-openapi has no v1_<minor> feature"));
    println!("cargo:rustc-env=RUNTIME_K8S_OPENAPI_FEATURE={feature}");
    let kubernetes = feature.trim_start_matches('v').replace('_', ".");
    println!("cargo:rustc-env=RUNTIME_KUBERNETES={kubernetes}");
}

/// The version of `crate_name` in the `[dependencies]` of `manifest`: the first line
/// `<crate_name> = "<version>"` or `<crate_name> = { version = "<version>", ... }`.
fn dependency_version<'a>(manifest: &'a str, crate_name: &str) -> &'a str {
    let prefix = format!("{crate_name} = ");
    manifest
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|rest| {
            let rest = rest.strip_prefix("{ version = ").unwrap_or(rest);
            rest.split('"').nth(1)
        })
        .unwrap_or_else(|| panic!("runtime/Cargo.toml: no version for {crate_name}"))
}
