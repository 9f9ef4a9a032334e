//! The steps a walk does its own way (`sh stand-in=NAME` blocks, `<!-- walk: stand-in=NAME -->`
//! directives): those that need what this machine lacks, and what the reader has before a page
//! starts. Everything else is run as the document shows it.

use std::path::Path;

use crate::common::repo;
use crate::session::Session;

/// Does the stand-in `name` for a block; an unknown name fails the walk.
pub fn run(name: &str, session: &mut Session) {
    match name {
        // `cargo install --path .` of rbuilder: the walk runs the rbuilder these tests built,
        // which is first on its PATH.
        "install-rbuilder" => {
            session.shell("command -v rbuilder >/dev/null");
        }
        // `kind create cluster`: the walk's cluster is the control plane of the end-to-end
        // tests (scripts/control-plane), which KUBECONFIG names, with two Nodes that KWOK
        // simulates: the tutorial's end-to-end tests wait for the Deployment's Pods to be Ready.
        "cluster" => {
            session.start_cluster(2);
            session.shell("kubectl get --raw /readyz >/dev/null");
        }
        // docs/migrating-from-kubebuilder.md: the reader's kubebuilder project, at
        // `../my-go-operator`: a copy of kubebuilder's own test project, its testdata/project-v4
        // as kubebuilder's commands made it (testdata/kubebuilder-projects/project-v4, whose
        // README says which: PROJECT, the CRDs controller-gen wrote, samples, boilerplate, byte
        // for byte; the migration reads nothing else). Not a project made here by
        // scripts/kubebuilder: its CRDs need `make manifests` (controller-gen, built with Go
        // modules from the Go module proxy: minutes) for files of the same kind. project-v4
        // rather than the smaller `shop`: it has what the page is about after the dry run, a
        // controller and webhooks for cert-manager's kinds (`external: true`), and most of
        // what kubebuilder scaffolds (two controllers of one kind, a conversion, custom
        // webhook paths, a cluster-scoped kind, webhooks for built-in types); and no golden
        // tree builds it, so the walk is its only build.
        "kubebuilder-project" => {
            let project = session.reader_path("../my-go-operator");
            copy_tree(
                &repo().join("testdata/kubebuilder-projects/project-v4"),
                &project,
            );
        }
        // docs/migrating-from-kubebuilder.md: a cluster where cert-manager is installed, whose
        // CRDs the reader's `kubectl get crd` reads. The control plane, without Nodes (nothing
        // runs on it), and cert-manager's own CRD files (testdata/crds/cert-manager, v1.21.1,
        // unchanged) installed: not its Deployments, whose Pods would not run here, and of
        // which the page reads nothing. So rbuilder reads the CRDs as an API server serves
        // them, with their status and metadata, not the files.
        "cluster-with-cert-manager" => {
            session.start_cluster(0);
            let crds = repo().join("testdata/crds/cert-manager");
            let files = [
                "certificates.cert-manager.io.yaml",
                "issuers.cert-manager.io.yaml",
            ]
            .map(|file| format!("-f {}", quoted(&crds.join(file))))
            .join(" ");
            // Server-side: the Issuer's CRD is too large for client-side apply's annotation.
            session.shell(&format!("kubectl apply --server-side {files} >/dev/null"));
            session.shell(
                "kubectl wait --for condition=Established crd/certificates.cert-manager.io \
                 crd/issuers.cert-manager.io >/dev/null",
            );
        }
        // Building an image and loading or pushing it: there is no container engine (KWOK's
        // Nodes report the manager's Pod Running without running it).
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

/// Copies the files under `from` to `to`, a new folder.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir(to).unwrap_or_else(|e| panic!("cannot create {}: {e}", to.display()));
    for entry in std::fs::read_dir(from).expect("a folder to copy").flatten() {
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        if source.is_dir() {
            copy_tree(&source, &target);
        } else {
            std::fs::copy(&source, &target)
                .unwrap_or_else(|e| panic!("cannot copy {}: {e}", source.display()));
        }
    }
}

fn quoted(path: &Path) -> String {
    format!("'{}'", path.display())
}
