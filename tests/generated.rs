//! Generated projects are real: each golden tree (`testdata/variants.txt`, which
//! `tests/golden.rs` keeps equal to what rbuilder writes) is built and checked the way its user
//! would check it, against the real crates from crates.io:
//! `cargo fmt --check`, `cargo build`, `make test` (the unit tests, and the integration tests
//! against a real kube-apiserver and etcd from scripts/envtest-assets), `cargo clippy -D warnings`,
//! `manifests --check` and `make manifests` (no drift), `kubectl kustomize` of config/default
//! and config/samples with `kubernetes-validate --strict`, and each sample against its CRD's
//! schema with `check-jsonschema`; the GitHub workflows with zizmor; the dev container with its
//! schema and shellcheck.
//!
//! Slow (minutes), so `#[ignore]`d: a plain `cargo test` stays fast and offline, and
//! `make test` runs these too (`cargo test -- --include-ignored`). Every tree builds in
//! rbuilder's own target folder, as cargo's build folder (`common::as_a_users_build`), so the
//! dependencies compile once. Needs cargo, make, kubectl, kubernetes-validate, check-jsonschema,
//! zizmor and shellcheck on PATH (`make test` installs the last four).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::control_plane::ControlPlane;
use common::{
    as_a_users_build, project_dir, project_files, rbuilder, repo, share_runtime_build, snapshot,
    variants,
};
use serde_json::Value;

/// The folder of kube-apiserver and etcd for the generated projects' integration tests:
/// KUBEBUILDER_ASSETS if set (`make test` sets it), else what scripts/envtest-assets builds.
fn envtest_assets() -> &'static str {
    static ASSETS: OnceLock<String> = OnceLock::new();
    ASSETS.get_or_init(|| {
        if let Ok(assets) = std::env::var("KUBEBUILDER_ASSETS")
            && !assets.is_empty()
        {
            return assets;
        }
        let script = repo().join("scripts/envtest-assets");
        let out = Command::new(&script)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        assert!(
            out.status.success(),
            "scripts/envtest-assets failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    })
}

/// `target/<name>` in the tree `dir`, for a file a check writes and removes: inside the build's
/// folder, which no listing of the tree's files takes in (tests/golden.rs reads the example
/// while this file checks it in place).
fn scratch(dir: &Path, name: &str) -> PathBuf {
    let target = dir.join("target");
    std::fs::create_dir_all(&target).expect("create target/");
    target.join(name)
}

/// Runs `program args` in `dir`; panics with its output if it fails.
fn run(dir: &Path, program: &str, args: &[&str]) -> String {
    let started = std::time::Instant::now();
    // As scripts/e2e.sh builds the same projects, so that each reuses what the other compiled.
    let out = as_a_users_build(&mut Command::new(program))
        .args(args)
        .current_dir(dir)
        .env("KUBEBUILDER_ASSETS", envtest_assets())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} (is it installed?): {e}"));
    // Where a tree's minutes go, for whoever trims them (shown with --nocapture).
    eprintln!(
        "[{:>5.1}s] {program} {} ({})",
        started.elapsed().as_secs_f64(),
        args.join(" "),
        dir.file_name().unwrap_or_default().to_string_lossy()
    );
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
    // Trees are checked side by side (the test threads): one builds while another's
    // integration tests wait on kube-apiserver. That is safe because no build here replaces a
    // file another tree links against: each tree's crate has a name of its own, and every
    // tree's runtime is the same source with the same file times (copy_of), which cargo finds
    // fresh instead of building again under the same file name. A runtime that differs must
    // differ in version too (tests/compat.rs's later_version).
    // The GitHub workflows (the plugins' too) pass zizmor's audits, its auditor persona's
    // included: actions pinned to a commit, no persisted credentials, least permissions,
    // concurrency. (Offline: the audits that ask GitHub are skipped.)
    run(
        dir,
        "zizmor",
        &[
            "--offline",
            "--no-progress",
            "--persona",
            "auditor",
            ".github/workflows",
        ],
    );
    run(dir, "cargo", &["fmt", "--check"]);
    // As `make build` and the image build it: the build of the project's crate that `make
    // test`, `make manifests` and the `manifests --check` below reuse.
    run(dir, "cargo", &["build", "--locked"]);
    check_manager_holds_no_build_time_tools(dir);
    // The unit tests, and the integration tests against kube-apiserver and etcd (envtest), as
    // the project's user runs them.
    run(dir, "make", &["test"]);
    check_tests_link_the_managers_build(dir);
    run(
        dir,
        "cargo",
        &[
            "clippy",
            "--locked",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ],
    );

    check_manager_without_a_cluster(dir);

    // The manifests under config/ are exactly what the code generates.
    let tool = manifests_package(dir);
    run(
        dir,
        "cargo",
        &["run", "--locked", "--package", &tool, "--", "--check"],
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
    let all = scratch(dir, "rendered.yaml");
    std::fs::write(&all, &rendered).expect("write rendered manifests");
    run(
        dir,
        "kubernetes-validate",
        &["--strict", "--quiet", "target/rendered.yaml"],
    );
    std::fs::remove_file(&all).expect("remove rendered manifests");
    check_restricted_pods(&rendered);
    check_webhooks_spare_the_managers_namespace(&rendered);

    if dir.join("config/samples/kustomization.yaml").exists() {
        run(dir, "kubectl", &["kustomize", "config/samples"]);
        check_samples_against_crds(dir);
    }
}

/// The manager, as the image builds it (`cargo build`, no features), gets the runtime without
/// its build-time tools (the manifests and Helm chart generators, the crate rbuilder-manifests
/// behind the feature `manifests`) and test harnesses (rbuilder-testing, the feature `testing`,
/// for the tests only).
fn check_manager_holds_no_build_time_tools(dir: &Path) {
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .expect("folder name");
    // The features of the runtime in the build of the manager: without the dev-dependencies.
    let args = [
        "tree",
        "--locked",
        "--edges",
        "normal,features",
        "--invert",
        "rbuilder-runtime",
    ];
    let tree = run(dir, "cargo", &args);
    for feature in ["manifests", "testing"] {
        let quoted = format!("rbuilder-runtime feature \"{feature}\"");
        assert!(
            !tree.contains(&quoted),
            "{name}'s manager builds the runtime with {feature}:\n{tree}"
        );
    }
    assert!(
        tree.contains("rbuilder-runtime"),
        "cargo tree shows no runtime:\n{tree}"
    );
    let linked = run(dir, "cargo", &["tree", "--locked", "--edges", "normal"]);
    for tools in ["rbuilder-manifests", "rbuilder-testing"] {
        assert!(
            !linked.contains(tools),
            "{name}'s manager links {tools}:\n{linked}"
        );
    }
    assert!(
        linked.contains("rbuilder-runtime-core"),
        "{name}'s manager links no runtime core:\n{linked}"
    );
}

/// The name of the package of the project at `dir`'s `manifests` binary (manifests/).
fn manifests_package(dir: &Path) -> String {
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .expect("folder name");
    format!("{name}-manifests")
}

/// The tests and the `manifests` binary link the very build of the project's crate that the
/// manager's build made (as `make build`, `make test` and `make manifests` build them): after an
/// edit, each compiles its own targets, not the crate again. (A dev-dependency that turned on a
/// feature of a dependency the crate shares, as `rbuilder-runtime`'s feature `testing` did, or
/// a feature of the project's own package, as the `manifests` binary's was, makes another build
/// of the crate.) The builds are done by then: cargo only names them.
fn check_tests_link_the_managers_build(dir: &Path) {
    let manifest = dir.join("Cargo.toml");
    let libraries = |args: &[&str]| -> Vec<String> {
        let messages = run(dir, "cargo", args);
        let artifacts = messages.lines().filter_map(|line| {
            let message: Value = serde_json::from_str(line).ok()?;
            let is_lib = message["reason"] == "compiler-artifact"
                && message["target"]["kind"] == serde_json::json!(["lib"])
                && message["profile"]["test"] == false
                && Path::new(message["manifest_path"].as_str()?) == manifest;
            // The metadata file is named by the build's hash (the library may be copied out).
            let files = message["filenames"]
                .as_array()?
                .iter()
                .filter_map(Value::as_str);
            let metadata = files.filter(|file| file.ends_with(".rmeta"));
            is_lib.then(|| metadata.map(str::to_owned).collect())
        });
        artifacts.collect::<Vec<Vec<String>>>().concat()
    };
    let json = "--message-format=json";
    let built = libraries(&["build", "--locked", json]);
    let tested = libraries(&["test", "--locked", "--no-run", json]);
    assert!(!built.is_empty(), "no library built in {}", dir.display());
    assert_eq!(
        built,
        tested,
        "the tests of {} link another build of the project's crate than the manager's",
        dir.display()
    );
    let tool = manifests_package(dir);
    let generating = libraries(&["build", "--locked", "--package", &tool, json]);
    assert_eq!(
        built,
        generating,
        "the manifests binary of {} links another build of the project's crate than the \
         manager's",
        dir.display()
    );
}

/// The manager, started with no cluster reachable by `cargo run`, says so in one line and
/// exits non-zero; `--help` lists its flags.
fn check_manager_without_a_cluster(dir: &Path) {
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .expect("folder name");
    let manager = dir.join("target/debug").join(name);
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
    // Started as a user starts it, `cargo run`, which must not have to be told which binary
    // to run (the `manifests` binary is in a package of its own).
    let out = as_a_users_build(&mut Command::new("cargo"))
        .args(["run", "--quiet", "--locked"])
        .current_dir(dir)
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

/// A webhook for a type the operator does not define (a Pod, another project's Issuer) never
/// sees the manager's objects, as rendered for `make deploy`: failing closed on them, it could
/// keep the manager from starting. An operator of the whole cluster leaves out its namespace,
/// kube-system and kube-node-lease; one scoped to its namespace (WATCH_NAMESPACE) looks there
/// only, but not at the manager's objects, and its webhooks for its own kinds look there only
/// too, in configurations named after it.
fn check_webhooks_spare_the_managers_namespace(rendered: &str) {
    let documents = yaml_documents(rendered);
    // The operator's own kinds are those of its CRDs.
    let own: Vec<(&Value, &Value)> = documents
        .iter()
        .filter(|d| d["kind"] == "CustomResourceDefinition")
        .map(|crd| (&crd["spec"]["group"], &crd["spec"]["names"]["plural"]))
        .collect();
    let Some(manager) = documents.iter().find(|d| d["kind"] == "Deployment") else {
        return;
    };
    let namespace = &manager["metadata"]["namespace"];
    let scoped = manager["spec"]["template"]["spec"]["containers"][0]["env"]
        .as_array()
        .is_some_and(|env| env.iter().any(|e| e["name"] == "WATCH_NAMESPACE"));
    let pod_labels = &manager["spec"]["template"]["metadata"]["labels"];
    for doc in &documents {
        if !doc["kind"]
            .as_str()
            .is_some_and(|k| k.ends_with("WebhookConfiguration"))
        {
            continue;
        }
        // Cluster-scoped: another installation of a namespaced operator, in another namespace,
        // has configurations of its own.
        let name = doc["metadata"]["name"].as_str().expect("a name");
        let suffix = format!(".{}", namespace.as_str().expect("a namespace"));
        assert_eq!(scoped, name.ends_with(&suffix), "{name}");
        for webhook in doc["webhooks"].as_array().expect("webhooks") {
            let rule = &webhook["rules"][0];
            let foreign = !own.contains(&(&rule["apiGroups"][0], &rule["resources"][0]));
            let selector = &webhook["namespaceSelector"]["matchExpressions"][0];
            if !foreign && scoped {
                // The operator's own kinds, in its namespace only.
                assert_eq!(selector["operator"], "In", "{webhook}");
                assert_eq!(selector["values"], serde_json::json!([namespace]));
                continue;
            }
            if !foreign {
                assert!(selector.is_null(), "{webhook}");
                continue;
            }
            assert_eq!(selector["key"], "kubernetes.io/metadata.name", "{webhook}");
            if scoped {
                assert_eq!(selector["operator"], "In", "{webhook}");
                assert_eq!(selector["values"], serde_json::json!([namespace]));
                let objects = &webhook["objectSelector"]["matchExpressions"][0];
                assert_eq!(objects["operator"], "NotIn", "{webhook}");
                let key = objects["key"].as_str().expect("key");
                assert_eq!(objects["values"], serde_json::json!([pod_labels[key]]));
            } else {
                assert_eq!(selector["operator"], "NotIn", "{webhook}");
                assert_eq!(
                    selector["values"],
                    serde_json::json!([namespace, "kube-system", "kube-node-lease"]),
                    "{webhook}"
                );
            }
        }
    }
}

/// `schema`, a CRD's OpenAPI v3.0 schema, as the JSON Schema check-jsonschema reads: a boolean
/// `exclusiveMinimum` or `exclusiveMaximum` (OpenAPI v3.0's, beside `minimum`, `maximum`) is
/// the bound itself there.
fn json_schema(schema: Value) -> Value {
    match schema {
        Value::Object(mut map) => {
            for (exclusive, bound) in [
                ("exclusiveMinimum", "minimum"),
                ("exclusiveMaximum", "maximum"),
            ] {
                match map.get(exclusive) {
                    Some(Value::Bool(true)) => {
                        let value = map.remove(bound).unwrap_or(Value::Null);
                        map.insert(exclusive.into(), value);
                    }
                    Some(Value::Bool(false)) => {
                        map.remove(exclusive);
                    }
                    _ => {}
                }
            }
            Value::Object(map.into_iter().map(|(k, v)| (k, json_schema(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(json_schema).collect()),
        other => other,
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
        let schema_file = scratch(dir, "schema.json");
        let sample_file = scratch(dir, "sample.json");
        std::fs::write(&schema_file, json_schema(schema).to_string()).expect("write schema");
        std::fs::write(&sample_file, sample.to_string()).expect("write sample");
        run(
            dir,
            "check-jsonschema",
            &["--schemafile", "target/schema.json", "target/sample.json"],
        );
        std::fs::remove_file(schema_file).expect("cleanup");
        std::fs::remove_file(sample_file).expect("cleanup");
    }
}

/// The golden trees this file builds, by name: all of them.
const TREES: &[&str] = &[
    "init-only",
    "demo-microservice",
    "helm-chart",
    "plain",
    "deploy-image",
    "builtin",
    "multigroup",
    "namespaced",
    "multiversion",
    "conversion-only",
    "kind-names",
    "external",
    "project-v4-with-plugins",
    "project-v4-multigroup",
    "shop",
];

#[test]
fn every_golden_tree_is_built_here() {
    let listed: Vec<String> = variants().iter().map(|v| v.name().to_owned()).collect();
    assert_eq!(
        listed, TREES,
        "testdata/variants.txt and TREES list other trees"
    );
}

/// The settings of the `[profile.dev]` sections (`[profile.dev.package."*"]` too) of a
/// Cargo.toml, without comments and blank lines.
fn dev_profile(manifest: &str) -> Vec<&str> {
    let mut inside = false;
    let mut settings = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line.starts_with("[profile.dev]") || line.starts_with("[profile.dev.");
        }
        if inside && !line.is_empty() && !line.starts_with('#') {
            settings.push(line);
        }
    }
    settings
}

/// rbuilder builds with the dev profile of the projects it writes: the generated projects'
/// builds share its target folder (`shared_target_dir`), and cargo compiles every dependency
/// again for a profile that differs in any setting.
#[test]
fn the_workspace_builds_with_the_projects_dev_profile() {
    let read = |path: &str| std::fs::read_to_string(repo().join(path)).expect(path);
    let ours = read("Cargo.toml");
    let theirs = read("templates/init/Cargo.toml.tera");
    assert!(
        !dev_profile(&theirs).is_empty(),
        "no [profile.dev] in the template"
    );
    assert_eq!(dev_profile(&ours), dev_profile(&theirs));
}

/// A copy of golden tree `name` in a temporary folder, with the Cargo.lock rbuilder wrote into
/// it: building the tree in place would leave files there.
fn copy_of(name: &str) -> (tempfile::TempDir, PathBuf) {
    let variant = variants()
        .into_iter()
        .find(|v| v.name() == name)
        .unwrap_or_else(|| panic!("{name} is not in testdata/variants.txt"));
    let (tmp, dir) = project_dir(name);
    for (path, bytes) in project_files(&repo().join(&variant.path)) {
        let target = dir.join(path);
        std::fs::create_dir_all(target.parent().expect("a parent")).expect("create folder");
        std::fs::write(target, bytes).expect("write a file");
    }
    // The tree holds no copy of the runtime unless it is the example: the runtime as the
    // tree's commands write it, with times that let every tree reuse one build of it.
    if !variant.holds_runtime() {
        for (path, bytes) in variant.scaffolded_runtime() {
            let target = dir.join(path);
            std::fs::create_dir_all(target.parent().expect("a parent")).expect("create folder");
            std::fs::write(target, bytes).expect("write a runtime file");
        }
    }
    share_runtime_build(&dir);
    (tmp, dir)
}

/// Builds and checks golden tree `name` as its user would.
fn check_tree(name: &str) {
    let (_tmp, dir) = copy_of(name);
    check_project(&dir);
}

#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn init_only() {
    let (_tmp, dir) = copy_of("init-only");
    check_project(&dir);
    // Before the first API there are no e2e tests; the target says so instead of failing
    // with cargo's "no test target named e2e".
    let e2e = run(&dir, "make", &["test-e2e"]);
    assert!(e2e.contains("no e2e tests yet"), "{e2e}");
    check_dev_container(&dir);
    check_docker_buildx(&dir);
    check_lint_fix(&dir);
}

/// The dev container is valid for the devcontainer tools (the spec's schema, kept in
/// testdata/schemas with its origin), and its setup script passes shellcheck.
fn check_dev_container(dir: &Path) {
    let schema = repo().join("testdata/schemas/devContainer.base.schema.json");
    run(
        dir,
        "check-jsonschema",
        &[
            "--schemafile",
            &schema.display().to_string(),
            ".devcontainer/devcontainer.json",
        ],
    );
    run(dir, "shellcheck", &[".devcontainer/post-create.sh"]);
}

/// `make docker-buildx` with a stand-in for docker (no container engine here) that records its
/// arguments: the build gets every platform and pushes, a failed build fails the target, and
/// the builder it created is removed either way.
fn check_docker_buildx(dir: &Path) {
    let tool = scratch(dir, "fake-docker");
    let log = scratch(dir, "fake-docker.log");
    std::fs::write(
        &tool,
        format!(
            "#!/bin/sh\necho \"$*\" >> {log}\n\
             case \"$*\" in\n  'buildx inspect'*) exit 1 ;;\n  'buildx build'*) exit \"${{BUILD_STATUS:-0}}\" ;;\nesac\n",
            log = log.display()
        ),
    )
    .expect("write the stand-in for docker");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let container_tool = format!("CONTAINER_TOOL={}", tool.display());
    for (status, succeeds) in [("0", true), ("1", false)] {
        let _ = std::fs::remove_file(&log);
        let out = Command::new("make")
            .args([
                "docker-buildx",
                "IMG=registry.example/op:1",
                &container_tool,
            ])
            .env("BUILD_STATUS", status)
            .current_dir(dir)
            .output()
            .expect("run make");
        assert_eq!(out.status.success(), succeeds, "{out:?}");
        let calls = std::fs::read_to_string(&log).expect("the stand-in ran");
        let build = calls
            .lines()
            .find(|l| l.starts_with("buildx build"))
            .unwrap_or_else(|| panic!("no build in {calls}"));
        for expected in [
            "--push",
            "--platform=linux/arm64,linux/amd64,linux/s390x,linux/ppc64le",
            "--tag registry.example/op:1",
        ] {
            assert!(build.contains(expected), "{build} lacks {expected}");
        }
        assert!(
            calls
                .lines()
                .last()
                .is_some_and(|l| l.starts_with("buildx rm")),
            "the builder is not removed: {calls}"
        );
    }
    std::fs::remove_file(&tool).expect("remove the stand-in");
    std::fs::remove_file(&log).expect("remove its log");
}

/// `make lint-fix` applies what clippy can fix by itself, and rustfmt.
fn check_lint_fix(dir: &Path) {
    let lib = dir.join("src/lib.rs");
    let original = std::fs::read_to_string(&lib).expect("read src/lib.rs");
    std::fs::write(
        &lib,
        format!("{original}\npub fn probe() -> u8 {{ return 1; }}\n"),
    )
    .expect("write src/lib.rs");
    run(dir, "make", &["lint-fix"]);
    let fixed = std::fs::read_to_string(&lib).expect("read src/lib.rs");
    assert!(
        fixed.ends_with("\npub fn probe() -> u8 {\n    1\n}\n"),
        "clippy's fix or rustfmt was not applied:\n{fixed}"
    );
    std::fs::write(&lib, original).expect("restore src/lib.rs");
}

/// A new user's first minutes, as they have them: the quick start's commands run with the
/// rbuilder binary in an empty folder outside this repository (no lock file of ours in reach),
/// a `tracing::info!` added to `apply` as docs/tutorial.md shows, then `make lint` and `make
/// test`, offline: the project builds the crates of the Cargo.lock `init` wrote (`--locked`,
/// which the Makefile passes), which are the ones rbuilder's tests build with, so everything is
/// compiled already.
#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn a_new_users_first_lint_and_test() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("new-user-operator");
    std::fs::create_dir(&dir).expect("create the project folder");
    rbuilder(&dir, &["init", "--domain", "my.domain"]).success();
    let create = "create api --group devops --version v1 --kind DemoMicroService \
                  --image stefanprodan/podinfo:6.7.1";
    rbuilder(&dir, &create.split(' ').collect::<Vec<_>>()).success();
    let written = std::fs::read_to_string(dir.join("Cargo.lock")).expect("init writes Cargo.lock");
    let controller = dir.join("src/controller/demo_micro_service.rs");
    let code = std::fs::read_to_string(&controller).expect("the controller");
    let apply = "ctx: Arc<Context>) -> Result<Action, Error> {\n";
    assert!(code.contains(apply), "no apply in {code}");
    let logged =
        apply.to_owned() + "        tracing::info!(name = ?obj.metadata.name, \"applying\");\n";
    std::fs::write(&controller, code.replacen(apply, &logged, 1)).expect("edit the controller");
    share_runtime_build(&dir);
    for target in ["lint", "test"] {
        // A user's shell, not the make of `make test` that runs this test.
        let out = as_a_users_build(&mut Command::new("make"))
            .env_remove("MAKEFLAGS")
            .env_remove("MFLAGS")
            .env_remove("MAKELEVEL")
            .arg(target)
            .current_dir(&dir)
            .env("CARGO_NET_OFFLINE", "true")
            .env("KUBEBUILDER_ASSETS", envtest_assets())
            .output()
            .expect("run make");
        assert!(
            out.status.success(),
            "a new user's `make {target}` failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("warning:"),
            "make {target} warns:\n{stderr}"
        );
    }
    let after = std::fs::read_to_string(dir.join("Cargo.lock")).expect("Cargo.lock");
    assert_eq!(after, written, "the build changed Cargo.lock");
}

/// What a user's `cargo update` gives: the example with the newest semver-compatible crates
/// of crates.io, not the tested ones, builds, passes clippy -D warnings and its tests (unit and
/// integration). An upstream release that breaks or deprecates something a generated project
/// uses fails here, in rbuilder's CI, before a user meets it; the fix is then a change to the
/// runtime or templates, or a pin, and a new tested resolution (scripts/update-crates). It
/// fails rather than reports: projects keep the tested lock only until their first `cargo
/// update` (or Dependabot's), so a break there is a break users will meet. Where the newest
/// crates are the tested ones, `demo_microservice` has checked exactly them already.
#[test]
#[ignore = "slow: resolves and builds a generated project against crates.io (make test runs it)"]
fn the_newest_crates_build_and_pass() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join("demo-microservice");
    for (path, bytes) in project_files(&repo().join("examples/demo-microservice")) {
        let target = dir.join(path);
        std::fs::create_dir_all(target.parent().expect("a parent")).expect("create folder");
        std::fs::write(target, bytes).expect("write a file");
    }
    share_runtime_build(&dir);
    let tested = std::fs::read_to_string(dir.join("Cargo.lock")).expect("the tested lock");
    let updated = as_a_users_build(&mut Command::new("cargo"))
        .arg("update")
        .current_dir(&dir)
        .output()
        .expect("run cargo update");
    let changes = String::from_utf8_lossy(&updated.stderr);
    assert!(updated.status.success(), "cargo update failed:\n{changes}");
    // What moved since the tested resolution, for whoever reads a failure below.
    eprintln!("cargo update, from the tested crates:\n{changes}");
    let newest = std::fs::read_to_string(dir.join("Cargo.lock")).expect("the updated lock");
    if newest == tested {
        // The newest crates are the tested ones, whose build, lints and tests demo_microservice
        // checks on the example itself: nothing more to try (and minutes of CI saved).
        return;
    }
    run(&dir, "cargo", &["build", "--locked"]);
    run(
        &dir,
        "cargo",
        &[
            "clippy",
            "--locked",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ],
    );
    run(&dir, "make", &["test"]);
}

/// The tutorial's project, in place: it is checked in with its Cargo.lock, as a user has it.
#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn demo_microservice() {
    let example = repo().join("examples/demo-microservice");
    check_project(&example);
    // The manager as the image builds it (Dockerfile): without the `manifests` feature.
    run(
        &example,
        "cargo",
        &["build", "--locked", "--bin", "demo-microservice"],
    );
    check_runtime(&example);
}

/// A copy of the tutorial's project with the diffs of a section of docs/extending.md (its
/// ```` ```diff ```` blocks, in order, from its `## heading` to the next) applied by `git
/// apply`, as a reader applies them, and its files written (its ```` ```rust ```` blocks whose
/// first line names the file: `// src/fleet.rs`): a diff that no longer matches the project
/// fails here. `files` is how many files the diffs change.
fn with_extending_diffs(heading: &str, files: usize) -> (tempfile::TempDir, PathBuf) {
    let text = std::fs::read_to_string(repo().join("docs/extending.md")).expect("the document");
    let start = text
        .find(&format!("\n## {heading}\n"))
        .expect("the section");
    let section = &text[start + 1..];
    let section = &section[..section[3..]
        .find("\n## ")
        .map_or(section.len(), |end| end + 3)];
    let (tmp, dir) = copy_of("demo-microservice");
    let mut diffs = String::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        if line == "```diff" {
            for line in lines.by_ref().take_while(|line| *line != "```") {
                diffs.push_str(line);
                diffs.push('\n');
            }
        } else if line == "```rust" {
            let mut block = lines.by_ref().take_while(|line| *line != "```");
            let first = block.next().unwrap_or_default();
            if let Some(path) = first
                .strip_prefix("// ")
                .filter(|path| path.starts_with("src/"))
            {
                let text: String = block.map(|line| format!("{line}\n")).collect();
                std::fs::write(dir.join(path), text).expect("write the file");
            }
        }
    }
    let changed = diffs.lines().filter(|line| line.starts_with("+++ b/"));
    assert_eq!(changed.count(), files, "{heading}:\n{diffs}");
    std::fs::write(dir.join("recipe.patch"), &diffs).expect("write the diffs");
    run(&dir, "git", &["apply", "--verbose", "recipe.patch"]);
    std::fs::remove_file(dir.join("recipe.patch")).expect("remove the diffs");
    (tmp, dir)
}

/// What a reader of docs/extending.md checks after a recipe: `make lint`'s clippy, rustfmt,
/// and the unit and integration tests (on kube-apiserver).
fn lint_and_test(dir: &Path) {
    let clippy = [
        "clippy",
        "--locked",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ];
    run(dir, "cargo", &clippy);
    run(dir, "cargo", &["fmt", "--check"]);
    let tests = ["test", "--locked", "--lib", "--test", "integration"];
    run(dir, "cargo", &tests);
}

/// docs/extending.md's "State of a controller's own", as a reader follows it: the controller,
/// `src/main.rs` and both tests changed, and the shared client's `src/fleet.rs`; the manager's
/// `--help` lists the new flag beside its own, and the project lints (the file included) and
/// passes its tests with the controller's state given by `src/main.rs` and by each test.
#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn extending_state_recipe() {
    let (_tmp, dir) = with_extending_diffs("State of a controller's own", 5);
    let manager = [
        "run",
        "--locked",
        "--bin",
        "demo-microservice",
        "--",
        "--help",
    ];
    let help = run(&dir, "cargo", &manager);
    assert!(
        help.contains("--image-pull-policy") && help.contains("--leader-elect"),
        "{help}"
    );
    lint_and_test(&dir);
}

/// docs/extending.md's "A second owned object", as a reader follows it: the controller and its
/// integration test changed, `make manifests` grants the manager the Service's rules from what
/// the controller declares (`owns`), and the project lints and passes its tests, among them the
/// one the diffs add, which finds the Service on kube-apiserver, made by a manager that holds
/// only that role.
#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn extending_service_recipe() {
    let (_tmp, dir) = with_extending_diffs("A second owned object", 2);
    let role = dir.join("config/rbac/role.yaml");
    let before = std::fs::read_to_string(&role).expect("the role");
    run(&dir, "make", &["manifests"]);
    let after = std::fs::read_to_string(&role).expect("the role");
    let grants_services = |role: &str| role.lines().any(|line| line.trim() == "- services");
    assert!(
        !grants_services(&before) && grants_services(&after),
        "{after}"
    );
    lint_and_test(&dir);
}

/// The tutorial's project with kubebuilder's Helm chart (`edit --plugins helm/v2-alpha`): the
/// project's checks, then the chart's, with the real Helm (scripts/helm builds it).
#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn helm_chart() {
    let (_tmp, dir) = copy_of("helm-chart");
    check_project(&dir);
    check_helm_chart(&dir, "helm-chart");
}

#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn plain() {
    check_tree("plain");
}

#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn deploy_image() {
    check_tree("deploy-image");
}

#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn builtin() {
    check_tree("builtin");
}

#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn multigroup() {
    check_tree("multigroup");
}

#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn namespaced() {
    let (tmp, dir) = copy_of("namespaced");
    check_project(&dir);
    check_watched_namespaces(tmp.path(), &dir);
}

/// The manager of a namespaced operator whose `WATCH_NAMESPACE` lists two other namespaces gets
/// its role in each from the manifests (`make manifests`, then `make deploy`'s
/// `kubectl kustomize config/default`), and from the Helm chart `make helm` makes of them, and
/// nowhere else: asked of kube-apiserver's RBAC authorizer, as `kubectl auth can-i` asks it,
/// once the rendered RBAC is applied.
fn check_watched_namespaces(tmp: &Path, dir: &Path) {
    let manager = dir.join("config/manager/manager.yaml");
    let text = std::fs::read_to_string(&manager).expect("manager.yaml");
    let field_ref = "        - name: WATCH_NAMESPACE\n          valueFrom:\n            fieldRef:\n              fieldPath: metadata.namespace\n";
    assert!(
        text.contains(field_ref),
        "manager.yaml sets WATCH_NAMESPACE from its namespace"
    );
    let listed =
        "        - name: WATCH_NAMESPACE\n          value: $(POD_NAMESPACE),team-a,team-b\n";
    std::fs::write(&manager, text.replace(field_ref, listed)).expect("write manager.yaml");
    run(dir, "make", &["manifests"]);
    let tool = manifests_package(dir);
    run(
        dir,
        "cargo",
        &["run", "--locked", "--package", &tool, "--", "--check"],
    );
    let rendered = run(dir, "kubectl", &["kustomize", "config/default"]);
    check_restricted_pods(&rendered);

    // The manager's ServiceAccount, its roles and their bindings, in the namespaces they name,
    // and the CRDs they grant access to.
    let kinds = [
        "CustomResourceDefinition",
        "Namespace",
        "ServiceAccount",
        "Role",
        "RoleBinding",
    ];
    let rbac: Vec<Value> = yaml_documents(&rendered)
        .into_iter()
        .filter(|o| kinds.contains(&o["kind"].as_str().unwrap_or_default()))
        .collect();
    let in_team = |o: &&Value| {
        o["metadata"]["namespace"]
            .as_str()
            .is_some_and(|n| n.starts_with("team-"))
    };
    let mut placed: Vec<String> = rbac
        .iter()
        .filter(in_team)
        .map(|o| {
            format!(
                "{} {}/{}",
                o["kind"].as_str().unwrap_or_default(),
                o["metadata"]["namespace"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default()
            )
        })
        .collect();
    placed.sort();
    assert_eq!(
        placed,
        [
            "Role team-a/namespaced-manager-role-team-a",
            "Role team-b/namespaced-manager-role-team-b",
            "RoleBinding team-a/namespaced-manager-rolebinding-team-a",
            "RoleBinding team-b/namespaced-manager-rolebinding-team-b",
        ]
    );

    let plane = ControlPlane::start(&tmp.join("control-plane"));
    plane.ready();
    for namespace in ["team-a", "team-b", "team-c", "elsewhere"] {
        plane.checked(&["create", "namespace", namespace], None);
    }
    let objects = rbac
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    plane.checked(&["apply", "-f", "-"], Some(&objects));
    check_watched_roles(
        &plane,
        "namespaced-system",
        "system:serviceaccount:namespaced-system:namespaced-controller-manager",
    );

    // The same from the Helm chart (`make helm` reads config/default), installed as release
    // `other` in namespace `elsewhere`: the Roles in team-a and team-b bind the release's
    // ServiceAccount.
    rbuilder(dir, &["edit", "--plugins", "helm/v2-alpha"]).success();
    run(dir, "make", &["helm"]);
    run(dir, helm(), &["lint", "--strict", "dist/chart"]);
    let chart = helm_template(dir, "other", "elsewhere", &[]);
    let chart_rbac: Vec<String> = chart
        .iter()
        .filter(|o| kinds.contains(&o["kind"].as_str().unwrap_or_default()))
        .filter(|o| o["kind"] != "CustomResourceDefinition" && o["kind"] != "Namespace")
        .map(|o| {
            let mut object = o.clone();
            // `helm install` puts what the chart leaves unplaced in the release's namespace.
            if object["metadata"]["namespace"].is_null() {
                object["metadata"]["namespace"] = "elsewhere".into();
            }
            object.to_string()
        })
        .collect();
    plane.checked(&["apply", "-f", "-"], Some(&chart_rbac.join("\n")));
    check_watched_roles(
        &plane,
        "elsewhere",
        "system:serviceaccount:elsewhere:other-namespaced-controller-manager",
    );
}

/// What `account`, the ServiceAccount of a manager in `own` that watches team-a and team-b,
/// may do, as kube-apiserver's RBAC authorizer answers `kubectl auth can-i`: watch its kinds
/// there and in `own`, nowhere else; Leases only in `own`.
fn check_watched_roles(plane: &ControlPlane, own: &str, account: &str) {
    let may = |verb: &str, resource: &str, namespace: Option<&str>| {
        let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
        let subresource = format!("--subresource={subresource}");
        let mut args = vec!["auth", "can-i", verb, resource, "--as", account];
        if subresource != "--subresource=" {
            args.push(&subresource);
        }
        match namespace {
            Some(namespace) => args.extend(["-n", namespace]),
            None => args.push("--all-namespaces"),
        }
        // `can-i` exits 1 for "no": the answer is its output.
        match plane.kubectl(&args, None) {
            Ok(answer) => answer.trim() == "yes",
            Err(error) => {
                assert!(error.is_empty(), "kubectl auth can-i: {error}");
                false
            }
        }
    };
    for resource in ["guestbooks.devops.my.domain", "deployments.apps"] {
        for namespace in [own, "team-a", "team-b"] {
            assert!(
                may("watch", resource, Some(namespace)),
                "{account}: watch {resource} in {namespace}"
            );
        }
        assert!(
            !may("watch", resource, Some("team-c")),
            "{account}: watch {resource} in team-c"
        );
        assert!(
            !may("watch", resource, None),
            "{account}: watch {resource} everywhere"
        );
    }
    assert!(may(
        "patch",
        "guestbooks.devops.my.domain/status",
        Some("team-b")
    ));
    // Leader election stays in the manager's namespace.
    assert!(may("create", "leases.coordination.k8s.io", Some(own)));
    assert!(!may("create", "leases.coordination.k8s.io", Some("team-a")));
}

#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn multiversion() {
    check_tree("multiversion");
}

#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn conversion_only() {
    check_tree("conversion-only");
}

#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn kind_names() {
    check_tree("kind-names");
}

/// A kubebuilder project (kubebuilder's own testdata/project-v4-with-plugins) migrated to Rust
/// by `alpha generate`: it builds, tests and renders like a project rbuilder made, its kinds
/// have their CRDs' APIs, and its objects survive the migration (see [`check_migrated`]).
#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn migrated_project_v4_with_plugins() {
    check_migrated("project-v4-with-plugins");
}

/// kubebuilder's testdata/project-v4-multigroup migrated to Rust: kinds in eight groups, one
/// kind name in two of them, each group's controllers, webhooks and tests in its own folder;
/// every controller under its own name, checked as any project's are (see [`check_migrated`]).
#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn migrated_project_v4_multigroup() {
    check_migrated("project-v4-multigroup");
}

/// A project made with kubebuilder whose Go types were edited, migrated (see
/// [`check_migrated`]).
#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn migrated_shop() {
    check_migrated("shop");
}

#[path = "../src/external/comparable.rs"]
#[allow(dead_code)]
mod comparable;

/// Golden tree `name`, migrated from the kubebuilder project of the same name in
/// testdata/kubebuilder-projects, builds and passes its checks; then
/// - the CRDs its `manifests` binary writes from the Rust types (kube-derive) are those
///   controller-gen wrote from the Go types, version by version, but for what differs by
///   design (src/external/comparable.rs);
/// - on kube-apiserver, the samples of the Go project, created under the Go project's CRDs
///   with a status, are read, updated (a label) and written back through the Rust types under
///   the Rust project's CRDs, and keep every field: `tests/kubebuilder_objects.rs`, written
///   into the copy, as a user migrating a cluster would check it.
fn check_migrated(name: &str) {
    let (_tmp, dir) = copy_of(name);
    check_project(&dir);
    // check_project ran `make manifests`: config/crd/bases is the manifests binary's.
    let go = repo().join("testdata/kubebuilder-projects").join(name);
    let mut compared = 0;
    let mut files: Vec<_> = std::fs::read_dir(go.join("config/crd/bases"))
        .expect("the Go project's CRDs")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    files.sort();
    for file in files {
        let read = |dir: &Path| -> Value {
            let path = dir.join("config/crd/bases").join(&file);
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            yaml_documents(&text)[0].clone()
        };
        let (theirs, ours) = (read(&go), read(&dir));
        let what = file.to_string_lossy();
        for key in ["group", "scope"] {
            assert_eq!(ours["spec"][key], theirs["spec"][key], "{what}: {key}");
        }
        let versions = |crd: &Value| {
            crd["spec"]["versions"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        };
        assert_eq!(
            versions(&ours).len(),
            versions(&theirs).len(),
            "{what}: versions"
        );
        for theirs in versions(&theirs) {
            let ours = versions(&ours)
                .into_iter()
                .find(|v| v["name"] == theirs["name"])
                .unwrap_or_else(|| panic!("{what}: no version {}", theirs["name"]));
            let schema = |v: &Value| comparable::comparable(&v["schema"]["openAPIV3Schema"]);
            assert_eq!(schema(&ours), schema(&theirs), "{what} {}", theirs["name"]);
            for key in [
                "additionalPrinterColumns",
                "subresources",
                "served",
                "storage",
            ] {
                assert_eq!(
                    ours.get(key),
                    theirs.get(key),
                    "{what} {}: {key}",
                    theirs["name"]
                );
            }
            compared += 1;
        }
    }
    assert!(compared > 2, "{compared} CRD versions compared");

    let test = kubebuilder_objects_test(&dir, name);
    std::fs::write(dir.join("tests/kubebuilder_objects.rs"), test).expect("write the test");
    let out = run(
        &dir,
        "cargo",
        &["test", "--locked", "--test", "kubebuilder_objects"],
    );
    assert!(out.contains("1 passed"), "{out}");
}

/// The status each migrated object is given under the Go project's CRD: a condition, and (the
/// shop's Order) every status field.
fn status_of(kind: &str, version: &str) -> Value {
    let condition = serde_json::json!({
        "type": "Ready",
        "status": "True",
        "reason": "Reconciled",
        "message": "written under the Go project's CRD",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
        "observedGeneration": 1,
    });
    let mut status = serde_json::json!({"conditions": [condition]});
    if (kind, version) == ("Order", "v1") {
        let more = serde_json::json!({
            "total": "12500m",
            "shippedAt": "2026-01-02T03:04:05Z",
            "observedGeneration": 1,
            "replicas": 1,
            "selector": "app=order",
        });
        status
            .as_object_mut()
            .expect("an object")
            .extend(more.as_object().cloned().unwrap_or_default());
    }
    status
}

/// The CRD of `kind` in the API group `group` of the project in `dir` (a multigroup project
/// can have one kind name in two groups).
fn crd_of(dir: &Path, group: &str, kind: &str) -> Value {
    std::fs::read_dir(dir.join("config/crd/bases"))
        .expect("the CRDs")
        .flatten()
        .flat_map(|e| yaml_documents(&std::fs::read_to_string(e.path()).expect("a CRD")))
        .find(|crd| crd["spec"]["group"] == group && crd["spec"]["names"]["kind"] == kind)
        .unwrap_or_else(|| panic!("no CRD of {kind} in {group}"))
}

/// The Rust module of the version `version` of API group `api_group` in the project in `dir`:
/// `api::v1`, or in a multigroup project `api::<group>::v1` (`example.com` -> `example_com`).
fn api_module(dir: &Path, api_group: &str, version: &str) -> String {
    let text = std::fs::read_to_string(dir.join("PROJECT")).expect("PROJECT");
    let project = &yaml_documents(&text)[0];
    if project["multigroup"] != true {
        return format!("api::{version}");
    }
    let domain = project["domain"].as_str().expect("a domain");
    let group = api_group
        .strip_suffix(&format!(".{domain}"))
        .unwrap_or(api_group);
    format!("api::{}::{version}", group.replace(['.', '-'], "_"))
}

/// `tests/kubebuilder_objects.rs` for the migrated project in `dir` (golden tree `name`): one
/// object per sample of config/samples, each read through its Rust type.
fn kubebuilder_objects_test(dir: &Path, name: &str) -> String {
    let krate = name.replace('-', "_");
    let mut objects = String::new();
    let mut round_trips = String::new();
    let mut samples: Vec<_> = std::fs::read_dir(dir.join("config/samples"))
        .expect("samples")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n != "kustomization.yaml"))
        .collect();
    samples.sort();
    for sample in samples {
        let text = std::fs::read_to_string(&sample).expect("a sample");
        let mut object = yaml_documents(&text)[0].clone();
        let kind = object["kind"].as_str().expect("kind").to_owned();
        let api_version = object["apiVersion"]
            .as_str()
            .expect("apiVersion")
            .to_owned();
        let (group, version) = api_version.split_once('/').expect("group/version");
        let (group, version) = (group.to_owned(), version.to_owned());
        // The objects a cluster holds are stored in the version stored: an object created in
        // another is converted to it (and, without a conversion webhook, loses what that
        // version has not), which is the conversion's business, not the types'.
        let crd = crd_of(dir, &group, &kind);
        let stored = crd["spec"]["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|v| v["name"] == version.as_str() && v["storage"] == true);
        if !stored {
            continue;
        }
        // One name per version: the samples of a kind's versions share one.
        let unique = format!(
            "{}-{version}",
            object["metadata"]["name"].as_str().unwrap_or("sample")
        );
        object["metadata"]["name"] = Value::String(unique);
        objects.push_str(&format!(
            "        (json!({object}), json!({})),\n",
            status_of(&kind, &version)
        ));
        let module = api_module(dir, &group, &version);
        let api = match crd["spec"]["scope"] == "Namespaced" {
            true => {
                format!("Api::<{krate}::{module}::{kind}>::namespaced(client.clone(), \"default\")")
            }
            false => format!("Api::<{krate}::{module}::{kind}>::all(client.clone())"),
        };
        round_trips.push_str(&format!("    round_trip({api}, &client, &before).await;\n"));
    }
    KUBEBUILDER_OBJECTS
        .replace("{crate}", &krate)
        .replace("{objects}", &objects)
        .replace("{round_trips}", &round_trips)
}

/// The test written into a migrated tree's copy (see [`kubebuilder_objects_test`]).
const KUBEBUILDER_OBJECTS: &str = r#"//! The objects of the kubebuilder project, created under its CRDs (controller-gen's, kept in
//! config/crd/kubebuilder), read, updated and written back through this project's types under
//! its CRDs (kube-derive's): every field stays.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::{Client, Resource, ResourceExt};
use rbuilder_testing::envtest::{ControlPlane, from_yaml};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The objects and the status each gets.
fn objects() -> Vec<(Value, Value)> {
    vec![
{objects}    ]
}

/// The kubebuilder project's CRDs, as the migration kept them.
fn go_crds() -> Vec<CustomResourceDefinition> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/config/crd/kubebuilder");
    let mut crds = Vec::new();
    for entry in std::fs::read_dir(dir).expect("config/crd/kubebuilder").flatten() {
        let text = std::fs::read_to_string(entry.path()).expect("a CRD");
        crds.push(from_yaml(&text));
    }
    crds
}

/// Installs `crds` in place of what is there (as `make install` would over the Go project's),
/// and waits for the API server to serve them.
async fn install(client: &Client, crds: Vec<CustomResourceDefinition>) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for mut crd in crds {
        let name = crd.name_any();
        crd.metadata.resource_version = None;
        crd.status = None;
        let params = PatchParams::apply("migration-test").force();
        api.patch(&name, &params, &Patch::Apply(&crd)).await.expect("apply the CRD");
        for _ in 0..200 {
            let got = api.get(&name).await.expect("the CRD");
            let conditions = got.status.and_then(|s| s.conditions).unwrap_or_default();
            if conditions.iter().any(|c| c.type_ == "Established" && c.status == "True") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    // The API server takes up a changed schema from its watch of the CRDs.
    tokio::time::sleep(Duration::from_secs(2)).await;
}

/// The API of `object`'s kind, from the CRDs installed.
async fn dynamic(client: &Client, object: &Value) -> (Api<DynamicObject>, ApiResource) {
    let api_version = object["apiVersion"].as_str().expect("apiVersion");
    let (group, version) = api_version.split_once('/').expect("group/version");
    let kind = object["kind"].as_str().expect("kind");
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let (resource, capabilities) = kube::discovery::pinned_kind(client, &gvk).await.expect("discovery");
    let api = match capabilities.scope {
        kube::discovery::Scope::Namespaced => Api::namespaced_with(client.clone(), "default", &resource),
        kube::discovery::Scope::Cluster => Api::all_with(client.clone(), &resource),
    };
    (api, resource)
}

/// What an object holds of its own: spec, status and labels.
fn held(object: &DynamicObject) -> Value {
    json!({"data": object.data, "labels": object.labels()})
}

/// Reads the object of `before` of `api`'s type through that type, labels it, writes it back,
/// and checks that nothing else of it changed.
async fn round_trip<K>(api: Api<K>, client: &Client, before: &BTreeMap<String, DynamicObject>)
where
    K: Resource<DynamicType = ()> + Clone + std::fmt::Debug + Serialize + DeserializeOwned,
{
    let (kind, version) = (K::kind(&()), K::api_version(&()));
    let (_, stored) = before
        .iter()
        .find(|(_, o)| o.types.as_ref().is_some_and(|t| t.kind == kind && t.api_version == version))
        .unwrap_or_else(|| panic!("no {kind} {version} created"));
    let name = &stored.name_any();
    let mut typed = api.get(name).await.unwrap_or_else(|e| panic!("{kind} {name}: {e}"));
    typed.meta_mut().labels.get_or_insert_with(Default::default).insert("migrated".into(), "yes".into());
    api.replace(name, &PostParams::default(), &typed).await.unwrap_or_else(|e| panic!("write back {kind} {name}: {e}"));
    let (dynamic, _) = dynamic(client, &serde_json::to_value(stored).expect("JSON")).await;
    let after = dynamic.get(name).await.expect("the object written back");
    let mut expected = held(stored);
    expected["labels"]["migrated"] = json!("yes");
    assert_eq!(held(&after), expected, "{kind} {version} {name}");
}

#[tokio::test]
async fn objects_of_the_go_crds_keep_every_field_under_the_rust_crds() {
    let plane = ControlPlane::start().await.expect("kube-apiserver and etcd");
    let client = plane.client().await.expect("a client");

    install(&client, go_crds()).await;
    let mut before = BTreeMap::new();
    for (object, status) in objects() {
        let (api, resource) = dynamic(&client, &object).await;
        let mut created: DynamicObject = serde_json::from_value(object).expect("an object");
        created.types = Some(kube::core::TypeMeta { api_version: resource.api_version.clone(), kind: resource.kind.clone() });
        let name = created.name_any();
        api.create(&PostParams::default(), &created).await.unwrap_or_else(|e| panic!("create {name}: {e}"));
        let status = json!({"status": status});
        api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status)).await.unwrap_or_else(|e| panic!("status of {name}: {e}"));
        // Keyed by type too: one kind name in two groups may name its samples alike.
        let key = format!("{} {} {name}", resource.api_version, resource.kind);
        before.insert(key, api.get(&name).await.expect("the object"));
    }

    install(&client, {crate}::api::crds().expect("the Rust CRDs")).await;
{round_trips}}
"#;

/// Controllers for other projects' resources: the project builds and passes its checks, and
/// every sample of `testdata/crds/samples` (the projects' documented objects) deserializes into
/// the generated type of its kind and serializes back to the same JSON. That round trip is
/// written into the copy as a test of its own, `tests/round_trip.rs`, as a user would write it.
#[test]
#[ignore = "slow: builds a generated project against crates.io (make test runs it)"]
fn external() {
    let (_tmp, dir) = copy_of("external");
    let samples = repo().join("testdata/crds/samples");
    let types = [
        ("certificate", "cert_manager::v1::Certificate"),
        ("servicemonitor", "monitoring::v1::ServiceMonitor"),
        ("application", "argoproj::v1alpha1::Application"),
    ];
    let mut test = String::from(ROUND_TRIP);
    std::fs::create_dir_all(dir.join("tests/samples")).expect("create tests/samples");
    // Written before the checks, so that they also show the samples do not disturb the project.
    let mut names: Vec<String> = std::fs::read_dir(&samples)
        .expect("samples")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    names.sort();
    for name in &names {
        let text = std::fs::read_to_string(samples.join(name)).expect("sample");
        let json = dir
            .join("tests/samples")
            .join(name.replace(".yaml", ".json"));
        std::fs::write(&json, yaml_documents(&text)[0].to_string()).expect("write sample");
        let (_, ty) = types
            .iter()
            .find(|(prefix, _)| name.starts_with(prefix))
            .unwrap_or_else(|| panic!("no type for sample {name}"));
        let stem = name.trim_end_matches(".yaml");
        test.push_str(&format!(
            "\n#[test]\nfn {}() {{\n    round_trip::<external::api::external::{ty}>(include_str!(\"samples/{stem}.json\"));\n}}\n",
            stem.replace('-', "_")
        ));
    }
    check_project(&dir);
    // Not the user's code: written after the checks of the project (`cargo fmt --check`...).
    std::fs::write(dir.join("tests/round_trip.rs"), test).expect("write the test");
    let out = run(&dir, "cargo", &["test", "--locked", "--test", "round_trip"]);
    assert!(
        out.contains(&format!("{} passed", names.len())),
        "every sample round-trips:\n{out}"
    );
}

/// The start of the round-trip test written into the external tree's copy.
const ROUND_TRIP: &str = r#"//! Each documented object deserializes into its generated type and serializes back unchanged.

fn round_trip<K: serde::de::DeserializeOwned + serde::Serialize>(json: &str) {
    let value: serde_json::Value = serde_json::from_str(json).expect("JSON");
    let typed: K = serde_json::from_value(value.clone()).expect("deserializes");
    let back = serde_json::to_value(&typed).expect("serializes");
    assert_eq!(back, value, "the round trip changed the object");
}
"#;

/// The example is up to date: `rbuilder update` has nothing to write but PROJECT's cliVersion
/// (the example holds the crate's version alone, without the commit this rbuilder was built
/// from: see `common::project_files`). (The runtime's own tests and lints run in rbuilder's
/// workspace, where it is a crate.)
fn check_runtime(dir: &Path) {
    let update = rbuilder(dir, &["update", "--dry-run"])
        .success()
        .get_output()
        .stdout
        .clone();
    let update = String::from_utf8_lossy(&update);
    let writes: Vec<&str> = update
        .lines()
        .map(str::trim)
        .filter(|line| {
            ["update ", "create ", "delete "]
                .iter()
                .any(|verb| line.starts_with(verb))
        })
        .filter(|line| *line != "update PROJECT")
        .collect();
    assert!(writes.is_empty(), "{update}");
    assert!(
        update.contains("Cargo.lock: the crates this rbuilder was tested with already."),
        "{update}"
    );
}

/// The charts of three more trees, without building them: the templates `make helm` makes from
/// their config/default, as runtime/tests/helm.rs keeps them (checked against `kubectl
/// kustomize` here, so they cannot go stale), with the chart's own files from `rbuilder edit
/// --plugins helm/v2-alpha`: the tutorial's, an operator scoped to its namespace (Roles,
/// webhooks named after the namespace), and one converting between versions (the CRD's
/// conversion webhook).
#[test]
#[ignore = "needs helm (scripts/helm builds it) and kubernetes-validate (make test runs it)"]
fn helm_charts_of_other_trees() {
    for (name, namespaced) in [
        ("demo-microservice", false),
        ("namespaced", true),
        ("multiversion", false),
    ] {
        let (_tmp, dir) = copy_of(name);
        let fixture = repo().join("runtime/tests/helm").join(name);
        let rendered = std::fs::read_to_string(fixture.join("rendered.yaml")).expect("fixture");
        assert_eq!(
            run(&dir, "kubectl", &["kustomize", "config/default"]),
            rendered,
            "runtime/tests/helm/{name}/rendered.yaml is not what {name}'s config/default renders: \
             copy it there and run RBUILDER_GOLDEN=overwrite cargo test -p rbuilder-runtime --test helm"
        );
        rbuilder(&dir, &["edit", "--plugins", "helm/v2-alpha"]).success();
        let templates = dir.join("dist/chart/templates");
        for folder in std::fs::read_dir(fixture.join("templates")).expect("templates") {
            let folder = folder.expect("entry").path();
            let target = templates.join(folder.file_name().expect("a name"));
            std::fs::create_dir_all(&target).expect("mkdir");
            for file in std::fs::read_dir(&folder).expect("folder") {
                let file = file.expect("entry").path();
                std::fs::copy(&file, target.join(file.file_name().expect("a name"))).expect("copy");
            }
        }
        run(&dir, helm(), &["lint", "--strict", "dist/chart"]);
        let namespace = format!("{name}-system");
        let objects = helm_template(&dir, name, &namespace, &[]);
        let role = objects
            .iter()
            .find(|o| o["metadata"]["name"] == format!("{name}-manager-role"))
            .expect("the manager's role");
        assert_eq!(
            role["kind"],
            if namespaced { "Role" } else { "ClusterRole" }
        );
        helm_template(
            &dir,
            "other",
            "elsewhere",
            &[
                "prometheus.enabled=true",
                "networkPolicy.enabled=true",
                "rbac.helpers.enabled=true",
            ],
        );
        let wrong = if namespaced { "false" } else { "true" };
        let out = Command::new(helm())
            .args(["template", name, "dist/chart", "--set"])
            .arg(format!("rbac.namespaced={wrong}"))
            .current_dir(&dir)
            .output()
            .expect("run helm");
        assert!(
            !out.status.success(),
            "{name}: rbac.namespaced={wrong} was accepted"
        );
    }
}

/// The helm binary of scripts/helm (built from its Go module the first time).
fn helm() -> &'static str {
    static HELM: OnceLock<String> = OnceLock::new();
    HELM.get_or_init(|| {
        let script = repo().join("scripts/helm");
        let out = Command::new(&script)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
        assert!(
            out.status.success(),
            "scripts/helm failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    })
}

/// `command` run by bash in `dir` (for pipes), as `run` runs programs; its stdout and stderr.
fn bash(dir: &Path, command: &str) -> (String, String) {
    let out = as_a_users_build(&mut Command::new("bash"))
        .args(["-o", "pipefail", "-c", command])
        .current_dir(dir)
        .output()
        .expect("run bash");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "`{command}` failed in {}:\n{stdout}\n{stderr}",
        dir.display()
    );
    (stdout, stderr)
}

/// `helm template` of the chart in `dir` as release `release` in `namespace`, with `sets`
/// (`--set` arguments); the objects, each checked by `kubernetes-validate --strict`.
fn helm_template(dir: &Path, release: &str, namespace: &str, sets: &[&str]) -> Vec<Value> {
    let mut args = vec!["template", release, "dist/chart", "--namespace", namespace];
    for set in sets {
        args.extend(["--set", set]);
    }
    let rendered = run(dir, helm(), &args);
    let file = scratch(dir, "helm.yaml");
    std::fs::write(&file, &rendered).expect("write the chart's objects");
    run(
        dir,
        "kubernetes-validate",
        &["--strict", "--quiet", "target/helm.yaml"],
    );
    std::fs::remove_file(&file).expect("remove the chart's objects");
    check_restricted_pods(&rendered);
    yaml_documents(&rendered)
}

/// The chart made by `make helm` from config/default: up to date, linted, every object valid
/// whatever values.yaml turns on or off, under any release name, and the same objects as
/// config/default renders but for the differences listed in `CHART_DIFFERENCES`.
fn check_helm_chart(dir: &Path, project: &str) {
    let namespace = format!("{project}-system");
    // values.yaml says what config/ says, as `rbuilder edit` read it: no notes.
    let (_, notes) = bash(dir, "make helm");
    assert!(!notes.contains("note:"), "make helm noted:\n{notes}");
    let (written, _) = bash(dir, "make helm");
    assert!(
        !written.contains("wrote "),
        "a second make helm wrote:\n{written}"
    );
    let check = format!(
        "kubectl kustomize config/default | cargo run --quiet --package {} -- helm --check",
        manifests_package(dir)
    );
    bash(dir, &check);
    // A template that config/ no longer makes is deleted; the user's own templates stay.
    let templates = dir.join("dist/chart/templates");
    let header = std::fs::read_to_string(templates.join("manager/manager.yaml"))
        .expect("the manager's template")
        .lines()
        .next()
        .expect("a header")
        .to_owned();
    std::fs::create_dir_all(templates.join("extras")).expect("mkdir");
    std::fs::write(templates.join("extras/gone.yaml"), format!("{header}\n")).expect("write");
    std::fs::write(templates.join("extras/mine.yaml"), "# the user's\n").expect("write");
    let (deleted, _) = bash(dir, "make helm");
    assert!(
        deleted.contains("deleted dist/chart/templates/extras/gone.yaml"),
        "{deleted}"
    );
    assert!(templates.join("extras/mine.yaml").exists());
    std::fs::remove_dir_all(templates.join("extras")).expect("remove extras");

    run(dir, helm(), &["lint", "--strict", "dist/chart"]);

    // As release <project> in <project>-system, the chart names everything as config/default.
    let chart = helm_template(dir, project, &namespace, &[]);
    let config = yaml_documents(&run(dir, "kubectl", &["kustomize", "config/default"]));
    let mut differences = chart_differences(&config, &chart);
    differences.sort();
    let mut expected: Vec<String> = CHART_DIFFERENCES
        .iter()
        .map(|d| d.replace("<project>", project))
        .collect();
    expected.sort();
    assert_eq!(
        differences, expected,
        "helm template and kubectl kustomize config/default differ otherwise than listed"
    );

    // Everything on, and everything off: still valid objects.
    let all_on = helm_template(
        dir,
        project,
        &namespace,
        &[
            "prometheus.enabled=true",
            "networkPolicy.enabled=true",
            "rbac.helpers.enabled=true",
            "metrics.secure=false",
            "manager.replicas=2",
            "manager.pod.labels.team=a",
            "manager.annotations.note=b",
            "serviceAccount.annotations.note=c",
        ],
    );
    let kinds = |objects: &[Value]| -> Vec<String> {
        objects
            .iter()
            .map(|o| {
                format!(
                    "{} {}",
                    o["kind"].as_str().unwrap_or_default(),
                    o["metadata"]["name"].as_str().unwrap_or_default()
                )
            })
            .collect()
    };
    for wanted in [
        format!("ServiceMonitor {project}-controller-manager-metrics-monitor"),
        format!("NetworkPolicy {project}-allow-metrics-traffic"),
        format!("NetworkPolicy {project}-allow-webhook-traffic"),
        format!("ClusterRole {project}-demomicroservice-admin-role"),
    ] {
        assert!(
            kinds(&all_on).contains(&wanted),
            "no {wanted} in {:?}",
            kinds(&all_on)
        );
    }
    let deployment = |objects: &[Value]| -> Value {
        objects
            .iter()
            .find(|o| o["kind"] == "Deployment")
            .cloned()
            .expect("a Deployment")
    };
    let manager = deployment(&all_on);
    assert_eq!(manager["spec"]["replicas"], 2);
    assert_eq!(
        manager["spec"]["template"]["metadata"]["labels"]["team"],
        "a"
    );
    assert_eq!(manager["metadata"]["annotations"]["note"], "b");
    let args = &manager["spec"]["template"]["spec"]["containers"][0]["args"];
    assert!(
        args.as_array()
            .expect("args")
            .contains(&serde_json::json!("--metrics-secure=false")),
        "{args}"
    );

    let all_off = helm_template(
        dir,
        project,
        &namespace,
        &[
            "metrics.enabled=false",
            "webhook.enabled=false",
            "certManager.enabled=false",
            "crd.enabled=false",
            "serviceAccount.enabled=false",
            "serviceAccount.name=default",
        ],
    );
    assert_eq!(
        kinds(&all_off)
            .iter()
            .map(|k| k.split(' ').next().unwrap_or_default())
            .collect::<Vec<_>>(),
        [
            "ClusterRole",
            "ClusterRoleBinding",
            "Role",
            "RoleBinding",
            "Deployment"
        ],
        "only the manager and its roles: {:?}",
        kinds(&all_off)
    );
    let manager = deployment(&all_off);
    let pod = &manager["spec"]["template"]["spec"];
    assert_eq!(pod["serviceAccountName"], "default");
    let args = pod["containers"][0]["args"].to_string();
    for arg in ["--metrics-bind-address=0", "--webhook-bind-address=0"] {
        assert!(args.contains(arg), "{args}");
    }
    assert!(!args.contains("--webhook-cert-path"), "{args}");
    assert!(pod.get("volumes").is_none(), "{pod}");

    // Another release, in another namespace, with the longest name Helm allows: every name is
    // the release's and within Kubernetes' limits (kubernetes-validate checks them), and
    // nothing names config/default's namespace.
    let release = "r".repeat(53);
    let elsewhere = helm_template(dir, &release, "elsewhere", &[]);
    for object in &elsewhere {
        let name = object["metadata"]["name"].as_str().expect("a name");
        assert!(
            name.starts_with(&release[..20]) || object["kind"] == "CustomResourceDefinition",
            "{name}"
        );
        assert!(
            name.len() <= 63 || object["kind"] == "CustomResourceDefinition",
            "{name}"
        );
    }
    let text = serde_json::to_string(&elsewhere).expect("JSON");
    assert!(!text.contains(&namespace), "{namespace} is still named");

    // The manager's role follows the operator's compiled-in scope.
    let out = Command::new(helm())
        .args([
            "template",
            project,
            "dist/chart",
            "--set",
            "rbac.namespaced=true",
        ])
        .current_dir(dir)
        .output()
        .expect("run helm");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("this operator watches the whole cluster"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// How `helm template` of the chart (as release <project>, in <project>-system, with the
/// values `rbuilder edit` wrote) differs from `kubectl kustomize config/default`, once Helm's
/// labels (`app.kubernetes.io/instance`, `helm.sh/chart` and `managed-by`, on every object and
/// in every selector) and the order of the manager's arguments are set aside. Each is on
/// purpose (docs/commands.md lists them):
const CHART_DIFFERENCES: &[&str] = &[
    // Helm installs into a namespace that exists (helm-deploy makes it, with the Pod Security
    // label config/default's Namespace has).
    "Namespace <project>-system: only in config/default",
    // rbac.helpers.enabled is false, as in kubebuilder's chart: the admin/editor/viewer roles
    // are for people, and the operator does not need them.
    "ClusterRole <project>-demomicroservice-admin-role: only in config/default",
    "ClusterRole <project>-demomicroservice-editor-role: only in config/default",
    "ClusterRole <project>-demomicroservice-viewer-role: only in config/default",
    "ClusterRole <project>-guestbook-admin-role: only in config/default",
    "ClusterRole <project>-guestbook-editor-role: only in config/default",
    "ClusterRole <project>-guestbook-viewer-role: only in config/default",
    // crd.keep: helm uninstall leaves the CRDs, and with them the users' objects.
    "CustomResourceDefinition demomicroservices.devops.my.domain: +/metadata/annotations",
    "CustomResourceDefinition guestbooks.devops.my.domain: +/metadata/annotations",
    // The image: values.yaml's repository, tagged with the chart's appVersion (make
    // helm-deploy IMG=... sets both), pulled IfNotPresent.
    "Deployment <project>-controller-manager: ~/spec/template/spec/containers/0/image",
    "Deployment <project>-controller-manager: +/spec/template/spec/containers/0/imagePullPolicy",
];

/// The differences between the objects of `config` and of `chart`, one line each (see
/// `CHART_DIFFERENCES`).
fn chart_differences(config: &[Value], chart: &[Value]) -> Vec<String> {
    fn key(object: &Value) -> String {
        format!(
            "{} {}",
            object["kind"].as_str().unwrap_or_default(),
            object["metadata"]["name"].as_str().unwrap_or_default()
        )
    }
    fn normalized(object: &Value) -> Value {
        let mut object = object.clone();
        for path in [
            "/metadata/labels",
            "/spec/selector",
            "/spec/selector/matchLabels",
            "/spec/template/metadata/labels",
            "/spec/podSelector/matchLabels",
        ] {
            if let Some(labels) = object.pointer_mut(path).and_then(Value::as_object_mut) {
                for helm in [
                    "app.kubernetes.io/instance",
                    "helm.sh/chart",
                    "app.kubernetes.io/managed-by",
                ] {
                    labels.remove(helm);
                }
            }
        }
        if let Some(metadata) = object["metadata"].as_object_mut() {
            metadata
                .retain(|key, v| key != "labels" || v.as_object().is_some_and(|m| !m.is_empty()));
        }
        if let Some(args) = object
            .pointer_mut("/spec/template/spec/containers/0/args")
            .and_then(Value::as_array_mut)
        {
            args.sort_by_key(Value::to_string);
        }
        object
    }
    fn walk(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
        match (a, b) {
            (Value::Object(a), Value::Object(b)) => {
                for key in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                    let at = format!("{path}/{key}");
                    match (a.get(key), b.get(key)) {
                        (Some(x), Some(y)) => walk(&at, x, y, out),
                        (Some(_), None) => out.push(format!("-{at}")),
                        (None, Some(_)) => out.push(format!("+{at}")),
                        (None, None) => {}
                    }
                }
            }
            (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    walk(&format!("{path}/{i}"), x, y, out);
                }
            }
            _ if a != b => out.push(format!("~{path}")),
            _ => {}
        }
    }
    let mut differences = Vec::new();
    for object in config {
        match chart.iter().find(|c| key(c) == key(object)) {
            None => differences.push(format!("{}: only in config/default", key(object))),
            Some(templated) => {
                let mut found = Vec::new();
                walk("", &normalized(object), &normalized(templated), &mut found);
                // Helm's labels on an object config/default leaves unlabelled.
                found.retain(|d| d != "+/metadata/labels");
                differences.extend(found.into_iter().map(|d| format!("{}: {d}", key(object))));
            }
        }
    }
    for object in chart
        .iter()
        .filter(|c| !config.iter().any(|o| key(o) == key(c)))
    {
        differences.push(format!("{}: only in the chart", key(object)));
    }
    differences
}
