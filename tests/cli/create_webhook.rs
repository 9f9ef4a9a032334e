//! `rbuilder create webhook`: defaulting, validation and conversion webhooks, and what it refuses.

use std::fs;

use crate::common::{
    assert_rejected, assert_same_tree, initialized, project_dir, rbuilder, snapshot,
};
use crate::{DEMO, read, webhook_args};
use predicates::str::contains;

#[test]
fn create_webhook_writes_the_kinds_webhooks_registers_and_records_them() {
    let (_tmp, dir) = initialized("example");
    rbuilder(&dir, DEMO).success();
    let args = webhook_args("v1", &["--defaulting", "--programmatic-validation"]);
    rbuilder(&dir, &args)
        .success()
        .stdout(contains("create src/webhook/v1/demo_micro_service.rs"));
    let registry = read(&dir, "src/webhook/mod.rs");
    assert!(registry.contains("pub mod v1;"), "{registry}");
    assert!(
        registry.contains("v1::demo_micro_service::DEFAULTING,"),
        "{registry}"
    );
    assert!(
        registry.contains("v1::demo_micro_service::VALIDATING,"),
        "{registry}"
    );
    assert!(read(&dir, "src/webhook/v1/mod.rs").contains("pub mod demo_micro_service;"));
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains(
            "  webhooks:\n    defaulting: true\n    validation: true\n    webhookVersion: v1\n"
        ),
        "{project}"
    );

    // Deployed as kubebuilder deploys webhooks: configurations from the code, a Service, a
    // cert-manager certificate, all enabled in config/default.
    let manifests = read(&dir, "config/webhook/manifests.yaml");
    assert!(
        manifests.contains("path: /mutate-devops-my-domain-v1-demomicroservice"),
        "{manifests}"
    );
    assert!(
        manifests.contains("name: vdemomicroservice-v1.kb.io"),
        "{manifests}"
    );
    let default = read(&dir, "config/default/kustomization.yaml");
    for enabled in [
        "\n- ../webhook\n",
        "\n- ../certmanager\n",
        "\n- path: manager_webhook_patch.yaml\n",
        "\nreplacements:\n- path: webhook_replacements.yaml\n",
    ] {
        assert!(default.contains(enabled), "{enabled:?} in\n{default}");
    }
    assert!(
        read(&dir, "config/certmanager/kustomization.yaml").contains("- certificate-webhook.yaml")
    );

    // Conversion to a second version: its own file, registered after the others.
    let v2 = [
        "create",
        "api",
        "--group",
        "devops",
        "--version",
        "v2",
        "--kind",
        "DemoMicroService",
    ];
    rbuilder(&dir, &v2).success();
    rbuilder(
        &dir,
        &webhook_args("v1", &["--conversion", "--spoke", "v2"]),
    )
    .success()
    .stdout(contains(
        "create src/webhook/v2/demo_micro_service_conversion.rs",
    ));
    let conversion = read(&dir, "src/webhook/v2/demo_micro_service_conversion.rs");
    assert!(
        conversion.contains("impl From<Spoke> for Hub {")
            && conversion.contains("type Spoke = v2::DemoMicroService;"),
        "{conversion}"
    );
    let project = read(&dir, "PROJECT");
    assert!(project.contains("    conversion: true\n"), "{project}");
    assert!(project.contains("    spoke:\n    - v2\n"), "{project}");
    assert!(
        read(&dir, "src/webhook/mod.rs").contains("v2::demo_micro_service_conversion::CONVERSION,")
    );

    // A third version joins the conversion without --force, touching no file of the second;
    // converting the second again needs --force.
    let v3: Vec<&str> = v2
        .iter()
        .map(|a| if *a == "v2" { "v3" } else { a })
        .collect();
    rbuilder(&dir, &v3).success();
    let before = read(&dir, "src/webhook/v2/demo_micro_service_conversion.rs");
    rbuilder(
        &dir,
        &webhook_args("v1", &["--conversion", "--spoke", "v3"]),
    )
    .success()
    .stdout(contains(
        "create src/webhook/v3/demo_micro_service_conversion.rs",
    ));
    assert_eq!(
        before,
        read(&dir, "src/webhook/v2/demo_micro_service_conversion.rs")
    );
    assert!(
        read(&dir, "PROJECT").contains("    spoke:\n    - v2\n    - v3\n"),
        "{}",
        read(&dir, "PROJECT")
    );
    rbuilder(
        &dir,
        &webhook_args("v1", &["--conversion", "--spoke", "v2"]),
    )
    .failure()
    .stderr(contains("already converts to and from v2"));

    // --force rewrites the kind's webhook file, and registers nothing twice.
    rbuilder(&dir, &webhook_args("v1", &["--defaulting", "--force"]))
        .success()
        .stdout(contains("overwrite src/webhook/v1/demo_micro_service.rs"));
    let registry = read(&dir, "src/webhook/mod.rs");
    assert_eq!(registry.matches("DEFAULTING,").count(), 1, "{registry}");
    assert!(
        registry.contains("VALIDATING,"),
        "--force keeps validation: {registry}"
    );
}

#[test]
fn create_webhook_dry_run_writes_nothing() {
    let (_tmp, dir) = initialized("example");
    rbuilder(&dir, DEMO).success();
    let before = snapshot(&dir);
    rbuilder(&dir, &webhook_args("v1", &["--defaulting", "--dry-run"]))
        .success()
        .stdout(contains("create src/webhook/v1/demo_micro_service.rs"))
        .stdout(contains("dry run: nothing was written"));
    assert_eq!(before, snapshot(&dir));
}

#[test]
fn create_webhook_rejections_write_nothing() {
    let (_tmp, dir) = initialized("example");
    rbuilder(&dir, DEMO).success();
    rbuilder(&dir, &webhook_args("v1", &["--defaulting"])).success();
    let cases: &[(Vec<&str>, &[&str])] = &[
        (
            webhook_args("v1", &[]),
            &["no webhook chosen", "--defaulting"],
        ),
        (
            webhook_args("v3", &["--defaulting"]),
            &["devops/v3 DemoMicroService", "not a resource", "create api"],
        ),
        (
            vec![
                "create",
                "webhook",
                "--group",
                "devops",
                "--version",
                "v1",
                "--kind",
                "Missing",
                "--defaulting",
            ],
            &["Missing", "not a resource of this project"],
        ),
        (
            webhook_args("v1", &["--defaulting"]),
            &["already has a defaulting webhook", "--force"],
        ),
        (
            webhook_args("v1", &["--programmatic-validation"]),
            &["already has webhooks", "--force"],
        ),
        (
            webhook_args("v1", &["--conversion", "--spoke", "v2"]),
            &["--conversion", "has one (v1)", "create api"],
        ),
        (
            webhook_args("v1", &["--spoke", "v2"]),
            &["--spoke only applies with --conversion"],
        ),
        (
            vec![
                "create",
                "webhook",
                "--group",
                "devops",
                "--kind",
                "demo",
                "--defaulting",
            ],
            &["'demo'", "UpperCamelCase"],
        ),
    ];
    for (args, needles) in cases {
        assert_rejected(&dir, args, needles);
    }

    // With a second version: the spokes must be versions of the kind, other than the hub.
    let v2 = [
        "create",
        "api",
        "--group",
        "devops",
        "--version",
        "v2",
        "--kind",
        "DemoMicroService",
    ];
    rbuilder(&dir, &v2).success();
    let cases: &[(Vec<&str>, &[&str])] = &[
        (webhook_args("v1", &["--conversion"]), &["--spoke", "v2"]),
        (
            webhook_args("v1", &["--conversion", "--spoke", "v9"]),
            &["--spoke v9", "has no version v9", "v1, v2"],
        ),
        (
            webhook_args("v1", &["--conversion", "--spoke", "v1"]),
            &["--spoke v1 is the hub"],
        ),
        (
            webhook_args("v1", &["--conversion", "--spoke", "v2,v2"]),
            &["given twice"],
        ),
    ];
    for (args, needles) in cases {
        assert_rejected(&dir, args, needles);
    }
}

#[test]
fn create_webhook_needs_a_project() {
    let (_tmp, dir) = project_dir("empty");
    assert_rejected(
        &dir,
        &webhook_args("v1", &["--defaulting"]),
        &["no PROJECT file"],
    );
}

#[test]
fn webhooks_for_a_built_in_type_need_no_controller_and_skip_the_managers_namespace() {
    let (tmp, dir) = initialized("example");
    let pod = ["--group", "core", "--version", "v1", "--kind", "Pod"];
    rbuilder(
        &dir,
        &[&["create", "webhook"][..], &pod, &["--defaulting"]].concat(),
    )
    .success()
    .stdout(contains("create src/webhook/v1/pod.rs"));
    assert!(!dir.join("src/controller/pod.rs").exists());
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("- core: true\n  group: core\n  kind: Pod\n  plural: pods\n"),
        "{project}"
    );
    let manifests = read(&dir, "config/webhook/manifests.yaml");
    assert!(manifests.contains("path: /mutate--v1-pod"), "{manifests}");
    assert!(
        manifests.contains("operator: NotIn\n      values:\n      - system\n      - kube-system\n"),
        "{manifests}"
    );
    let replacements = read(&dir, "config/default/webhook_replacements.yaml");
    assert!(
        replacements.contains(".webhooks.*.namespaceSelector.matchExpressions"),
        "{replacements}"
    );

    // Scoped to its namespace, the operator's Pod webhook looks there only.
    rbuilder(&dir, &["edit", "--namespaced"]).success();
    let manifests = read(&dir, "config/webhook/manifests.yaml");
    assert!(
        manifests.contains("operator: In\n      values:\n      - system\n  objectSelector:"),
        "{manifests}"
    );

    // A controller can come later; the entry keeps its webhooks, and a replay gives the same.
    rbuilder(
        &dir,
        &[&["create", "api"][..], &pod, &["--resource=false"]].concat(),
    )
    .success();
    assert!(dir.join("src/controller/pod.rs").exists());
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("- controller: true\n  core: true\n  group: core\n  kind: Pod\n"),
        "{project}"
    );
    assert!(project.contains("    defaulting: true\n"), "{project}");
    rbuilder(&dir, &["alpha", "generate", "--output-dir", "../fresh"]).success();
    let fresh = tmp.path().join("fresh");
    assert_same_tree(&snapshot(&dir), &snapshot(&fresh), "the replayed project");
}

#[test]
fn a_validator_that_asks_for_deletions_keeps_them_when_another_webhook_is_added() {
    let (_tmp, dir) = initialized("example");
    rbuilder(&dir, DEMO).success();
    rbuilder(&dir, &webhook_args("v1", &["--programmatic-validation"])).success();
    // What `make manifests` writes once the validator sets `VALIDATE_DELETE`.
    let file = dir.join("config/webhook/manifests.yaml");
    let with_delete = read(&dir, "config/webhook/manifests.yaml")
        .replace("    - UPDATE\n", "    - UPDATE\n    - DELETE\n");
    fs::write(&file, &with_delete).expect("write");
    let pod = ["--group", "core", "--version", "v1", "--kind", "Pod"];
    rbuilder(
        &dir,
        &[&["create", "webhook"][..], &pod, &["--defaulting"]].concat(),
    )
    .success();
    let manifests = read(&dir, "config/webhook/manifests.yaml");
    assert!(manifests.contains("path: /mutate--v1-pod"), "{manifests}");
    assert_eq!(manifests.matches("- DELETE").count(), 1, "{manifests}");
}

#[test]
fn create_webhook_in_a_project_made_before_webhooks_says_what_to_add() {
    let (_tmp, dir) = initialized("example");
    rbuilder(&dir, DEMO).success();
    fs::remove_file(dir.join("src/webhook/mod.rs")).expect("remove");
    assert_rejected(
        &dir,
        &webhook_args("v1", &["--defaulting"]),
        &[
            "src/webhook/mod.rs does not exist",
            "webhooks: webhook::WEBHOOKS",
        ],
    );
}

/// A project whose only webhook converts has no admission webhook configurations, so its
/// config/webhook lists none (`make manifests` writes none); the first defaulting webhook adds
/// them, and the project is then what the same webhooks made at once make.
#[test]
fn a_conversion_alone_lists_no_webhook_configurations_until_an_admission_webhook_comes() {
    let v2 = [
        "create",
        "api",
        "--group",
        "devops",
        "--version",
        "v2",
        "--kind",
        "DemoMicroService",
    ];
    let kustomization = "config/webhook/kustomization.yaml";
    let (_a, apart) = initialized("example");
    rbuilder(&apart, DEMO).success();
    rbuilder(&apart, &v2).success();
    rbuilder(
        &apart,
        &webhook_args("v1", &["--conversion", "--spoke", "v2"]),
    )
    .success();
    let text = read(&apart, kustomization);
    assert!(!text.contains("manifests.yaml\n"), "{text}");
    assert!(!apart.join("config/webhook/manifests.yaml").exists());
    rbuilder(&apart, &webhook_args("v1", &["--defaulting"]))
        .success()
        .stdout(contains(format!("update {kustomization}")));
    assert!(read(&apart, kustomization).contains("\n- manifests.yaml\n"));

    let (_b, at_once) = initialized("example");
    rbuilder(&at_once, DEMO).success();
    rbuilder(&at_once, &v2).success();
    let both = ["--defaulting", "--conversion", "--spoke", "v2"];
    rbuilder(&at_once, &webhook_args("v1", &both)).success();
    assert_same_tree(
        &snapshot(&at_once.join("config")),
        &snapshot(&apart.join("config")),
        "a conversion, then a defaulter",
    );
}

/// In a namespaced operator whose `make manifests` has started the list of replacements (the
/// manager's Roles in the other namespaces it watches, see the runtime's `watched_roles.rs`),
/// the webhook's replacement joins that list: one `replacements:` key, both entries.
#[test]
fn a_webhook_joins_the_replacements_of_the_watched_namespaces() {
    let (_tmp, dir) = project_dir("example");
    rbuilder(&dir, &["init", "--domain", "my.domain", "--namespaced"]).success();
    rbuilder(&dir, DEMO).success();
    // As `make manifests` leaves it once WATCH_NAMESPACE lists another namespace.
    let path = dir.join("config/default/kustomization.yaml");
    let default = fs::read_to_string(&path).expect("read");
    let started = default.replacen(
        "\n#replacements:\n",
        "\nreplacements:\n- path: watched_namespaces.yaml\n",
        1,
    );
    assert_ne!(
        started, default,
        "a commented-out list of replacements:\n{default}"
    );
    fs::write(&path, started).expect("write");

    rbuilder(&dir, &webhook_args("v1", &["--defaulting"])).success();
    let default = read(&dir, "config/default/kustomization.yaml");
    assert_eq!(default.matches("\nreplacements:\n").count(), 1, "{default}");
    assert!(
        default.contains(
            "\nreplacements:\n- path: watched_namespaces.yaml\n- path: webhook_replacements.yaml\n"
        ),
        "{default}"
    );
}
