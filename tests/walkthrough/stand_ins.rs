//! The steps a walk does its own way (`sh stand-in=NAME` blocks): those that need what this
//! machine lacks. Everything else is run as the document shows it.

use std::path::Path;

use crate::session::Session;

/// Does the stand-in `name` for a block; an unknown name fails the walk.
pub fn run(name: &str, session: &mut Session) {
    match name {
        // `cargo install --path .` of rbuilder: the walk runs the rbuilder these tests built,
        // which is first on its PATH.
        "install-rbuilder" => {
            session.shell("command -v rbuilder >/dev/null");
        }
        // `kind create cluster`: the walk's cluster is the control plane it started
        // (scripts/control-plane), which KUBECONFIG names.
        "cluster" => {
            session.shell("kubectl get --raw /readyz >/dev/null");
        }
        // Building an image and loading or pushing it: there is no container engine, and no
        // Pod runs (the manager deployed stays Pending).
        "image" => {}
        // cert-manager's release manifest comes from GitHub, which this machine cannot reach,
        // and its Pods would not run: its kinds alone, so that the API server stores the
        // Certificate and Issuer `make deploy` applies (as scripts/e2e.sh does).
        "cert-manager" => install_cert_manager_kinds(session),
        other => panic!("unknown stand-in '{other}': see tests/walkthrough/stand_ins.rs"),
    }
}

fn install_cert_manager_kinds(session: &mut Session) {
    for kind in ["Certificate", "Issuer"] {
        let plural = format!("{}s", kind.to_lowercase());
        let crd = serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.cert-manager.io")},
            "spec": {
                "group": "cert-manager.io",
                "scope": "Namespaced",
                "names": {
                    "kind": kind,
                    "plural": plural,
                    "singular": kind.to_lowercase(),
                    "listKind": format!("{kind}List"),
                },
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": true,
                    }},
                }],
            },
        });
        let file = session.scratch(&format!("{plural}.cert-manager.io.json"));
        std::fs::write(&file, crd.to_string()).expect("write a CRD");
        session.shell(&format!("kubectl apply -f {}", quoted(&file)));
    }
    session.shell(
        "kubectl wait --for condition=Established crd/certificates.cert-manager.io \
         crd/issuers.cert-manager.io",
    );
}

fn quoted(path: &Path) -> String {
    format!("'{}'", path.display())
}
