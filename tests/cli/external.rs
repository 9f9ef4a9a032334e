//! `create api --external-api-*`: types of another project's CRD.

use std::fs;

use crate::common::{initialized, rbuilder, repo, snapshot};
use crate::read;

/// `--external-api-path -` reads the CRD from stdin; `--force` regenerates the types (and
/// leaves everything else as it was); `--controller=false` writes only the types.
#[test]
fn external_types_come_from_a_file_or_stdin_and_force_regenerates_them() {
    let (_tmp, dir) = initialized("ext");
    let crd = std::fs::read_to_string(
        repo().join("testdata/crds/prometheus-operator/monitoring.coreos.com_servicemonitors.yaml"),
    )
    .unwrap();
    let args = [
        "create",
        "api",
        "--group",
        "monitoring.coreos.com",
        "--kind",
        "ServiceMonitor",
        "--resource=false",
        "--external-api-path",
        "-",
    ];
    assert_cmd::Command::cargo_bin("rbuilder")
        .unwrap()
        .current_dir(&dir)
        .args(args)
        .write_stdin(crd.clone())
        .assert()
        .success();
    let types = "src/api/external/monitoring/v1/service_monitor.rs";
    assert!(read(&dir, types).contains("pub struct ServiceMonitorSpec {"));
    assert!(read(&dir, "PROJECT").contains("external: true"));
    assert!(read(&dir, "config/rbac/role.yaml").contains("servicemonitors"));
    // No CRD of its own.
    let crds = dir.join("config/crd/bases");
    assert!(!crds.exists() || crds.read_dir().unwrap().next().is_none());

    // Again: refused without --force; with it, the same files.
    let before = snapshot(&dir);
    std::fs::write(dir.join(types), "// edited\n").unwrap();
    assert_cmd::Command::cargo_bin("rbuilder")
        .unwrap()
        .current_dir(&dir)
        .args(args)
        .write_stdin(crd.clone())
        .assert()
        .failure();
    assert_cmd::Command::cargo_bin("rbuilder")
        .unwrap()
        .current_dir(&dir)
        .args(args)
        .arg("--force")
        .write_stdin(crd)
        .assert()
        .success();
    assert_eq!(
        before,
        snapshot(&dir),
        "--force wrote the same project again"
    );

    // Only the types.
    let path = repo().join("testdata/crds/cert-manager/certificates.cert-manager.io.yaml");
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "cert-manager",
            "--external-api-domain",
            "io",
            "--kind",
            "Certificate",
            "--resource=false",
            "--controller=false",
            "--external-api-path",
            path.to_str().unwrap(),
        ],
    )
    .success();
    assert!(
        dir.join("src/api/external/cert_manager/v1/certificate.rs")
            .is_file()
    );
    assert!(!dir.join("src/controller/certificate.rs").exists());
    assert!(read(&dir, "PROJECT").contains("domain: io\n  external: true\n  group: cert-manager"));

    // The types' header tells how to regenerate them alone: the controller stays as edited.
    let controller = "src/controller/service_monitor.rs";
    fs::write(dir.join(controller), "// my logic\n").unwrap();
    let generated = read(&dir, types);
    fs::write(dir.join(types), "// edited\n").unwrap();
    let path =
        repo().join("testdata/crds/prometheus-operator/monitoring.coreos.com_servicemonitors.yaml");
    let header_command = format!(
        "create api --group monitoring.coreos.com --version v1 --kind ServiceMonitor \
         --resource=false --controller=false --external-api-path {} --force",
        path.display()
    );
    assert!(generated.contains(&format!(
        "// rbuilder {}\n",
        header_command.replace(&path.display().to_string(), "-")
    )));
    crate::common::run(&dir, &header_command).success();
    assert_eq!(read(&dir, controller), "// my logic\n");
    assert_eq!(
        read(&dir, types).replace(&path.display().to_string(), "-"),
        generated.replace(&path.display().to_string(), "-")
    );
}

/// `create webhook --external-api-path` imports another project's kind (its types, no
/// controller) with its webhooks, as kubebuilder's does; the configuration targets the CRD's
/// group, version and plural, and spares the manager's namespace as a built-in type's does;
/// `alpha generate` replays it; `--dry-run` writes nothing.
#[test]
fn webhooks_for_an_external_kind_import_its_types() {
    let (tmp, dir) = initialized("ext");
    let crd = repo().join("testdata/crds/cert-manager/issuers.cert-manager.io.yaml");
    let crd = crd.to_str().unwrap();
    let args = [
        "create",
        "webhook",
        "--group",
        "cert-manager",
        "--external-api-domain",
        "io",
        "--kind",
        "Issuer",
        "--defaulting",
        "--programmatic-validation",
        "--external-api-path",
        crd,
    ];
    let before = snapshot(&dir);
    let mut dry_run = args.to_vec();
    dry_run.push("--dry-run");
    rbuilder(&dir, &dry_run).success();
    assert_eq!(before, snapshot(&dir), "--dry-run wrote nothing");

    rbuilder(&dir, &args).success();
    assert!(
        read(&dir, "src/api/external/cert_manager/v1/issuer.rs")
            .contains("pub struct IssuerSpec {")
    );
    let webhook = read(&dir, "src/webhook/v1/issuer.rs");
    assert!(
        webhook.contains("use crate::api::external::cert_manager::v1::Issuer;"),
        "{webhook}"
    );
    assert!(!dir.join("src/controller/issuer.rs").exists());
    let test = read(&dir, "tests/integration/issuer_v1_webhooks.rs");
    assert!(test.contains(&format!("include_str!(\"{crd}\")")), "{test}");
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains(&format!(
            "- domain: io\n  external: true\n  group: cert-manager\n  kind: Issuer\n  path: {crd}\n  \
             plural: issuers\n  version: v1\n  webhooks:\n    defaulting: true\n    \
             validation: true\n    webhookVersion: v1\n"
        )),
        "{project}"
    );
    let manifests = read(&dir, "config/webhook/manifests.yaml");
    for expected in [
        "path: /mutate-cert-manager-io-v1-issuer",
        "path: /validate-cert-manager-io-v1-issuer",
        "name: missuer-v1.kb.io",
        "- cert-manager.io\n",
        "- issuers\n",
        "operator: NotIn",
    ] {
        assert!(manifests.contains(expected), "{expected} in {manifests}");
    }

    // Again with --force, the CRD read from the path PROJECT records.
    let force = [
        "create",
        "webhook",
        "--group",
        "cert-manager.io",
        "--kind",
        "Issuer",
        "--defaulting",
        "--force",
    ];
    let before = snapshot(&dir);
    rbuilder(&dir, &force).success();
    assert_eq!(before, snapshot(&dir), "--force wrote the same files");

    let again = tmp.path().join("again");
    let generate = [
        "alpha",
        "generate",
        "--input-dir",
        dir.to_str().unwrap(),
        "--output-dir",
        again.to_str().unwrap(),
    ];
    rbuilder(tmp.path(), &generate).success();
    crate::common::assert_same_tree(&snapshot(&dir), &snapshot(&again), "the replay");
}
