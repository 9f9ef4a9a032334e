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
