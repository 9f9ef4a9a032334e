//! A control plane run by `scripts/control-plane` (etcd, kube-apiserver and
//! kube-controller-manager from `scripts/envtest-assets`), with kubectl to talk to it.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::repo;

/// A control plane in a folder of its own, stopped when dropped.
pub struct ControlPlane {
    child: Child,
    dir: PathBuf,
    kubectl: PathBuf,
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
        }
    }

    /// Waits until the API server is ready (`scripts/control-plane` makes `ready`).
    pub fn ready(&self) {
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
    pub fn kubectl(&self, args: &[&str], stdin: Option<&str>) -> Result<String, String> {
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

    /// `kubectl args` that must succeed: its stdout.
    pub fn checked(&self, args: &[&str], stdin: Option<&str>) -> String {
        self.kubectl(args, stdin)
            .unwrap_or_else(|error| panic!("kubectl {} failed: {error}", args.join(" ")))
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
