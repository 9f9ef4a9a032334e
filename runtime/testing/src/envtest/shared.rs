//! The control plane the tests of one test binary share ([`super::Environment::shared`]), as
//! a kubebuilder suite's tests share the envtest its `BeforeSuite` starts: the first test
//! starts it and installs the operator's CRDs, webhooks and role; the others find it ready.
//!
//! It outlives every test, so it runs on a tokio runtime of its own, on a thread of its own:
//! each `#[tokio::test]` has a runtime that ends with the test, and the tasks it spawned (the
//! webhook server's) end with it. A `static` is never dropped: the processes are stopped and
//! the folder deleted when the test binary exits ([`ControlPlane::stop_at_exit`]).

use std::process::ChildStdin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use anyhow::{Context as _, anyhow};
use tokio::runtime::Handle;
use tokio::sync::OnceCell;

use super::control_plane::ControlPlane;
use super::{FIELD_MANAGER, Installed};
use rbuilder_runtime_core::Operator;

/// A shared control plane, and the handle whose closing at exit stops it.
struct Shared {
    installed: Installed,
    _exit: ChildStdin,
}

/// The shared control plane of each operator the binary's tests run (one, in a project).
type Planes = Vec<(&'static Operator, Arc<OnceCell<&'static Shared>>)>;

/// The control plane of `operator` that this test binary's tests share, started by the first
/// that asks. A start that failed is tried again by the next test.
pub(crate) async fn plane(operator: &'static Operator) -> anyhow::Result<&'static Installed> {
    static PLANES: Mutex<Planes> = Mutex::new(Vec::new());
    let cell = {
        let mut planes = PLANES.lock().unwrap_or_else(PoisonError::into_inner);
        let found = planes.iter().find(|(of, _)| std::ptr::eq(*of, operator));
        match found {
            Some((_, cell)) => Arc::clone(cell),
            None => {
                let cell = Arc::new(OnceCell::new());
                planes.push((operator, Arc::clone(&cell)));
                cell
            }
        }
    };
    let shared = cell
        .get_or_try_init(|| async {
            let started = runtime()?.spawn(start(operator));
            let shared = started
                .await
                .context("the shared control plane's start")??;
            Ok::<_, anyhow::Error>(&*Box::leak(Box::new(shared)))
        })
        .await?;
    Ok(&shared.installed)
}

/// Starts the control plane, with `operator`'s CRDs, webhooks and role.
async fn start(operator: &'static Operator) -> anyhow::Result<Shared> {
    let plane = ControlPlane::start_shared().await?;
    let exit = plane.stop_at_exit()?;
    let installed = Installed::start(operator, plane, true).await?;
    Ok(Shared {
        installed,
        _exit: exit,
    })
}

/// The runtime of the shared control planes' tasks, on a thread that runs until the process
/// exits.
fn runtime() -> anyhow::Result<&'static Handle> {
    static HANDLE: OnceLock<Result<Handle, String>> = OnceLock::new();
    let handle = HANDLE.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| error.to_string())?;
        let handle = runtime.handle().clone();
        std::thread::Builder::new()
            .name(FIELD_MANAGER.to_owned())
            .spawn(move || runtime.block_on(std::future::pending::<()>()))
            .map_err(|error| error.to_string())?;
        Ok(handle)
    });
    handle
        .as_ref()
        .map_err(|error| anyhow!("cannot start the shared control plane's runtime: {error}"))
}

/// A namespace name of its own for each test of the binary: `envtest-1`, `envtest-2`...
pub(crate) fn next_namespace() -> String {
    static LAST: AtomicUsize = AtomicUsize::new(0);
    format!("envtest-{}", LAST.fetch_add(1, Ordering::Relaxed) + 1)
}
