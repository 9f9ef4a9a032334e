//! The reader's machine, as a walk sees it: a folder to work in, a shell whose `cd` carries
//! over from one block to the next, a cluster once a stand-in makes one (the control plane of
//! the end-to-end tests), and at most one command left running in another terminal.

use std::fs::File;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{as_a_users_build, repo, share_runtime_build};

/// How long one block's commands may take: a first build of a project, then its tests.
const BLOCK_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// How long the control plane may take to start.
const CONTROL_PLANE_TIMEOUT: Duration = Duration::from_secs(120);

/// What a block's commands did.
pub struct Ran {
    pub success: bool,
    /// Their stdout and stderr, in the order they were written.
    pub output: String,
}

/// A process group started in the background, stopped (SIGTERM, then SIGKILL) when dropped.
struct Group {
    child: Child,
    what: String,
}

impl Group {
    fn spawn(mut command: Command, what: &str) -> Self {
        command.process_group(0);
        let child = command
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {what}: {error}"));
        Self {
            child,
            what: what.to_owned(),
        }
    }

    fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends `signal` to the whole group, then waits up to `grace` for it to end.
    fn stop(&mut self, signal: &str, grace: Duration) -> bool {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill")
            .args([&format!("-{signal}"), "--", &group])
            .stderr(Stdio::null())
            .status();
        let start = Instant::now();
        while start.elapsed() < grace {
            if !self.is_running() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.is_running() && !self.stop("TERM", Duration::from_secs(15)) {
            eprintln!("walk: {} did not stop on SIGTERM: killed", self.what);
            self.stop("KILL", Duration::from_secs(5));
        }
    }
}

/// A command left running, and where its output goes.
pub struct Background {
    group: Group,
    pub log: PathBuf,
    /// Its line in the document, for messages.
    pub line: usize,
}

impl Background {
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn is_running(&mut self) -> bool {
        self.group.is_running()
    }
}

pub struct Session {
    /// The folder the reader starts in (shown as `~` in outputs).
    pub root: PathBuf,
    /// The shell's current folder.
    pub cwd: PathBuf,
    /// The walk's own files: scripts, logs, the control plane's folder.
    scratch: PathBuf,
    path: String,
    kubeconfig: PathBuf,
    assets: String,
    target_dir: PathBuf,
    background: Option<Background>,
    // Last: dropped after the background command, which may be using the cluster.
    control_plane: Option<Group>,
    _tmp: tempfile::TempDir,
    blocks: usize,
}

impl Session {
    /// A new folder to work in, without a cluster yet (`start_cluster`). `assets` is the
    /// folder of kube-apiserver, etcd, kube-controller-manager, kube-scheduler and kubectl;
    /// `rbuilder` is the binary the reader has installed; projects build into `target_dir`.
    pub fn start(assets: &str, rbuilder: &Path, target_dir: &Path) -> Self {
        let tmp = tempfile::tempdir().expect("a temporary folder");
        let root = tmp.path().join("home");
        let scratch = tmp.path().join("walk");
        for dir in [&root, &scratch] {
            std::fs::create_dir(dir).expect("create a folder");
        }
        // kubectl of the API server's version first, then the reader's rbuilder.
        let rbuilder_dir = rbuilder.parent().expect("rbuilder's folder");
        let path = format!(
            "{assets}:{}:{}",
            rbuilder_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Self {
            cwd: root.clone(),
            kubeconfig: scratch.join("control-plane/kubeconfig"),
            root,
            scratch,
            path,
            assets: assets.to_owned(),
            target_dir: target_dir.to_owned(),
            background: None,
            control_plane: None,
            _tmp: tmp,
            blocks: 0,
        }
    }

    /// Starts the reader's cluster, which the kubeconfig of every later block names: the
    /// control plane (scripts/control-plane), with `nodes` Nodes that KWOK simulates (none:
    /// no Pod is scheduled, and kube-scheduler and KWOK cost nothing).
    pub fn start_cluster(&mut self, nodes: u32) {
        assert!(self.control_plane.is_none(), "a second cluster");
        let dir = self.scratch("control-plane");
        let log = self.scratch("control-plane.log");
        let mut command = Command::new(repo().join("scripts/control-plane"));
        command
            .arg(&dir)
            .env("KUBEBUILDER_ASSETS", &self.assets)
            .env("CONTROL_PLANE_NODES", nodes.to_string())
            .stdout(Stdio::null())
            .stderr(log_file(&log));
        let mut group = Group::spawn(command, "the control plane");
        let start = Instant::now();
        while !dir.join("ready").exists() {
            assert!(
                group.is_running() && start.elapsed() < CONTROL_PLANE_TIMEOUT,
                "the control plane did not start: {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        self.control_plane = Some(group);
    }

    /// A path as the reader writes it in the folder they start in (`../my-go-operator`).
    pub fn reader_path(&self, path: &str) -> PathBuf {
        self.root.join(path)
    }

    /// A path for a file of the walk's own.
    pub fn scratch(&self, name: &str) -> PathBuf {
        self.scratch.join(name)
    }

    /// bash running `script` in the current folder, in the reader's environment: the
    /// cluster's kubeconfig, tools on PATH, and none of what the tests' own `make` and
    /// `cargo` set (a reader's shell has no MAKEFLAGS, and no KUBEBUILDER_ASSETS unless set
    /// by hand). Builds share the other generated-project builds' target folder, one-shot
    /// (no incremental data, no debug info) as theirs are.
    fn bash(&mut self, script: &str) -> (Command, PathBuf) {
        self.blocks += 1;
        let file = self.scratch(&format!("block-{}.sh", self.blocks));
        let cwd_file = self.scratch("cwd");
        let body = format!(
            "set -eo pipefail\n{script}\npwd > '{}'\n",
            cwd_file.display()
        );
        std::fs::write(&file, body).expect("write a script");
        let mut command = Command::new("bash");
        command
            .arg(&file)
            .current_dir(&self.cwd)
            .stdin(Stdio::null())
            .env("PATH", &self.path)
            .env("KUBECONFIG", &self.kubeconfig)
            // kubectl's discovery cache of its own, so that what kubectl knows of the API
            // server comes from this walk alone.
            .env("KUBECACHEDIR", self.scratch.join("kube-cache"))
            .env("CARGO_TERM_COLOR", "never");
        as_a_users_build(&mut command).env("CARGO_TARGET_DIR", &self.target_dir);
        for variable in ["KUBEBUILDER_ASSETS", "MAKEFLAGS", "MAKELEVEL", "MFLAGS"] {
            command.env_remove(variable);
        }
        (command, cwd_file)
    }

    /// Runs `script` (the commands of a block) to its end, or until the timeout.
    pub fn run(&mut self, script: &str) -> Ran {
        self.prepare_projects();
        let (mut command, cwd_file) = self.bash(script);
        let log = self.scratch(&format!("block-{}.log", self.blocks));
        let out = log_file(&log);
        command
            .stdout(out.try_clone().expect("a log file"))
            .stderr(out);
        let mut group = Group::spawn(command, "a block's commands");
        let start = Instant::now();
        let success = loop {
            match group.child.try_wait() {
                Ok(Some(status)) => break status.success(),
                Ok(None) if start.elapsed() > BLOCK_TIMEOUT => {
                    panic!(
                        "still running after {BLOCK_TIMEOUT:?}:\n{script}\n{}",
                        std::fs::read_to_string(&log).unwrap_or_default()
                    )
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(100)),
                Err(error) => panic!("cannot wait for bash: {error}"),
            }
        };
        if success && let Ok(cwd) = std::fs::read_to_string(&cwd_file) {
            self.cwd = PathBuf::from(cwd.trim_end());
        }
        let output = std::fs::read_to_string(&log).unwrap_or_default();
        Ran { success, output }
    }

    /// Runs `script`, which must succeed.
    pub fn shell(&mut self, script: &str) -> String {
        let ran = self.run(script);
        assert!(ran.success, "`{script}` failed:\n{}", ran.output);
        ran.output
    }

    /// Starts `script` in the background, as in a terminal of its own.
    pub fn start_background(&mut self, script: &str, line: usize) {
        assert!(
            self.background.is_none(),
            "line {line}: already one in the background"
        );
        self.prepare_projects();
        let (mut command, _) = self.bash(script);
        let log = self.scratch(&format!("background-{}.log", self.blocks));
        let out = log_file(&log);
        command
            .stdout(out.try_clone().expect("a log file"))
            .stderr(out);
        let group = Group::spawn(command, &format!("the background command of line {line}"));
        self.background = Some(Background { group, log, line });
    }

    pub fn background(&mut self) -> Option<&mut Background> {
        self.background.as_mut()
    }

    /// Stops the background command as Ctrl-C does (SIGINT to its process group).
    pub fn stop_background(&mut self) {
        if let Some(mut background) = self.background.take() {
            assert!(
                background.is_running(),
                "the background command of line {} had stopped already:\n{}",
                background.line,
                background.output()
            );
            background.group.stop("INT", Duration::from_secs(30));
        }
    }

    /// Prepares, before each block, the projects the block may `cd` into and build: the
    /// current folder, and those in and beside the folder the reader started in
    /// (`../my-rust-operator`).
    fn prepare_projects(&self) {
        let mut folders = vec![self.cwd.clone()];
        for dir in [Some(self.root.as_path()), self.root.parent()]
            .into_iter()
            .flatten()
        {
            if let Ok(entries) = std::fs::read_dir(dir) {
                folders.extend(entries.flatten().map(|entry| entry.path()));
            }
        }
        for folder in folders {
            self.prepare_project(&folder);
        }
    }

    /// What the reader's project has at hand that this machine cannot download, put where
    /// the project looks for it: the envtest binaries `make setup-envtest` would download from
    /// GitHub into bin/k8s/. (Its Cargo.lock is rbuilder's, as a reader's is: the one the other
    /// generated projects build with, so that their compiled crates are reused.) And the runtime's files get the times of the
    /// workspace's files they were written from, as the golden trees' do (tests/generated.rs):
    /// the runtime compiled for those is then reused, not compiled again (rbuilder writes it
    /// byte for byte, but for its header; the project's own code is compiled as a reader's).
    fn prepare_project(&self, project: &Path) {
        if !project.join("Cargo.toml").is_file() {
            return;
        }
        if project.join("runtime/Cargo.toml").is_file() {
            share_runtime_build(project);
        }
        let makefile = std::fs::read_to_string(project.join("Makefile")).unwrap_or_default();
        let version = makefile.lines().find_map(|line| {
            let value = line.strip_prefix("ENVTEST_K8S_VERSION ?= ")?;
            Some(value.trim().to_owned())
        });
        if let Some(version) = version {
            let (os, arch) = (std::env::consts::OS, go_arch());
            let dir = project.join(format!("bin/k8s/{version}-{os}-{arch}"));
            if !dir.exists() {
                std::fs::create_dir_all(&dir).expect("create bin/k8s");
                for binary in ["etcd", "kube-apiserver", "kubectl"] {
                    let from = Path::new(&self.assets).join(binary);
                    std::os::unix::fs::symlink(from, dir.join(binary)).expect("link a binary");
                }
            }
        }
    }
}

/// The architecture as Go names it, as the generated Makefile's setup-envtest does.
fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        arch => arch,
    }
}

fn log_file(path: &Path) -> File {
    File::create(path).unwrap_or_else(|error| panic!("cannot create {}: {error}", path.display()))
}
