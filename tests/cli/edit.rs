//! `rbuilder edit` and its plugins.

use std::fs;

use crate::common::{
    assert_rejected, assert_same_tree, initialized, project_dir, rbuilder, snapshot,
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
    // Metrics the runtime exports (runtime/src/metrics.rs), under controller-runtime's names.
    for metric in [
        "controller_runtime_reconcile_total",
        "controller_runtime_reconcile_errors_total",
        "controller_runtime_reconcile_time_seconds_bucket",
        "controller_runtime_active_workers",
        "rest_client_requests_total",
    ] {
        assert!(exprs.contains(metric), "no {metric} in the dashboard");
    }
    assert!(read(&dir, "runtime/src/metrics.rs").contains("\"controller_runtime_active_workers\""));
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
    assert_same_tree(
        &snapshot(&dir),
        &snapshot(&tmp.path().join("fresh")),
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
