//! Generated projects are real: each variant below is scaffolded, then built and checked the
//! way its user would check it, against the real crates from crates.io:
//! `cargo fmt --check`, `cargo build`, `cargo test`, `cargo clippy -D warnings`,
//! `manifests --check` and `make manifests` (no drift), `kubectl kustomize` of config/default
//! and config/samples with `kubernetes-validate --strict`, and each sample against its CRD's
//! schema with `check-jsonschema`; the GitHub workflows with zizmor.
//!
//! Slow (minutes): every variant shares one cargo target folder, `target/generated`, so the
//! dependencies compile once. Needs cargo, make, kubectl, kubernetes-validate,
//! check-jsonschema and zizmor on PATH (`make test` installs the last three).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{project_dir, rbuilder, snapshot};
use serde_json::Value;

/// The shared target folder for every generated project's build.
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/generated")
}

/// Runs `program args` in `dir`; panics with its output if it fails.
fn run(dir: &Path, program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} (is it installed?): {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "`{program} {}` failed in {}:\n{stdout}\n{}",
        args.join(" "),
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn yaml_documents(text: &str) -> Vec<Value> {
    serde_saphyr::from_multiple(text).expect("valid YAML")
}

/// Everything a user of the generated project would check, without a cluster.
fn check_project(dir: &Path) {
    run(dir, "cargo", &["fmt", "--check"]);
    run(dir, "cargo", &["build", "--locked"]);
    run(dir, "cargo", &["test", "--locked"]);
    run(
        dir,
        "cargo",
        &[
            "clippy",
            "--locked",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    );

    check_manager_without_a_cluster(dir);

    // The manifests under config/ are exactly what the code generates.
    run(
        dir,
        "cargo",
        &["run", "--locked", "--bin", "manifests", "--", "--check"],
    );
    let before = snapshot(&dir.join("config"));
    run(dir, "make", &["manifests"]);
    assert_eq!(
        before,
        snapshot(&dir.join("config")),
        "make manifests changed config/"
    );

    // What `make deploy` applies: valid objects for the Kubernetes version generated for.
    let rendered = run(dir, "kubectl", &["kustomize", "config/default"]);
    let all = dir.join("target-rendered.yaml");
    std::fs::write(&all, &rendered).expect("write rendered manifests");
    run(
        dir,
        "kubernetes-validate",
        &["--strict", "--quiet", "target-rendered.yaml"],
    );
    std::fs::remove_file(&all).expect("remove rendered manifests");
    check_restricted_pods(&rendered);

    if dir.join("config/samples/kustomization.yaml").exists() {
        run(dir, "kubectl", &["kustomize", "config/samples"]);
        check_samples_against_crds(dir);
    }
}

/// The manager, started with no cluster reachable, says so in one line and exits non-zero;
/// `--help` lists its flags.
fn check_manager_without_a_cluster(dir: &Path) {
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .expect("folder name");
    let manager = target_dir().join("debug").join(name);
    let help = Command::new(&manager)
        .arg("--help")
        .output()
        .expect("run the manager");
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--metrics-bind-address",
        "--metrics-secure",
        "--metrics-cert-path",
        "--health-probe-bind-address",
        "--webhook-bind-address",
        "--webhook-cert-path",
        "--enable-webhooks",
        "--leader-elect",
        "--log-format",
    ] {
        assert!(help.contains(flag), "{name} --help lacks {flag}:\n{help}");
    }
    let out = Command::new(&manager)
        .env("KUBECONFIG", dir.join("no-such-kubeconfig"))
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .expect("run the manager");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{name} started without a cluster");
    assert_eq!(
        stderr.lines().count(),
        1,
        "one error line expected:\n{stderr}"
    );
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// The restricted Pod Security Standard, as far as the manifests can show it.
fn check_restricted_pods(rendered: &str) {
    for doc in yaml_documents(rendered) {
        if doc["kind"] != "Deployment" {
            continue;
        }
        let pod = &doc["spec"]["template"]["spec"];
        assert_eq!(pod["securityContext"]["runAsNonRoot"], true, "{pod}");
        assert_eq!(
            pod["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        for c in pod["containers"].as_array().expect("containers") {
            let sc = &c["securityContext"];
            assert_eq!(sc["allowPrivilegeEscalation"], false, "{c}");
            assert_eq!(sc["readOnlyRootFilesystem"], true, "{c}");
            assert_eq!(
                sc["capabilities"]["drop"],
                serde_json::json!(["ALL"]),
                "{c}"
            );
            assert!(c["resources"]["limits"].is_object(), "limits: {c}");
            assert!(
                c["livenessProbe"].is_object() && c["readinessProbe"].is_object(),
                "{c}"
            );
        }
    }
}

/// Each sample validates against the openAPIV3Schema of its CRD version.
fn check_samples_against_crds(dir: &Path) {
    let mut crds = Vec::new();
    for entry in std::fs::read_dir(dir.join("config/crd/bases"))
        .into_iter()
        .flatten()
    {
        let text = std::fs::read_to_string(entry.expect("entry").path()).expect("CRD");
        crds.extend(yaml_documents(&text));
    }
    for entry in std::fs::read_dir(dir.join("config/samples")).expect("samples") {
        let path = entry.expect("entry").path();
        if path.file_name().is_some_and(|n| n == "kustomization.yaml") {
            continue;
        }
        let sample = &yaml_documents(&std::fs::read_to_string(&path).expect("sample"))[0];
        let (group, version) = sample["apiVersion"]
            .as_str()
            .and_then(|s| s.split_once('/'))
            .expect("apiVersion group/version");
        let schema = crds
            .iter()
            .filter(|c| c["spec"]["group"] == group && c["spec"]["names"]["kind"] == sample["kind"])
            .flat_map(|c| {
                c["spec"]["versions"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .find(|v| v["name"] == version)
            .map(|v| v["schema"]["openAPIV3Schema"].clone())
            .unwrap_or_else(|| panic!("no CRD version for {}", path.display()));
        let schema_file = dir.join("target-schema.json");
        let sample_file = dir.join("target-sample.json");
        std::fs::write(&schema_file, schema.to_string()).expect("write schema");
        std::fs::write(&sample_file, sample.to_string()).expect("write sample");
        run(
            dir,
            "check-jsonschema",
            &["--schemafile", "target-schema.json", "target-sample.json"],
        );
        std::fs::remove_file(schema_file).expect("cleanup");
        std::fs::remove_file(sample_file).expect("cleanup");
    }
}

/// `rbuilder` with `args`, which must succeed.
fn scaffold(dir: &Path, args: &[&str]) {
    rbuilder(dir, args).success();
}

/// Generated projects have no Cargo.lock; tests use one shared resolution so `--locked`
/// builds are comparable. Copies the demo example's lock file when the project has none.
fn lock(dir: &Path) {
    if !dir.join("Cargo.lock").exists() {
        run(dir, "cargo", &["generate-lockfile"]);
    }
}

#[test]
fn init_only_project() {
    let (_tmp, dir) = project_dir("example");
    scaffold(&dir, &["init", "--domain", "my.domain"]);
    lock(&dir);
    check_project(&dir);
    // The GitHub workflows pass zizmor's audits: actions pinned to a commit, no persisted
    // credentials, least permissions. (Offline: the audits that ask GitHub are skipped.)
    run(
        &dir,
        "zizmor",
        &["--offline", "--no-progress", ".github/workflows"],
    );
    // Before the first API there are no e2e tests; the target says so instead of failing
    // with cargo's "no test target named e2e".
    let e2e = run(&dir, "make", &["test-e2e"]);
    assert!(e2e.contains("no e2e tests yet"), "{e2e}");
}

#[test]
fn demo_microservice_example_is_current_and_works() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo-microservice");
    let (_tmp, dir) = project_dir("demo-microservice");
    scaffold(&dir, &["init", "--domain", "my.domain"]);
    scaffold(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "devops",
            "--version",
            "v1",
            "--kind",
            "DemoMicroService",
            "--image",
            "stefanprodan/podinfo:6.7.1",
            "--image-container-port",
            "9898",
            "--run-as-user",
            "1001",
            "--short-name",
            "dms",
        ],
    );
    scaffold(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "devops",
            "--version",
            "v1",
            "--kind",
            "DemoMicroService",
            "--defaulting",
            "--programmatic-validation",
        ],
    );
    // The checked-in example is exactly what rbuilder generates today (its Cargo.lock and
    // build outputs aside).
    let mut checked_in = snapshot(&example);
    checked_in.retain(|p, _| !p.starts_with("target") && p != Path::new("Cargo.lock"));
    assert_eq!(
        checked_in.keys().collect::<Vec<_>>(),
        snapshot(&dir).keys().collect::<Vec<_>>(),
        "examples/demo-microservice has other files than rbuilder generates; regenerate it \
         with examples/regenerate.sh"
    );
    for (path, contents) in snapshot(&dir) {
        assert!(
            checked_in.get(&path) == Some(&contents),
            "examples/demo-microservice/{} differs from what rbuilder generates; regenerate it \
             with examples/regenerate.sh",
            path.display()
        );
    }
    check_project(&example);
    check_runtime(&example);
}

/// The runtime crate's own tests and lints, once (it is the same in every project).
fn check_runtime(dir: &Path) {
    run(
        dir,
        "cargo",
        &[
            "test",
            "--locked",
            "-p",
            "rbuilder-runtime",
            "--all-features",
        ],
    );
    run(
        dir,
        "cargo",
        &[
            "clippy",
            "--locked",
            "-p",
            "rbuilder-runtime",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ],
    );
    // An up-to-date project: `rbuilder update` has nothing to write.
    let update = rbuilder(dir, &["update", "--dry-run"])
        .success()
        .get_output()
        .stdout
        .clone();
    let update = String::from_utf8_lossy(&update);
    assert!(
        !update.contains("update ") && !update.contains("create ") && !update.contains("delete "),
        "{update}"
    );
}

#[test]
fn plain_resources_versions_and_awkward_names() {
    let (_tmp, dir) = project_dir("kitchen-sink");
    scaffold(
        &dir,
        &["init", "--domain", "my.domain", "--owner", "Jane Doe"],
    );
    scaffold(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "devops",
            "--kind",
            "Guestbook",
            "--short-name",
            "gb",
        ],
    );
    scaffold(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "devops",
            "--version",
            "v2",
            "--kind",
            "Guestbook",
        ],
    );
    scaffold(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "devops",
            "--version",
            "v1alpha1",
            "--kind",
            "Policy",
            "--namespaced=false",
        ],
    );
    for kind in [
        "Type",
        "Match",
        "Context",
        "Error",
        "Api",
        "Deployment",
        "Action",
        "Condition",
        // Long enough that rustfmt lays the generated lines out differently.
        "ExtraordinarilyLongKindNameThatStillFitsTheKubernetesLimits",
    ] {
        scaffold(
            &dir,
            &["create", "api", "--group", "devops", "--kind", kind],
        );
    }
    scaffold(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "devops",
            "--kind",
            "Widget",
            "--controller=false",
        ],
    );
    // Scaffolded with --image, then again without: the project must be what a plain kind
    // gives (check_project compares role.yaml with what the code's rbac_rules() make).
    let site = ["create", "api", "--group", "devops", "--kind", "Site"];
    scaffold(&dir, &[&site[..], &["--image", "nginx:1.27"]].concat());
    scaffold(&dir, &[&site[..], &["--force"]].concat());
    // Webhooks: all three kinds on a kind with two versions, and on awkward names.
    let webhook = |version: &'static str, kind: &'static str| {
        vec![
            "create",
            "webhook",
            "--group",
            "devops",
            "--version",
            version,
            "--kind",
            kind,
        ]
    };
    scaffold(
        &dir,
        &[webhook("v1", "Guestbook"), vec!["--defaulting"]].concat(),
    );
    scaffold(
        &dir,
        &[
            webhook("v1", "Guestbook"),
            vec!["--conversion", "--spoke", "v2"],
        ]
        .concat(),
    );
    scaffold(
        &dir,
        &[
            webhook("v1", "Guestbook"),
            vec!["--defaulting", "--programmatic-validation", "--force"],
        ]
        .concat(),
    );
    scaffold(
        &dir,
        &[webhook("v1", "Type"), vec!["--programmatic-validation"]].concat(),
    );
    scaffold(
        &dir,
        &[
            webhook("v1alpha1", "Policy"),
            vec!["--defaulting", "--programmatic-validation"],
        ]
        .concat(),
    );
    scaffold(
        &dir,
        &[
            webhook(
                "v1",
                "ExtraordinarilyLongKindNameThatStillFitsTheKubernetesLimits",
            ),
            vec!["--defaulting"],
        ]
        .concat(),
    );
    lock(&dir);
    check_project(&dir);
}

#[test]
fn multigroup_with_deploy_image_and_a_built_in_type() {
    let (_tmp, dir) = project_dir("fleet");
    scaffold(
        &dir,
        &["init", "--domain", "example.com", "--license", "mit"],
    );
    scaffold(&dir, &["edit", "--multigroup"]);
    scaffold(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "devops",
            "--kind",
            "DemoMicroService",
            "--image",
            "memcached:1.6",
            "--image-container-port",
            "11211",
            "--image-container-command",
            "memcached,-m=64,-v",
            "--run-as-user",
            "1001",
        ],
    );
    scaffold(
        &dir,
        &["create", "api", "--group", "web-apps", "--kind", "Site"],
    );
    scaffold(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "apps",
            "--version",
            "v1",
            "--kind",
            "Deployment",
            "--resource=false",
        ],
    );
    for (group, kind) in [("devops", "DemoMicroService"), ("web-apps", "Site")] {
        scaffold(
            &dir,
            &[
                "create",
                "webhook",
                "--group",
                group,
                "--kind",
                kind,
                "--defaulting",
                "--programmatic-validation",
            ],
        );
    }
    lock(&dir);
    check_project(&dir);
}

#[test]
fn namespaced_operator() {
    let (_tmp, dir) = project_dir("team-operator");
    scaffold(
        &dir,
        &[
            "init",
            "--domain",
            "my.domain",
            "--namespaced",
            "--license",
            "none",
        ],
    );
    scaffold(
        &dir,
        &["create", "api", "--group", "devops", "--kind", "Guestbook"],
    );
    lock(&dir);
    check_project(&dir);
}
