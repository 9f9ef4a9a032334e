//! A process of the control plane: started with its output in a log file, killed when dropped.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};

use anyhow::Context as _;

/// How much of a log a failure shows.
const LOG_TAIL_BYTES: u64 = 4096;

pub(crate) struct Process {
    name: &'static str,
    /// Behind a lock so that a check that it still runs (`&self`) can reap it.
    child: Mutex<Child>,
    log: PathBuf,
}

impl Process {
    /// Starts `program` with `args`, its stdout and stderr going to `log`.
    pub(crate) fn spawn(
        name: &'static str,
        program: &Path,
        args: &[String],
        log: PathBuf,
    ) -> anyhow::Result<Self> {
        let out = File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
        let err = out.try_clone().context("cannot share the log file")?;
        let child = Command::new(program)
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
