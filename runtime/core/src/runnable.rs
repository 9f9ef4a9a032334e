//! The parts of the manager that a project adds itself ([`Runnable`]), and how the manager runs
//! its tasks: a failure of one (a controller or a runnable) stops the manager.

use std::error::Error;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::anyhow;
use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::{error, info, warn};

use crate::context::Context;
use crate::errors::error_chain;

/// Any error a runnable returns: its own error type converts into it.
type BoxError = Box<dyn Error + Send + Sync>;

/// A runnable's function, its future boxed.
type Run = Box<
    dyn FnOnce(Arc<Context>, CancellationToken) -> BoxFuture<'static, Result<(), BoxError>> + Send,
>;

/// A part of the manager of your own, run beside the controllers: an extra server, a periodic
/// task. controller-runtime calls it a `Runnable` too, added with `mgr.Add`; here
/// [`Manager::add_runnable`](crate::manager::Manager::add_runnable) adds it, in `src/main.rs`.
///
/// Its function gets the manager's [`Context`] (the client, Events, the watched namespace) and
/// a [`CancellationToken`] that is cancelled when it must stop; it should then return soon,
/// as the manager waits for it.
///
/// - **When it runs.** By default on the leader only, as the controllers: it starts once the
///   manager holds the leader-election Lease (at once without `--leader-elect`) and stops with
///   the controllers. [`on_every_replica`](Self::on_every_replica) runs it from the manager's
///   start on every replica, as the metrics and webhook servers, for what must not wait for
///   the Lease (a server, a cache warmed up in advance).
/// - **How it stops.** On SIGTERM the manager cancels the controllers and the leader's
///   runnables together and waits for all of them (10 s at most, then they are cancelled at
///   their next `.await`); then it releases the Lease, cancels the runnables of every replica
///   and waits for them (5 s at most); the probe, metrics and webhook servers stop last.
///   controller-runtime stops its runnables in the same order.
/// - **When it fails.** A runnable that returns an error, or panics, stops the manager as a
///   controller that cannot start does: the manager logs it, stops everything else in the
///   order above, and exits with that error (status 1), so that Kubernetes restarts the Pod.
///   One that returns `Ok(())` has just finished: the manager goes on.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// use rbuilder_runtime::manager::{CancellationToken, Runnable};
/// use rbuilder_runtime::Context;
///
/// /// Logs the number of namespaces every minute, until the manager stops.
/// async fn count_namespaces(
///     ctx: Arc<Context>,
///     shutdown: CancellationToken,
/// ) -> Result<(), kube::Error> {
///     let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> =
///         kube::Api::all(ctx.client.clone());
///     let mut every_minute = tokio::time::interval(Duration::from_secs(60));
///     loop {
///         tokio::select! {
///             () = shutdown.cancelled() => return Ok(()),
///             _ = every_minute.tick() => {}
///         }
///         let count = namespaces.list_metadata(&Default::default()).await?.items.len();
///         tracing::info!(count, "namespaces");
///     }
/// }
///
/// let runnable = Runnable::new("count-namespaces", count_namespaces);
/// # let _ = runnable;
/// ```
pub struct Runnable {
    name: String,
    every_replica: bool,
    run: Run,
}

impl Runnable {
    /// A runnable named `name` (in the log) that runs `run`: an `async fn(Arc<Context>,
    /// CancellationToken) -> Result<(), E>`, or a closure that returns such a future, with any
    /// error type `E` (`anyhow::Error`, `kube::Error`, an error of your own).
    pub fn new<F, Fut, E>(name: impl Into<String>, run: F) -> Self
    where
        F: FnOnce(Arc<Context>, CancellationToken) -> Fut + Send + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: Into<BoxError>,
    {
        Self {
            name: name.into(),
            every_replica: false,
            run: Box::new(move |ctx, shutdown| {
                Box::pin(run(ctx, shutdown).map(|result| result.map_err(Into::into)))
            }),
        }
    }

    /// This runnable, run on every replica from the manager's start, not only on the leader:
    /// controller-runtime's `NeedLeaderElection() == false`.
    #[must_use]
    pub fn on_every_replica(mut self) -> Self {
        self.every_replica = true;
        self
    }

    /// Its name, as the log shows it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether it runs on every replica, not only on the leader.
    pub fn runs_on_every_replica(&self) -> bool {
        self.every_replica
    }

    /// Runs it in `tasks` until `shutdown`; a failure goes to `failures`.
    pub(crate) fn spawn(
        self,
        tasks: &mut JoinSet<()>,
        ctx: Arc<Context>,
        shutdown: CancellationToken,
        failures: &Failures,
    ) {
        let name = self.name;
        info!(runnable = name, "starting");
        let run = (self.run)(ctx, shutdown);
        let what = format!("runnable {name}");
        spawn(tasks, what, failures, async move {
            match run.await {
                Ok(()) => {
                    info!(runnable = name, "stopped");
                    Ok(())
                }
                Err(error) => Err(anyhow!("runnable {name} failed: {}", error_chain(&*error))),
            }
        });
    }
}

/// Runs `task`, called `what` in the log, in `tasks`; its error, or its panic, goes to
/// `failures`.
pub(crate) fn spawn(
    tasks: &mut JoinSet<()>,
    what: String,
    failures: &Failures,
    task: impl Future<Output = anyhow::Result<()>> + Send + 'static,
) {
    let failures = failures.clone();
    tasks.spawn(async move {
        // A panic's message is already on stderr, from the panic hook.
        match AssertUnwindSafe(task).catch_unwind().await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => failures.report(&what, error),
            Err(_panic) => failures.report(&what, anyhow!("{what} panicked")),
        }
    });
}

/// The first failure of the manager's tasks. Reporting one cancels a token, the manager's
/// SIGTERM, so that everything stops in order; the manager then exits with it.
#[derive(Clone)]
pub(crate) struct Failures {
    first: Arc<Mutex<Option<anyhow::Error>>>,
    stop: CancellationToken,
}

impl Failures {
    /// Failures that cancel `stop`.
    pub(crate) fn new(stop: CancellationToken) -> Self {
        Self {
            first: Arc::default(),
            stop,
        }
    }

    fn report(&self, what: &str, error: anyhow::Error) {
        let mut first = self.first.lock().unwrap_or_else(PoisonError::into_inner);
        if first.is_some() {
            // Only the first is returned: log the others in full.
            error!("{error:#}");
            return;
        }
        // The error itself is the manager's last line, once everything has stopped.
        warn!("{what} failed: stopping the manager");
        *first = Some(error);
        self.stop.cancel();
    }

    /// The first failure, if any.
    pub(crate) fn take(&self) -> Option<anyhow::Error> {
        let mut first = self.first.lock().unwrap_or_else(PoisonError::into_inner);
        first.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::mock_context;

    async fn run_alone(runnable: Runnable) -> Option<anyhow::Error> {
        let (ctx, _server) = mock_context();
        let stop = CancellationToken::new();
        let failures = Failures::new(stop.clone());
        let mut tasks = JoinSet::new();
        runnable.spawn(&mut tasks, ctx, CancellationToken::new(), &failures);
        while tasks.join_next().await.is_some() {}
        let failure = failures.take();
        assert_eq!(stop.is_cancelled(), failure.is_some());
        failure
    }

    #[tokio::test]
    async fn a_runnable_that_finishes_stops_nothing() {
        let done = Runnable::new("done", |_, _| async { Ok::<(), std::io::Error>(()) });
        assert!(run_alone(done).await.is_none());
    }

    #[tokio::test]
    async fn a_runnable_error_stops_the_manager_with_its_causes() {
        let failing = Runnable::new("report", |_, _| async {
            let cause = std::io::Error::other("disk full");
            Err(anyhow::Error::new(cause).context("cannot write the report"))
        });
        let error = run_alone(failing).await.expect("a failure");
        assert_eq!(
            format!("{error:#}"),
            "runnable report failed: cannot write the report: disk full"
        );
    }

    #[tokio::test]
    async fn a_runnable_panic_stops_the_manager() {
        fn explode() -> Result<(), std::io::Error> {
            panic!("on purpose")
        }
        let panicking = Runnable::new("panics", |_, _| async { explode() });
        let error = run_alone(panicking).await.expect("a failure");
        assert_eq!(error.to_string(), "runnable panics panicked");
    }

    #[tokio::test]
    async fn only_the_first_failure_is_kept() {
        let stop = CancellationToken::new();
        let failures = Failures::new(stop.clone());
        failures.report("a", anyhow!("first"));
        failures.report("b", anyhow!("second"));
        assert!(stop.is_cancelled());
        let first = failures.take().map(|error| error.to_string());
        assert_eq!(first.as_deref(), Some("first"));
    }

    #[test]
    fn runnables_run_on_the_leader_unless_told_otherwise() {
        let task = || Runnable::new("task", |_, _| async { Ok::<(), std::io::Error>(()) });
        assert!(!task().runs_on_every_replica());
        assert!(task().on_every_replica().runs_on_every_replica());
        assert_eq!(task().name(), "task");
    }
}
