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

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::repo;
use crate::normalize::Objects;
use crate::observe;

/// The source the verdicts are compared as.
pub const SOURCE: &str = "kube-apiserver";

/// A control plane run by `scripts/control-plane`, stopped when dropped.
pub struct ControlPlane {
    child: Child,
    dir: PathBuf,
    kubectl: PathBuf,
    /// Held while one sequence has its CRDs installed.
    installed: Mutex<()>,
}

impl ControlPlane {
    /// Starts one in `dir`; [`ControlPlane::ready`] waits for it.
    pub fn start(dir: &Path) -> ControlPlane {
        let assets = Command::new(repo().join("scripts/envtest-assets"))
            .output()
            .expect("run scripts/envtest-assets");
        assert!(
            assets.status.success(),
            "scripts/envtest-assets failed:\n{}",
            String::from_utf8_lossy(&assets.stderr)
        );
        let assets = PathBuf::from(String::from_utf8_lossy(&assets.stdout).trim());
        let kubectl = assets.join("kubectl");
        let kubectl = if kubectl.is_file() {
            kubectl
        } else {
            PathBuf::from("kubectl")
        };
        let child = Command::new(repo().join("scripts/control-plane"))
            .arg(dir)
            .env("KUBEBUILDER_ASSETS", &assets)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run scripts/control-plane");
        ControlPlane {
            child,
            dir: dir.to_owned(),
            kubectl,
            installed: Mutex::new(()),
        }
    }

    /// Waits until the API server is ready (`scripts/control-plane` makes `ready`).
    fn ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(180);
        while !self.dir.join("ready").exists() {
            assert!(
                Instant::now() < deadline,
                "the control plane did not get ready in 3 minutes: see {}/*.log",
                self.dir.display()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// `kubectl args`, with `stdin`: its stdout, or its stderr as the error.
    fn kubectl(&self, args: &[&str], stdin: Option<&str>) -> Result<String, String> {
        let mut child = Command::new(&self.kubectl)
            .args(args)
            .env("KUBECONFIG", self.dir.join("kubeconfig"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run kubectl");
        if let Some(text) = stdin {
            let mut pipe = child.stdin.take().expect("kubectl's stdin");
            pipe.write_all(text.as_bytes()).expect("write to kubectl");
        }
        drop(child.stdin.take());
        let out = child.wait_with_output().expect("kubectl's output");
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
        }
    }

    /// `kubectl args` that must succeed.
    fn checked(&self, args: &[&str], stdin: Option<&str>) {
        if let Err(error) = self.kubectl(args, stdin) {
            panic!("kubectl {} failed: {error}", args.join(" "));
        }
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
        self.ready();
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

impl Drop for ControlPlane {
    fn drop(&mut self) {
        // SIGTERM: the script stops the three in order (a SIGKILL would leave them running).
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
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
