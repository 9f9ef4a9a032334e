//! What every command shares: help with examples, completions, versions, kubebuilder's conventions.

use crate::common::{assert_rejected, initialized, project_dir, rbuilder};
use crate::read;
use predicates::str::contains;

#[test]
fn version_names_the_generated_dependencies() {
    let (_tmp, dir) = project_dir("x");
    rbuilder(&dir, &["version"])
        .success()
        .stdout(contains(concat!("rbuilder ", env!("CARGO_PKG_VERSION"))))
        .stdout(contains("kube 5"))
        .stdout(contains("k8s-openapi 0.29"))
        .stdout(contains("Kubernetes 1.37"));
}

#[test]
fn completion_scripts_are_printed() {
    let (_tmp, dir) = project_dir("x");
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        rbuilder(&dir, &["completion", shell])
            .success()
            .stdout(contains("rbuilder"));
    }
}

#[test]
fn every_command_has_help_with_an_example() {
    let (_tmp, dir) = project_dir("x");
    for args in [
        &["--help"][..],
        &["init", "--help"],
        &["create", "api", "--help"],
        &["edit", "--help"],
        &["version", "--help"],
        &["completion", "--help"],
    ] {
        rbuilder(&dir, args).success().stdout(contains("Example"));
    }
}

#[test]
fn kubebuilder_conventions() {
    let (_tmp, dir) = initialized("op");
    // A dotted group, as in kubebuilder's own testdata.
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "example.com",
            "--kind",
            "Captain",
        ],
    )
    .success();
    assert!(
        dir.join("config/samples/example.com_v1_captain.yaml")
            .is_file()
    );
    assert!(read(&dir, "PROJECT").contains("group: example.com"));
    // Acronyms stay together in module names.
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "example.com",
            "--kind",
            "OAuth2Client",
        ],
    )
    .success();
    assert!(dir.join("src/controller/oauth2_client.rs").is_file());
    // A built-in type has no CRD to regenerate, and the core group says its name.
    let secret = [
        "create",
        "api",
        "--group",
        "core",
        "--kind",
        "Secret",
        "--resource=false",
    ];
    rbuilder(&dir, &secret)
        .success()
        .stdout(contains(
            "Added a controller for core/v1, Kind=Secret (Kubernetes' own type: no CRD)",
        ))
        .stdout(contains("CRD").count(1));
    // Deploy-image options are recorded as kubebuilder records them.
    let memcached = [
        "create",
        "api",
        "--group",
        "example.com",
        "--version",
        "v1alpha1",
        "--kind",
        "Memcached",
        "--image",
        "memcached:1.6",
        "--image-container-port",
        "11211",
        "--run-as-user",
        "1001",
    ];
    rbuilder(&dir, &memcached).success();
    let project = read(&dir, "PROJECT");
    assert!(project.contains("containerPort: \"11211\""), "{project}");
    // One limit per message.
    let long = format!("K{}", "a".repeat(59));
    let args = ["create", "api", "--group", "web", "--kind", long.as_str()];
    assert_rejected(
        &dir,
        &args,
        &["longer than 59 characters", "at most 59 characters"],
    );
}
