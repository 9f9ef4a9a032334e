//! The translation's rules, case by case.

use super::{ExternalCrds, translate};
use crate::kubebuilder::CrdFile;
use crate::kubebuilder::format::KbProject;
use crate::model::Version;
use crate::project::Project;

/// A kubebuilder PROJECT of `resources` (YAML list items), `extra` added at the top.
fn translated(extra: &str, resources: &str) -> (Project, Vec<String>) {
    let (project, left_out, _) = translated_with(extra, resources, &[]);
    (project, left_out)
}

/// [`translated`], with the CRD files `crds` given, and the files it copies.
fn translated_with(
    extra: &str,
    resources: &str,
    crds: &[CrdFile],
) -> (Project, Vec<String>, Vec<String>) {
    let text = format!(
        "domain: example.com\nlayout:\n- go.kubebuilder.io/v4\nprojectName: op\n{extra}\
         resources:\n{resources}version: \"3\"\n"
    );
    let kb: KbProject = serde_saphyr::from_str(&text).expect("valid YAML");
    let crds = ExternalCrds::read(crds).expect("CRDs");
    let (project, left_out, files) = translate(kb, "op", crds, None).expect("translated");
    let left_out = left_out.into_iter().map(|l| l.what).collect();
    (
        project,
        left_out,
        files.into_iter().map(|(path, _)| path).collect(),
    )
}

fn custom(kind: &str, version: &str, more: &str) -> String {
    format!(
        "- api:\n    crdVersion: v1\n    namespaced: true\n  domain: example.com\n  group: \
         web\n  kind: {kind}\n  version: {version}\n{more}"
    )
}

#[test]
fn options_rbuilder_refuses_leave_a_plain_controller() {
    let plugin = "plugins:\n  deploy-image.go.kubebuilder.io/v1-alpha:\n    resources:\n    \
                  - group: web\n      kind: Cache\n      version: v1\n      options:\n        \
                  image: memcached:1.6\n        runAsUser: \"0\"\n";
    let (project, left_out) = translated(plugin, &custom("Cache", "v1", "  controller: true\n"));
    assert_eq!(
        left_out,
        ["web/v1 Cache: its deploy-image controller (a plain one is scaffolded)"]
    );
    assert!(project.plugins.deploy_image.is_none());
    assert!(project.resources[0].controller);
}

#[test]
fn a_kind_keeps_its_second_controllers_and_its_own_takes_the_kinds_name() {
    let resources = [
        custom(
            "Site",
            "v1",
            "  controllers:\n  - name: site-main\n  - name: site-backup\n  - name: sitebackup\n  \
             - name: Bad_Name\n  - name: cache\n",
        ),
        custom("Site", "v2", "  controller: true\n"),
        custom("Cache", "v1", "  controller: true\n"),
        custom(
            "Guestbook",
            "v1",
            "  controllers:\n  - name: guestbook\n  - name: site-backup\n",
        ),
    ]
    .concat();
    let (project, left_out) = translated("", &resources);
    assert_eq!(
        left_out,
        [
            "web/v1 Site: the name of its controller, site-main",
            "web/v1 Site: its second controller, sitebackup",
            "web/v1 Site: its second controller, Bad_Name",
            "web/v2 Site: its controller",
            "web/v1 Site: its second controller, cache",
            "web/v1 Guestbook: its second controller, site-backup",
        ]
    );
    let controllers: Vec<bool> = project.resources.iter().map(|e| e.controller).collect();
    assert_eq!(controllers, [true, false, true, true]);
    let names: Vec<Vec<String>> = project
        .resources
        .iter()
        .map(|e| e.controllers.iter().map(|c| c.name.to_string()).collect())
        .collect();
    assert_eq!(
        names,
        [
            vec!["site", "site-backup"],
            vec![],
            vec![],
            vec!["guestbook"],
        ]
    );
}

#[test]
fn a_conversion_keeps_the_spokes_the_project_has() {
    let hub = "  webhooks:\n    conversion: true\n    spoke:\n    - v2\n    - v3\n    \
               webhookVersion: v1\n";
    let resources = [custom("Site", "v1", hub), custom("Site", "v2", "")].concat();
    let (project, left_out) = translated("", &resources);
    assert_eq!(left_out, ["web/v1 Site: its conversion to v3"]);
    let webhooks = project.resources[0].webhooks.clone().expect("webhooks");
    assert!(webhooks.conversion);
    assert_eq!(webhooks.spoke, [Version::parse("v2").unwrap()]);

    let (project, left_out) = translated("", &custom("Site", "v1", hub));
    assert_eq!(
        left_out,
        [
            "web/v1 Site: its conversion to v2",
            "web/v1 Site: its conversion to v3",
            "web/v1 Site: its conversion webhook",
        ]
    );
    assert!(project.resources[0].webhooks.is_none());
}

#[test]
fn a_namespaced_operator_leaves_cluster_scoped_kinds_and_unknown_types_out() {
    let cluster = "- api:\n    crdVersion: v1\n  controller: true\n  domain: example.com\n  \
                   group: web\n  kind: Zone\n  version: v1\n";
    let unknown = "- core: true\n  group: batch\n  kind: Widget\n  version: v1\n  \
                   controller: true\n";
    let node = "- core: true\n  group: core\n  kind: Node\n  version: v1\n  webhooks:\n    \
                defaulting: true\n    webhookVersion: v1\n";
    let (project, left_out) = translated(
        "namespaced: true\nsurprise: 1\n",
        &[cluster, unknown, node].concat(),
    );
    assert_eq!(
        left_out,
        [
            "the project: field surprise (1)",
            "web/v1 Zone",
            "batch/v1 Widget",
            "core/v1 Node: its webhooks",
        ]
    );
    assert!(project.resources.is_empty(), "{:?}", project.resources);
}

/// The CRD file of cert-manager's Issuer, as `alpha generate --external-api-path` reads it.
fn issuer_crd() -> CrdFile {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/crds/cert-manager/issuers.cert-manager.io.yaml"
    );
    CrdFile {
        path: "crds/issuers.cert-manager.io.yaml".into(),
        text: std::fs::read_to_string(path).expect("the Issuer CRD"),
    }
}

const ISSUER: &str = "- domain: io\n  external: true\n  group: cert-manager\n  kind: Issuer\n  \
                      path: github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1\n  \
                      version: v1\n  webhooks:\n    defaulting: true\n    conversion: true\n    \
                      spoke:\n    - v2\n    webhookVersion: v1\n";

#[test]
fn external_kinds_are_carried_over_from_a_given_crd() {
    // Without the CRD: left out, with what to run.
    let (project, left_out) = translated("", ISSUER);
    assert!(project.resources.is_empty());
    assert_eq!(left_out, ["cert-manager.io/v1 Issuer: its webhooks"]);

    // With it: the types' entry, its defaulting webhook, the CRD copied; the conversion of
    // another project's CRD is not this project's.
    let (project, left_out, files) = translated_with("", ISSUER, &[issuer_crd()]);
    assert_eq!(files, ["config/crd/external/issuers.cert-manager.io.yaml"]);
    assert_eq!(
        left_out,
        ["cert-manager.io/v1 Issuer: its conversion webhook"]
    );
    let entry = &project.resources[0];
    assert!(entry.external && !entry.controller);
    assert_eq!(entry.api_group(), "cert-manager.io");
    assert_eq!(entry.path.as_deref(), Some(files[0].as_str()));
    let webhooks = entry.webhooks.as_ref().expect("webhooks");
    assert!(webhooks.defaulting && !webhooks.conversion);

    // Scoped to its namespace, the operator would refuse its own certificate's Issuer.
    let (project, left_out, _) = translated_with("namespaced: true\n", ISSUER, &[issuer_crd()]);
    assert!(project.resources.is_empty(), "{:?}", project.resources);
    assert!(
        left_out.contains(&"cert-manager.io/v1 Issuer: its webhooks".to_owned()),
        "{left_out:?}"
    );
}
