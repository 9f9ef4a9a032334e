//! A process of the control plane: started with its output in a log file, killed when dropped.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};

use anyhow::Context as _;

/// How much of a log a failure shows.
const LOG_TAIL_BYTES: u64 = 4096;

/// The Go runtime's settings for etcd and kube-apiserver of a test's own control plane, each
/// unless the environment sets it: one thread running Go code at a time, and a garbage
/// collection when the heap has grown fourfold instead of twofold. Such a control plane serves
/// that one test, so its start is most of what the test costs. (A control plane the tests
/// share serves them side by side, with Go's defaults.) Measured on 2
/// cores by rbuilder's bench/control_plane_start.sh (medians of 5): the CPU of both, from
/// their start until a project's 12 CRDs are served, 2.81 s with Go's defaults, 1.93 s with
/// these; kube-apiserver's peak memory 283 -> 367 MiB.
const GO_RUNTIME: [(&str, &str); 2] = [("GOMAXPROCS", "1"), ("GOGC", "400")];

pub(crate) struct Process {
    name: &'static str,
    /// Behind a lock so that a check that it still runs (`&self`) can reap it.
    child: Mutex<Child>,
    log: PathBuf,
}

impl Process {
    /// Starts `program` with `args`, its stdout and stderr going to `log`; with the Go
    /// settings of a plane that serves `one_test` ([`GO_RUNTIME`]), or Go's defaults.
    pub(crate) fn spawn(
        name: &'static str,
        program: &Path,
        args: &[String],
        log: PathBuf,
        one_test: bool,
    ) -> anyhow::Result<Self> {
        let out = File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
        let err = out.try_clone().context("cannot share the log file")?;
        let mut command = Command::new(program);
        for (name, value) in GO_RUNTIME.iter().filter(|_| one_test) {
            if std::env::var_os(name).is_none() {
                command.env(name, value);
            }
        }
        let child = command
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .with_context(|| format!("cannot start {}", program.display()))?;
        Ok(Self {
            name,
            child: Mutex::new(child),
            log,
        })
    }

    fn child(&self) -> MutexGuard<'_, Child> {
        // Only a handle: a panic while it was held leaves it usable.
        self.child.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Its process id.
    pub(crate) fn id(&self) -> u32 {
        self.child().id()
    }

    /// Its exit status, if it has exited.
    pub(crate) fn exited(&self) -> Option<ExitStatus> {
        self.child().try_wait().ok().flatten()
    }

    /// The end of its log, to show why it failed.
    pub(crate) fn log_tail(&self) -> String {
        let mut text = String::new();
        if let Ok(mut file) = File::open(&self.log) {
            let length = file.metadata().map(|m| m.len()).unwrap_or_default();
            let _ = file.seek(SeekFrom::Start(length.saturating_sub(LOG_TAIL_BYTES)));
            let mut bytes = Vec::new();
            let _ = file.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        format!(
            "the end of {}'s log ({}):\n{text}",
            self.name,
            self.log.display()
        )
    }
}

impl Drop for Process {
    /// Kills it (SIGKILL: its data is thrown away with the folder) and waits for it, so that
    /// nothing outlives the test, a failed one included.
    fn drop(&mut self) {
        let mut child = self.child();
        let _ = child.kill();
        let _ = child.wait();
    }
}
