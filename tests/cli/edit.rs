//! `rbuilder edit` and its plugins.

use std::fs;

use crate::common::{
    assert_rejected, assert_same_tree, initialized, project_dir, rbuilder, repo, snapshot,
};
use crate::read;
use predicates::str::contains;

#[test]
fn edit_namespaced_makes_the_project_init_namespaced_makes() {
    let guestbook = ["create", "api", "--group", "web", "--kind", "Guestbook"];
    let (_a, edited) = initialized("op");
    rbuilder(&edited, &guestbook).success();
    rbuilder(&edited, &["edit", "--namespaced"])
        .success()
        .stdout(contains("update config/manager/manager.yaml"));
    let (_b, made) = project_dir("op");
    rbuilder(&made, &["init", "--domain", "my.domain", "--namespaced"]).success();
    rbuilder(&made, &guestbook).success();
    assert_same_tree(&snapshot(&made), &snapshot(&edited), "edit --namespaced");
    assert!(read(&edited, "config/rbac/guestbook_editor_role.yaml").contains("kind: Role\n"));

    // And back.
    rbuilder(&edited, &["edit", "--namespaced=false"]).success();
    assert!(read(&edited, "config/rbac/role.yaml").contains("kind: ClusterRole"));
}

#[test]
fn edit_namespaced_refuses_cluster_scoped_kinds_and_hand_edited_files() {
    let (_tmp, dir) = initialized("op");
    let policy = [
        "create",
        "api",
        "--group",
        "web",
        "--kind",
        "Policy",
        "--namespaced=false",
    ];
    rbuilder(&dir, &policy).success();
    assert_rejected(
        &dir,
        &["edit", "--namespaced"],
        &["cluster-scoped kinds (Policy)"],
    );

    let (_tmp, dir) = initialized("op");
    let manager = "config/manager/manager.yaml";
    fs::write(dir.join(manager), read(&dir, manager) + "# mine\n").unwrap();
    assert_rejected(&dir, &["edit", "--namespaced"], &[manager, "--force"]);
    rbuilder(&dir, &["edit", "--namespaced", "--force"])
        .success()
        .stdout(contains(format!("--force rewrote: {manager}")));
    assert!(!read(&dir, manager).contains("# mine"));
}

/// Another project's cluster-scoped kind with a controller needs a ClusterRole, as one of the
/// project's own does: `create api` refuses it to a namespaced operator, and so does `edit`.
#[test]
fn edit_namespaced_refuses_a_controller_for_a_cluster_scoped_external_kind() {
    let (_tmp, dir) = initialized("op");
    let issuers = repo().join("testdata/crds/cert-manager/issuers.cert-manager.io.yaml");
    let cluster_issuers = fs::read_to_string(issuers)
        .unwrap()
        .replace("scope: Namespaced", "scope: Cluster")
        .replace("issuers.cert-manager.io", "clusterissuers.cert-manager.io")
        .replace("plural: issuers", "plural: clusterissuers")
        .replace("singular: issuer", "singular: clusterissuer")
        .replace("kind: Issuer", "kind: ClusterIssuer")
        .replace("listKind: IssuerList", "listKind: ClusterIssuerList");
    fs::write(dir.join("clusterissuers.yaml"), cluster_issuers).unwrap();
    let create = [
        "create",
        "api",
        "--group",
        "cert-manager.io",
        "--version",
        "v1",
        "--kind",
        "ClusterIssuer",
        "--resource=false",
        "--external-api-path",
        "clusterissuers.yaml",
    ];
    rbuilder(&dir, &create).success();
    assert_rejected(
        &dir,
        &["edit", "--namespaced"],
        &["cluster-scoped kinds (ClusterIssuer)"],
    );
}

#[test]
fn edit_license_and_owner_change_the_header_of_what_comes_next() {
    let (_tmp, dir) = initialized("op");
    rbuilder(&dir, &["edit", "--license", "mit", "--owner", "Jane Doe"]).success();
    assert_eq!(
        read(&dir, "hack/boilerplate.txt"),
        "Copyright 2026 Jane Doe.\n\nSPDX-License-Identifier: MIT\n"
    );
    assert!(read(&dir, "Cargo.toml").contains("license = \"MIT\""));
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("license: mit") && project.contains("owner: Jane Doe"),
        "{project}"
    );
    // New files get the new header; rbuilder's own files get it with `update`.
    rbuilder(
        &dir,
        &["create", "api", "--group", "web", "--kind", "Guestbook"],
    )
    .success();
    assert!(read(&dir, "src/controller/guestbook.rs").starts_with("// Copyright 2026 Jane Doe."));
    assert!(read(&dir, "runtime/src/lib.rs").contains("Apache License"));
    rbuilder(&dir, &["update"]).success();
    assert!(read(&dir, "runtime/src/lib.rs").starts_with("// Copyright 2026 Jane Doe."));
    assert_rejected(&dir, &["edit", "--owner", " "], &["--owner is empty"]);
    assert_rejected(&dir, &["edit"], &["nothing to edit"]);
}

/// `edit --license-file`: the file's text is the header of what comes next, PROJECT says
/// `custom` and Cargo.toml names no license; `update` and `alpha generate` keep that header,
/// and `--license` with `--owner` goes back to one of rbuilder's headers.
#[test]
fn edit_license_file_gives_later_files_the_users_header() {
    let (tmp, dir) = initialized("op");
    let header = tmp.path().join("header.txt");
    std::fs::write(
        &header,
        "/*\nCopyright 2026 Acme.\n\nAll rights reserved.\n*/\n",
    )
    .expect("write");
    let header = header.to_str().expect("UTF-8 path");
    rbuilder(&dir, &["edit", "--license-file", header]).success();
    assert_eq!(
        read(&dir, "hack/boilerplate.txt"),
        "Copyright 2026 Acme.\n\nAll rights reserved.\n"
    );
    assert!(!read(&dir, "Cargo.toml").contains("license ="));
    assert!(read(&dir, "PROJECT").contains("license: custom"));
    rbuilder(
        &dir,
        &["create", "api", "--group", "web", "--kind", "Guestbook"],
    )
    .success();
    let expected = "// Copyright 2026 Acme.\n//\n// All rights reserved.\n\n";
    assert!(read(&dir, "src/controller/guestbook.rs").starts_with(expected));
    rbuilder(&dir, &["update"]).success();
    assert!(read(&dir, "runtime/src/lib.rs").starts_with(expected));
    let output = tmp.path().join("replayed");
    rbuilder(
        &dir,
        &[
            "alpha",
            "generate",
            "--output-dir",
            output.to_str().expect("UTF-8 path"),
        ],
    )
    .success();
    assert!(read(&output, "src/controller/guestbook.rs").starts_with(expected));
    rbuilder(&dir, &["edit", "--license", "mit", "--owner", "Jane Doe"]).success();
    assert!(read(&dir, "Cargo.toml").contains("license = \"MIT\""));
    assert!(read(&dir, "hack/boilerplate.txt").contains("Jane Doe"));
}

/// src/lib.rs keeps the header it was written with after `edit --license`; `edit
/// --namespaced` then sees it as rbuilder wrote it (it used to call it changed by hand), and
/// changes its scope under that header.
#[test]
fn edit_namespaced_after_a_new_license_keeps_the_header_of_src_lib_rs() {
    let (_tmp, dir) = initialized("op");
    rbuilder(&dir, &["edit", "--license", "mit", "--owner", "Jane Doe"]).success();
    rbuilder(&dir, &["edit", "--namespaced"])
        .success()
        .stdout(contains("update src/lib.rs"));
    let lib = read(&dir, "src/lib.rs");
    assert!(lib.contains("Apache License"), "{lib}");
    assert!(lib.contains("WatchScope::Namespace"), "{lib}");
    rbuilder(&dir, &["edit", "--namespaced=false"]).success();
    assert!(read(&dir, "src/lib.rs").contains("WatchScope::Cluster"));
}

#[test]
fn a_namespaced_operator_gets_namespaced_roles_for_its_users() {
    let (_tmp, dir) = project_dir("op");
    rbuilder(&dir, &["init", "--domain", "my.domain", "--namespaced"]).success();
    rbuilder(
        &dir,
        &["create", "api", "--group", "web", "--kind", "Guestbook"],
    )
    .success();
    for role in ["admin", "editor", "viewer"] {
        let text = read(&dir, &format!("config/rbac/guestbook_{role}_role.yaml"));
        assert!(
            text.contains("kind: Role\n") && text.contains("namespace: system"),
            "{text}"
        );
    }
}

#[test]
fn the_grafana_plugin_writes_dashboards_of_the_exported_metrics() {
    let (tmp, dir) = initialized("op");
    rbuilder(&dir, &["edit", "--plugins", "grafana/v1-alpha"])
        .success()
        .stdout(contains("create grafana/controller-runtime-metrics.json"));
    let dashboard: serde_json::Value =
        serde_json::from_str(&read(&dir, "grafana/controller-runtime-metrics.json")).unwrap();
    let exprs = dashboard["panels"].to_string();
    // Metrics the runtime exports (runtime/core/src/metrics.rs), under controller-runtime's names.
    for metric in [
        "controller_runtime_reconcile_total",
        "controller_runtime_reconcile_errors_total",
        "controller_runtime_reconcile_time_seconds_bucket",
        "controller_runtime_active_workers",
        "rest_client_requests_total",
        // The work queue's, as kubebuilder's dashboard reads them (runtime/core/src/queue_metrics.rs;
        // its envtest scrapes them from a running manager).
        "workqueue_depth",
        "workqueue_adds_total",
        "workqueue_queue_duration_seconds_bucket",
        "workqueue_work_duration_seconds_bucket",
        "workqueue_unfinished_work_seconds",
        "workqueue_longest_running_processor_seconds",
        "workqueue_retries_total",
    ] {
        assert!(exprs.contains(metric), "no {metric} in the dashboard");
    }
    assert!(
        read(&dir, "runtime/core/src/metrics.rs").contains("\"controller_runtime_active_workers\"")
    );
    let queue = read(&dir, "runtime/core/src/queue_metrics.rs");
    assert!(queue.contains("\"workqueue_depth\"") && queue.contains("\"workqueue_adds\""));
    assert!(read(&dir, "PROJECT").contains("grafana.rbuilder.io/v1-alpha: {}"));

    // The user's own metrics get a dashboard, which alpha generate reproduces.
    let config = "customMetrics:\n- metric: my_things_total\n  type: counter\n";
    fs::write(dir.join("grafana/custom-metrics/config.yaml"), config).unwrap();
    rbuilder(&dir, &["edit", "--plugins", "grafana/v1-alpha"])
        .success()
        .stdout(contains(
            "create grafana/custom-metrics/custom-metrics-dashboard.json",
        ));
    assert_eq!(read(&dir, "grafana/custom-metrics/config.yaml"), config);
    rbuilder(&dir, &["alpha", "generate", "--output-dir", "../fresh"]).success();
    // But for the record of what rbuilder wrote, whose history differs: it wrote the dashboards'
    // config.yaml once, before the user's edit, where the replay copies the user's.
    let without_record = |dir: &std::path::Path| {
        let mut files = snapshot(dir);
        files.remove(std::path::Path::new("PROJECT.sum"));
        files
    };
    assert_same_tree(
        &without_record(&dir),
        &without_record(&tmp.path().join("fresh")),
        "replay",
    );

    fs::write(
        dir.join("grafana/custom-metrics/config.yaml"),
        "customMetrics: [{metric: x}]\n",
    )
    .unwrap();
    assert_rejected(
        &dir,
        &["edit", "--plugins", "grafana/v1-alpha"],
        &["config.yaml is not valid", "`type`"],
    );
    assert_rejected(
        &dir,
        &["edit", "--plugins", "helm/v1-alpha"],
        &["unknown plugin 'helm/v1-alpha'"],
    );
}

/// values.yaml's top-level keys, those of kubebuilder v4.16's chart.
const HELM_VALUES_KEYS: &[&str] = &[
    "manager",
    "rbac",
    "serviceAccount",
    "crd",
    "metrics",
    "certManager",
    "webhook",
    "prometheus",
    "networkPolicy",
];

#[test]
fn the_helm_plugin_writes_the_charts_own_files_and_keeps_the_users() {
    let (tmp, dir) = initialized("op");
    rbuilder(
        &dir,
        &["create", "api", "--group", "web", "--kind", "Guestbook"],
    )
    .success();
    rbuilder(&dir, &["edit", "--plugins", "helm/v2-alpha"])
        .success()
        .stdout(contains("create dist/chart/values.yaml"))
        .stdout(contains("run `make helm` now"));
    let values: serde_json::Value =
        serde_saphyr::from_str(&read(&dir, "dist/chart/values.yaml")).unwrap();
    let keys: Vec<&str> = values
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut expected = HELM_VALUES_KEYS.to_vec();
    expected.sort();
    assert_eq!(keys, expected);
    // Read from config/manager/manager.yaml, as kubebuilder reads them from its rendering.
    assert_eq!(
        values["manager"]["args"],
        serde_json::json!(["--leader-elect"])
    );
    assert_eq!(values["manager"]["resources"]["limits"]["cpu"], "500m");
    assert_eq!(
        values["manager"]["podSecurityContext"]["runAsNonRoot"],
        true
    );
    assert_eq!(values["webhook"]["enabled"], false);
    assert_eq!(values["rbac"]["namespaced"], false);
    assert!(read(&dir, "dist/chart/Chart.yaml").contains("name: op\n"));
    assert!(read(&dir, "dist/chart/templates/_helpers.tpl").contains("define \"op.resourceName\""));
    let makefile = read(&dir, "Makefile");
    for target in [
        "helm:",
        "helm-lint:",
        "helm-deploy:",
        "helm-uninstall:",
        "helm-status:",
        "helm-history:",
        "helm-rollback:",
    ] {
        assert!(
            makefile.contains(&format!("\n{target} ")),
            "no {target} in the Makefile"
        );
    }
    assert!(read(&dir, ".gitignore").contains("!/dist/chart/"));
    assert!(read(&dir, "README.md").contains("### With Helm"));
    assert!(read(&dir, "PROJECT").contains("helm.rbuilder.io/v2-alpha: {}"));

    // The chart's files are the user's: later commands leave them, but for webhooks, which
    // values.yaml turns on where it says off as rbuilder wrote it.
    let edited = read(&dir, "dist/chart/values.yaml").replace("replicas: 1", "replicas: 3");
    fs::write(dir.join("dist/chart/values.yaml"), &edited).unwrap();
    let chart = read(&dir, "dist/chart/Chart.yaml").replace("version: 0.1.0", "version: 0.2.0");
    fs::write(dir.join("dist/chart/Chart.yaml"), &chart).unwrap();
    rbuilder(&dir, &["create", "api", "--group", "web", "--kind", "Site"])
        .success()
        .stdout(contains("follows config/ with `make helm`"));
    rbuilder(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "web",
            "--kind",
            "Site",
            "--defaulting",
        ],
    )
    .success()
    .stdout(contains("webhook.enabled and certManager.enabled true"));
    let values = read(&dir, "dist/chart/values.yaml");
    assert!(values.contains("replicas: 3"));
    assert_eq!(
        values,
        edited
            .replace("webhook:\n  enabled: false", "webhook:\n  enabled: true")
            .replace(
                "certManager:\n  enabled: false",
                "certManager:\n  enabled: true"
            )
    );
    rbuilder(&dir, &["alpha", "generate", "--output-dir", "../fresh"]).success();
    let fresh = tmp.path().join("fresh");
    assert_eq!(
        read(&fresh, "dist/chart/values.yaml"),
        values.replace("replicas: 3", "replicas: 1"),
        "a replay reads the same settings from config/"
    );

    // Once written, only --force writes them again, and never Chart.yaml.
    assert_rejected(
        &dir,
        &["edit", "--plugins", "helm/v2-alpha"],
        &["the Helm chart exists already", "--force"],
    );
    rbuilder(&dir, &["edit", "--plugins", "helm/v2-alpha", "--force"])
        .success()
        .stdout(contains("overwrite dist/chart/values.yaml"));
    assert!(read(&dir, "dist/chart/values.yaml").contains("replicas: 1"));
    assert_eq!(read(&dir, "dist/chart/Chart.yaml"), chart);
    assert_eq!(read(&dir, "Makefile").matches("\nhelm-deploy:").count(), 1);
}

#[test]
fn init_with_the_helm_plugin_is_init_then_the_plugin() {
    let (_a, made) = project_dir("op");
    rbuilder(
        &made,
        &[
            "init",
            "--domain",
            "my.domain",
            "--plugins",
            "helm/v2-alpha",
        ],
    )
    .success();
    let (_b, edited) = initialized("op");
    rbuilder(&edited, &["edit", "--plugins", "helm/v2-alpha"]).success();
    assert_same_tree(
        &snapshot(&made),
        &snapshot(&edited),
        "init --plugins helm/v2-alpha",
    );
}

#[test]
fn the_autoupdate_plugin_writes_the_weekly_update_workflow_once() {
    const WORKFLOW: &str = ".github/workflows/auto_update.yml";
    let (_tmp, dir) = initialized("op");
    rbuilder(&dir, &["edit", "--plugins", "autoupdate/v1-alpha"])
        .success()
        .stdout(contains("opens a pull request"));
    let workflow = read(&dir, WORKFLOW);
    // What the workflow runs, and that GitHub's expressions survived the templating.
    for expected in [
        "cargo install --locked rbuilder",
        "rbuilder update",
        "gh pr create",
        "GH_TOKEN: ${{ github.token }}",
        "cron: ",
    ] {
        assert!(workflow.contains(expected), "{expected}:\n{workflow}");
    }
    assert!(read(&dir, "PROJECT").contains("autoupdate.rbuilder.io/v1-alpha: {}"));

    // Again: nothing to do. The user's own version is kept unless --force.
    let before = snapshot(&dir);
    rbuilder(&dir, &["edit", "--plugins", "autoupdate/v1-alpha"]).success();
    assert_same_tree(&before, &snapshot(&dir), "a second edit --plugins");
    fs::write(dir.join(WORKFLOW), "name: mine\n").unwrap();
    assert_rejected(
        &dir,
        &["edit", "--plugins", "autoupdate.kubebuilder.io/v1-alpha"],
        &["auto_update.yml exists and differs", "--force"],
    );
    rbuilder(
        &dir,
        &["edit", "--plugins", "autoupdate/v1-alpha", "--force"],
    )
    .success();
    assert_eq!(read(&dir, WORKFLOW), workflow);

    // alpha generate replays it.
    let (_out, out) = project_dir("replayed");
    rbuilder(
        &dir,
        &[
            "alpha",
            "generate",
            "--output-dir",
            &out.display().to_string(),
        ],
    )
    .success();
    assert_eq!(read(&out, WORKFLOW), workflow);
}
