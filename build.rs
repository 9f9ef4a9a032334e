//! Rebuilds when a template or the runtime changes (include_dir! only tracks the files that
//! existed at the last build), reads the versions generated projects build against from the
//! runtime's manifest, `runtime/core/Cargo.toml`: the one place they are written (see
//! src/versions.rs), and names the commit rbuilder is built from (`commit`).

use std::fs;

fn main() {
    commit();
    // The runtime through embedded/, its links, which the packaged crate holds as files.
    println!("cargo:rerun-if-changed=templates");
    for part in [
        "runtime",
        "runtime-core",
        "runtime-manifests",
        "runtime-testing",
    ] {
        println!("cargo:rerun-if-changed=embedded/{part}-src");
        println!("cargo:rerun-if-changed=embedded/{part}-Cargo.toml");
    }
    let manifest = match fs::read_to_string("embedded/runtime-core-Cargo.toml") {
        Ok(manifest) => manifest,
        Err(error) => panic!("cannot read runtime/core/Cargo.toml: {error}"),
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
        .unwrap_or_else(|| {
            panic!("runtime/core/Cargo.toml: k8s-openapi has no v1_<minor> feature")
        });
    println!("cargo:rustc-env=RUNTIME_K8S_OPENAPI_FEATURE={feature}");
    let kubernetes = feature.trim_start_matches('v').replace('_', ".");
    println!("cargo:rustc-env=RUNTIME_KUBERNETES={kubernetes}");
}

/// The commit rbuilder is built from, as `kubebuilder version` gives its own: RBUILDER_COMMIT
/// (12 hex digits, `.modified` after them when the work tree differs from it), and
/// RBUILDER_COMMIT_DATE (its day). Both are empty outside a git checkout (`cargo install` of a
/// package). PROJECT's cliVersion carries the commit as semver build metadata, so that
/// `rbuilder update` can say which rbuilder wrote a project even while the crate's version
/// stays the same.
fn commit() {
    let git = |args: &[&str]| -> Option<String> {
        let out = std::process::Command::new("git").args(args).output().ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let (mut commit, mut date) = (String::new(), String::new());
    if let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        // A new commit, a checkout, or a change staged or committed: HEAD, the branch it
        // names, or the index moves; and an edit to rbuilder's code, which may make the work
        // tree differ from the commit (templates/ and the runtime are watched above).
        for file in ["HEAD", "index", "packed-refs"] {
            println!("cargo:rerun-if-changed={git_dir}/{file}");
        }
        println!("cargo:rerun-if-changed=src");
        println!("cargo:rerun-if-changed=Cargo.toml");
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={git_dir}/{branch}");
        }
        commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default();
        date = git(&["log", "-1", "--format=%cd", "--date=short"]).unwrap_or_default();
        // Sources that differ from the commit (templates, the runtime, rbuilder's code).
        let changed = git(&[
            "status",
            "--porcelain",
            "--untracked-files=no",
            "--",
            "src",
            "templates",
            "runtime",
            "build.rs",
            "Cargo.toml",
        ]);
        if !commit.is_empty() && changed.is_some_and(|c| !c.is_empty()) {
            commit.push_str(".modified");
        }
    }
    println!("cargo:rustc-env=RBUILDER_COMMIT={commit}");
    println!("cargo:rustc-env=RBUILDER_COMMIT_DATE={date}");
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
        .unwrap_or_else(|| panic!("runtime/core/Cargo.toml: no version for {crate_name}"))
}
