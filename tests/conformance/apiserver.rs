//! Whether the two projects' CRDs accept the same objects, asked of a real kube-apiserver: each
//! project's samples are created (a server-side dry run) under kubebuilder's CRDs, then under
//! rbuilder's. A sample that one set accepts and the other refuses is a difference (source
//! `kube-apiserver`), as a field is; a sample both refuse is none. The schemas themselves are
//! compared field by field in `config/default`.
//!
//! One control plane serves the whole comparison (`scripts/control-plane`: etcd,
//! kube-apiserver and kube-controller-manager from `scripts/envtest-assets`); CRDs are
//! cluster-wide, and sequences scaffold CRDs of the same names, so one sequence at a time has
//! its CRDs installed.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Value, json};

use crate::common;
use crate::normalize::Objects;
use crate::observe;

/// The source the verdicts are compared as.
pub const SOURCE: &str = "kube-apiserver";

/// The shared control plane, and the lock held while one sequence has its CRDs installed.
pub struct ControlPlane {
    plane: common::control_plane::ControlPlane,
    installed: Mutex<()>,
}

impl ControlPlane {
    /// Starts one in `dir`; the first comparison waits for it.
    pub fn start(dir: &Path) -> ControlPlane {
        let plane = common::control_plane::ControlPlane::start(dir);
        let installed = Mutex::new(());
        ControlPlane { plane, installed }
    }

    fn kubectl(&self, args: &[&str], stdin: Option<&str>) -> Result<String, String> {
        self.plane.kubectl(args, stdin)
    }

    fn checked(&self, args: &[&str], stdin: Option<&str>) {
        self.plane.checked(args, stdin);
    }

    /// The verdicts on every sample of both projects under kubebuilder's CRDs (`kb`, the
    /// project's folder) and under rbuilder's (`rb`): each sample as `<tool>'s <Kind> <name>
    /// <apiVersion>`, with `verdict` accepted or refused (with the API server's message where
    /// the other set accepts it).
    pub fn verdicts(&self, kb: &Path, rb: &Path) -> (Objects, Objects) {
        let samples: Vec<(String, Value)> = [("kubebuilder", kb), ("rbuilder", rb)]
            .into_iter()
            .flat_map(|(tool, dir)| {
                observe::samples(dir).into_iter().map(move |sample| {
                    let name = format!(
                        "{tool}'s {} {} {}",
                        sample["kind"].as_str().unwrap_or("?"),
                        sample["metadata"]["name"].as_str().unwrap_or("?"),
                        sample["apiVersion"].as_str().unwrap_or("?")
                    );
                    (name, sample)
                })
            })
            .collect();
        if samples.is_empty() {
            return (Objects::new(), Objects::new());
        }
        self.plane.ready();
        let _installed = self.installed.lock().unwrap_or_else(|e| e.into_inner());
        let under = |project: &Path| -> Vec<Result<(), String>> {
            let crds = crds(project);
            self.checked(&["create", "-f", "-"], Some(&crds));
            self.checked(
                &[
                    "wait",
                    "--for",
                    "condition=Established",
                    "--timeout",
                    "60s",
                    "-f",
                    "-",
                ],
                Some(&crds),
            );
            let verdicts = samples
                .iter()
                .map(|(_, sample)| {
                    let text = sample.to_string();
                    let args = ["create", "--dry-run=server", "-o", "name", "-f", "-"];
                    self.kubectl(&args, Some(&text)).map(|_| ())
                })
                .collect();
            self.checked(&["delete", "--wait", "-f", "-"], Some(&crds));
            verdicts
        };
        let (under_kb, under_rb) = (under(kb), under(rb));
        let mut out = (Objects::new(), Objects::new());
        for (((name, _), kb), rb) in samples.iter().zip(under_kb).zip(under_rb) {
            let verdict = |result: &Result<(), String>, other: &Result<(), String>| match result {
                Ok(()) => "accepted".to_owned(),
                // Both refuse: the sample is invalid for both, whatever each says.
                Err(_) if other.is_err() => "refused".to_owned(),
                Err(error) => format!("refused: {error}"),
            };
            out.0
                .insert(name.clone(), json!({ "verdict": verdict(&kb, &rb) }));
            out.1
                .insert(name.clone(), json!({ "verdict": verdict(&rb, &kb) }));
        }
        out
    }
}

/// The CRDs of the project in `dir` (`config/crd/bases`, as `make manifests` writes them), as
/// one YAML stream, without their `conversion`: no webhook serves it here, and an object of a
/// version that is not stored would be refused for that alone.
fn crds(dir: &Path) -> String {
    let folder = dir.join("config/crd/bases");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .map(|entries| entries.map(|e| e.expect("a folder entry").path()).collect())
        .unwrap_or_default();
    files.sort();
    let mut stream = String::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a CRD file");
        let documents: Vec<Value> = serde_saphyr::from_multiple(&text).expect("CRD YAML");
        for mut crd in documents.into_iter().filter(|d| !d.is_null()) {
            if let Some(spec) = crd.get_mut("spec").and_then(Value::as_object_mut) {
                spec.remove("conversion");
            }
            stream.push_str("---\n");
            stream.push_str(&crd.to_string());
            stream.push('\n');
        }
    }
    stream
}
