//! The manager: the operator binary's `main`. It reads the flags, connects to the API server,
//! serves the health probes, the metrics and the webhooks, waits for leadership if asked to,
//! runs every controller, and on SIGTERM stops them (letting reconciles under way finish, for
//! 10 s at most) and releases the Lease, within the Pod's grace period.
//!
//! A project adds its own parts to it in `src/main.rs`, with [`Manager`]: [`Runnable`]s (an
//! extra server, a periodic task) that run beside the controllers and stop with them, and
//! Prometheus metrics of its own, served on `/metrics` with the runtime's:
//!
//! ```no_run
//! use std::process::ExitCode;
//! use std::sync::{Arc, LazyLock};
//!
//! use rbuilder_runtime::manager::{CancellationToken, Manager, Runnable};
//! use rbuilder_runtime::prometheus_client::metrics::counter::Counter;
//! use rbuilder_runtime::{Context, Operator};
//!
//! static OPERATOR: Operator = Operator::new("guestbook");
//!
//! /// Reports sent; a controller's `apply` can count too: `REPORTS.inc()`.
//! static REPORTS: LazyLock<Counter> = LazyLock::new(Counter::default);
//!
//! async fn send_reports(ctx: Arc<Context>, shutdown: CancellationToken) -> anyhow::Result<()> {
//!     // ... until `shutdown.cancelled()`
//!     # let _ = ctx;
//!     shutdown.cancelled().await;
//!     Ok(())
//! }
//!
//! #[tokio::main]
//! async fn main() -> ExitCode {
//!     Manager::new(&OPERATOR)
//!         .add_runnable(Runnable::new("reports", send_reports))
//!         .register_metrics(|registry| {
//!             // Exported as guestbook_reports_total.
//!             registry.register("guestbook_reports", "Reports sent", REPORTS.clone());
//!         })
//!         .run()
//!         .await
//! }
//! ```

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context as _, anyhow, bail};
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use clap::{ArgAction, CommandFactory, FromArgMatches, Parser, ValueEnum};
use kube::client::ClientBuilder;
use kube::{Client, Config};
use prometheus_client::encoding::prometheus_text;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};
use tokio::task::JoinSet;
use tokio::time::timeout;
use tracing::{info, warn};
use tracing_subscriber::EnvFilter;

pub use crate::runnable::Runnable;
/// The signal a [`Runnable`] gets to stop: tokio-util's, re-exported so that a project names
/// it without depending on tokio-util itself.
pub use tokio_util::sync::CancellationToken;

use crate::client_metrics::RequestCounterLayer;
use crate::client_timeout::RequestTimeoutLayer;
use crate::context::Context;
use crate::errors::error_chain;
use crate::leader_election::{self, LeaderElection};
use crate::metrics::Metrics;
use crate::metrics_auth::{self, MetricsAuth};
use crate::namespaces::Namespaces;
use crate::operator::{Operator, WatchScope};
use crate::rate_limit::ClientRateLimitLayer;
use crate::runnable::{self, Failures};
use crate::serve::{self, BindAddress};
use crate::state::States;
use crate::tls::{self, TlsListener};
use crate::webhook;

/// --kube-api-qps by default: no client-side limit, as controller-runtime (v0.25 turns
/// client-go's off): the API server's Priority and Fairness bounds what one operator may ask
/// of it, and the load of a controller is bounded by its workers
/// ([`MAX_CONCURRENT_RECONCILES`](crate::Reconciler::MAX_CONCURRENT_RECONCILES)) and, when all
/// its objects fail at once, by its retry budget ([`crate::controller::RETRY_BURST`],
/// [`crate::controller::RETRY_QPS`]; bench/faults.sh measures it). A limit of 20 a second (the
/// default before) would take at least 50 minutes to write 10,000 new objects' children.
pub(crate) const KUBE_API_QPS: f32 = 0.0;

/// --kube-api-burst by default, when --kube-api-qps sets a limit (client-go's own is 10).
pub(crate) const KUBE_API_BURST: u32 = 30;

/// The manager's flags: those of kubebuilder projects, and the client-side rate limit
/// (`--kube-api-qps`, `--kube-api-burst`, as Cluster API's managers name them).
#[derive(Parser, Debug)]
pub struct Flags {
    /// Address the /metrics endpoint binds to: "host:port", ":port" (":8443" is every
    /// interface, IPv6 and IPv4), or "0" to disable it. The default is loopback only, for
    /// `make run` on a workstation; config/manager passes ":8443" in the cluster.
    #[arg(long, default_value = "127.0.0.1:8443")]
    pub metrics_bind_address: BindAddress,

    /// Serve /metrics over HTTPS to authenticated and authorized clients only (a bearer token
    /// checked with a TokenReview, `get /metrics` with a SubjectAccessReview); false serves
    /// plain HTTP to anyone who can connect.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_value_t = true,
          default_missing_value = "true", value_name = "BOOL")]
    pub metrics_secure: bool,

    /// A folder with the metrics server's certificate and key (e.g. a cert-manager Secret
    /// mounted there), reloaded when they change; without it a self-signed certificate is
    /// made at start.
    #[arg(long, value_name = "DIR")]
    pub metrics_cert_path: Option<PathBuf>,

    /// The certificate's file in --metrics-cert-path.
    #[arg(long, default_value = "tls.crt", value_name = "FILE")]
    pub metrics_cert_name: String,

    /// The key's file in --metrics-cert-path.
    #[arg(long, default_value = "tls.key", value_name = "FILE")]
    pub metrics_cert_key: String,

    /// Address the webhook server binds to: "host:port", ":port", or "0" to disable it. The default
    /// is loopback only; config/default passes ":9443" in the cluster. Only a project with
    /// webhooks serves them.
    #[arg(long, default_value = "127.0.0.1:9443")]
    pub webhook_bind_address: BindAddress,

    /// A folder with the webhook server's certificate and key (the cert-manager Secret mounted
    /// there), reloaded when they change; without it a self-signed certificate is made at
    /// start, which no API server trusts.
    #[arg(long, value_name = "DIR")]
    pub webhook_cert_path: Option<PathBuf>,

    /// The certificate's file in --webhook-cert-path.
    #[arg(long, default_value = "tls.crt", value_name = "FILE")]
    pub webhook_cert_name: String,

    /// The key's file in --webhook-cert-path.
    #[arg(long, default_value = "tls.key", value_name = "FILE")]
    pub webhook_cert_key: String,

    /// Serve the project's webhooks; false (or the environment variable ENABLE_WEBHOOKS=false,
    /// as in kubebuilder projects) runs the controllers only, e.g. for `make run`.
    #[arg(long, action = ArgAction::Set, num_args = 0..=1, default_value_t = true,
          default_missing_value = "true", value_name = "BOOL")]
    pub enable_webhooks: bool,

    /// Address the /healthz and /readyz probes bind to: "host:port", ":port", or "0" to
    /// disable them.
    /// The default is loopback only; config/manager passes ":8081" for the kubelet's probes.
    #[arg(long, default_value = "127.0.0.1:8081")]
    pub health_probe_bind_address: BindAddress,

    /// Run the controllers only while holding the Lease `<name>-leader-election` (in the
    /// POD_NAMESPACE namespace), so that one of several replicas is active at a time.
    #[arg(long)]
    pub leader_elect: bool,

    /// The most requests a second the controllers send to the API server, their reconciles,
    /// watches and Events together, past --kube-api-burst: client-go's client-side limit. 0,
    /// the default, for none, as controller-runtime v0.25 has (it leaves the bound to the API
    /// server's Priority and Fairness). Leader election has its own.
    #[arg(long, default_value_t = KUBE_API_QPS, value_name = "QPS")]
    pub kube_api_qps: f32,

    /// How many requests the controllers may send at once before --kube-api-qps paces them.
    #[arg(long, default_value_t = KUBE_API_BURST, value_name = "REQUESTS")]
    pub kube_api_burst: u32,

    /// Log format; the level is set by RUST_LOG (default "info").
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// How the manager writes its log.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum LogFormat {
    /// One readable line per event.
    Text,
    /// One JSON object per event, for log collectors.
    Json,
}

impl Flags {
    /// The flags of the command line of `operator`'s manager (exits on `--help` or an error).
    pub fn parse_for(operator: &Operator) -> Self {
        let matches = Self::command_for(operator).get_matches();
        Self::from_arg_matches(&matches).unwrap_or_else(|error| error.exit())
    }

    /// The manager's flags and flags of your own, `A`, from one command line (exits on
    /// `--help`, which lists both, or an error): for a setting of your controllers' read at
    /// start, which `src/main.rs` then gives the manager as their state
    /// ([`Manager::state`]). `A` derives `clap::Args` with the runtime's clap
    /// ([`rbuilder_runtime::clap`](crate::clap)), so that both agree on its version, imported
    /// with `self` (`use rbuilder_runtime::clap::{self, Args};`: the derive writes `clap::`
    /// paths). Its fields must not be named as the manager's flags (`--help` lists them): a
    /// debug build (`make run`, the tests) stops at start on two arguments of one name, as
    /// clap's checks of a command are debug assertions.
    ///
    /// ```no_run
    /// use std::process::ExitCode;
    ///
    /// use rbuilder_runtime::clap::{self, Args};
    /// use rbuilder_runtime::manager::{Flags, Manager};
    /// # use rbuilder_runtime::Operator;
    /// # static OPERATOR: Operator = Operator::new("guestbook");
    ///
    /// /// The guestbook's own flags, beside the manager's.
    /// #[derive(Args, Debug)]
    /// pub struct Settings {
    ///     /// How the guestbook greets its guests.
    ///     #[arg(long, default_value = "Hello")]
    ///     pub greeting: String,
    /// }
    ///
    /// #[tokio::main]
    /// async fn main() -> ExitCode {
    ///     let (flags, settings) = Flags::parse_with::<Settings>(&OPERATOR);
    ///     Manager::new(&OPERATOR)
    ///         .flags(flags)
    ///         .state(settings)
    ///         .run()
    ///         .await
    /// }
    /// ```
    pub fn parse_with<A: clap::Args>(operator: &Operator) -> (Self, A) {
        let matches = A::augment_args(Self::command_for(operator)).get_matches();
        let flags = Self::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
        let own = A::from_arg_matches(&matches).unwrap_or_else(|error| error.exit());
        (flags, own)
    }

    /// The command line of `operator`'s manager: its name, version and what it does.
    fn command_for(operator: &Operator) -> clap::Command {
        Self::command()
            .name(operator.parts().name)
            .version(operator.parts().version)
            .about(format!(
                "Runs the controllers of the {} operator",
                operator.parts().name
            ))
    }
}

/// Runs `operator` with the flags of the command line until SIGTERM or SIGINT: the whole
/// `main` of a manager. The same as `Manager::new(operator).run()`, which projects use now.
#[deprecated(since = "0.2.0", note = "use `Manager::new(&OPERATOR).run().await`")]
pub async fn run(operator: &'static Operator) -> ExitCode {
    Manager::new(operator).run().await
}

/// `run` with `flags` given, e.g. parsed as part of flags of your own (`#[command(flatten)]`).
/// The same as `Manager::new(operator).flags(flags).run()`, which projects use now.
#[deprecated(
    since = "0.2.0",
    note = "use `Manager::new(&OPERATOR).flags(flags).run().await` (and `Flags::parse_with`)"
)]
pub async fn run_with(operator: &'static Operator, flags: Flags) -> ExitCode {
    Manager::new(operator).flags(flags).run().await
}

/// The manager of an operator, with the parts the project adds to it: what `src/main.rs` runs.
///
/// ```no_run
/// # use rbuilder_runtime::Operator;
/// # static OPERATOR: Operator = Operator::new("guestbook");
/// # async fn example() -> std::process::ExitCode {
/// rbuilder_runtime::manager::Manager::new(&OPERATOR).run().await
/// # }
/// ```
pub struct Manager {
    operator: &'static Operator,
    flags: Option<Flags>,
    extensions: Extensions,
}

/// What a project adds to its manager.
#[derive(Default)]
pub(crate) struct Extensions {
    runnables: Vec<Runnable>,
    metrics: Vec<RegisterMetrics>,
    states: States,
}

/// A project's registration of metrics of its own.
type RegisterMetrics = Box<dyn FnOnce(&mut Registry) + Send>;

impl Manager {
    /// The manager of `operator`, with nothing added; flags from the command line.
    pub fn new(operator: &'static Operator) -> Self {
        Self {
            operator,
            flags: None,
            extensions: Extensions::default(),
        }
    }

    /// This manager with `flags` instead of those of the command line, e.g. parsed as part of
    /// flags of your own (`#[command(flatten)] manager: Flags`).
    #[must_use]
    pub fn flags(mut self, flags: Flags) -> Self {
        self.flags = Some(flags);
        self
    }

    /// This manager with `runnable` as well, started after those added before it (see
    /// [`Runnable`] for when it runs and stops, and what its failure does).
    #[must_use]
    pub fn add_runnable(mut self, runnable: Runnable) -> Self {
        self.extensions.runnables.push(runnable);
        self
    }

    /// This manager with `state` for the controllers that hold a state of type `S` (those
    /// registered with [`register_with_state::<_, S>`](crate::register_with_state)): each of
    /// their reconciles reaches it as `ctx.state()`. Give it once per type; the manager stops
    /// at start, saying why, when a controller's state is missing or a state is one no
    /// controller takes.
    ///
    /// ```no_run
    /// # use rbuilder_runtime::Operator;
    /// # static OPERATOR: Operator = Operator::new("guestbook");
    /// /// What the guestbook controller is told at start.
    /// pub struct Settings {
    ///     pub greeting: String,
    /// }
    ///
    /// # async fn example() -> std::process::ExitCode {
    /// let settings = Settings { greeting: "Hello".into() };
    /// rbuilder_runtime::manager::Manager::new(&OPERATOR)
    ///     .state(settings)
    ///     .run()
    ///     .await
    /// # }
    /// ```
    #[must_use]
    pub fn state<S: Send + Sync + 'static>(mut self, state: S) -> Self {
        self.extensions.states.add(state);
        self
    }

    /// This manager with metrics of your own in the registry that `/metrics` serves: `register`
    /// gets the registry once, at start, and registers them (e.g. `registry.register(name,
    /// help, COUNTER.clone())`: a prometheus-client metric is a handle, and its clones count
    /// together). The crate is the runtime's, re-exported as
    /// [`rbuilder_runtime::prometheus_client`](crate::prometheus_client), so that your metrics
    /// and the registry agree on its version. Names must not clash with the runtime's
    /// (`controller_runtime_*`, `rest_client_*`, `process_*`): prefix yours with the
    /// operator's name.
    #[must_use]
    pub fn register_metrics(
        mut self,
        register: impl FnOnce(&mut Registry) + Send + 'static,
    ) -> Self {
        self.extensions.metrics.push(Box::new(register));
        self
    }

    /// Runs the operator until SIGTERM or SIGINT, or until a controller or a runnable fails:
    /// then the status is 1 and the error is the last line on stderr.
    pub async fn run(self) -> ExitCode {
        let Self {
            operator,
            flags,
            extensions,
        } = self;
        let flags = flags.unwrap_or_else(|| Flags::parse_for(operator));
        // Connect before logging starts: kube's HTTP layer logs failed requests too, and an
        // unreachable cluster should give one clear error line.
        let metrics = Metrics::default();
        let (clients, version) = match connect(&metrics, &flags).await {
            Ok(connected) => connected,
            Err(error) => return fail(&error),
        };
        init_logging(flags.log_format);
        info!(version, "connected to the Kubernetes API server");
        match manage(operator, flags, clients, metrics, extensions).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => fail(&error),
        }
    }
}

/// Two controllers of one name would share their metrics (the `controller` label) and their
/// logs, each hiding the other: refused at start, as controller-runtime refuses them.
fn refuse_controllers_of_one_name(
    controllers: &[crate::controller::Registration],
) -> anyhow::Result<()> {
    for (at, controller) in controllers.iter().enumerate() {
        if controllers[..at].iter().any(|c| c.name == controller.name) {
            bail!(
                "two controllers are named '{}': a controller's name (Reconciler::NAME) labels \
                 its metrics and logs, so it must be unique; rename one",
                controller.name
            );
        }
    }
    Ok(())
}

fn fail(error: &anyhow::Error) -> ExitCode {
    eprintln!("error: {error:#}");
    ExitCode::FAILURE
}

fn init_logging(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colours only on a terminal: not in `kubectl logs` or a redirected `make run`.
        .with_ansi(std::io::stderr().is_terminal());
    match format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs.json().init(),
    }
}

async fn manage(
    operator: &'static Operator,
    flags: Flags,
    clients: Clients,
    metrics: Metrics,
    extensions: Extensions,
) -> anyhow::Result<()> {
    let shutdown = CancellationToken::new();
    cancel_on_signal(shutdown.clone())?;
    manage_until(operator, flags, clients, metrics, extensions, shutdown).await
}

/// [`manage`], until `shutdown` is cancelled, or a controller or a runnable fails (which
/// cancels it): the controllers and the leader's runnables stop first, letting the reconciles
/// under way finish, then the runnables of every replica, and only then the servers. A
/// reconcile that is draining still needs the webhooks (removing a finalizer is an update that
/// the API server sends them) and the probes, as in controller-runtime, which stops its
/// runnables in the same order.
pub(crate) async fn manage_until(
    operator: &'static Operator,
    flags: Flags,
    clients: impl Into<Clients>,
    metrics: Metrics,
    extensions: Extensions,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let Clients {
        controllers: client,
        manager: own_client,
    } = clients.into();
    // Cancelled once the controllers and the leader's runnables have stopped.
    let replicas_shutdown = CancellationToken::new();
    let _stop_replicas = replicas_shutdown.clone().drop_guard();
    // Cancelled once the runnables of every replica have stopped too.
    let servers_shutdown = CancellationToken::new();
    let _stop_servers = servers_shutdown.clone().drop_guard();
    // As controller-runtime reads it: one namespace, or several separated by commas.
    let watch_namespaces = Namespaces::parse(&std::env::var("WATCH_NAMESPACE").unwrap_or_default());
    if operator.parts().scope == WatchScope::Namespace && watch_namespaces.is_all() {
        info!("WATCH_NAMESPACE is not set: watching every namespace the credentials can read");
    } else if !watch_namespaces.is_all() {
        info!(namespaces = ?watch_namespaces, "watching only these namespaces (WATCH_NAMESPACE)");
    }
    refuse_controllers_of_one_name(operator.parts().controllers)?;
    let states = extensions.states;
    let taken: Vec<_> = (operator.parts().controllers.iter())
        .map(|controller| (controller.name, controller.state))
        .collect();
    states.check(&taken).map_err(|error| anyhow!(error))?;
    for controller in operator.parts().controllers {
        metrics.init_controller(controller.name, controller.max_concurrent_reconciles);
    }
    let mut registry = metrics.registry();
    for register in extensions.metrics {
        register(&mut registry);
    }
    let registry = Arc::new(registry);
    let ctx = Context::new(client.clone(), operator.field_manager(), watch_namespaces);
    let ctx = Arc::new(ctx.with_metrics(metrics));

    // The servers start first: the probes must answer while this instance waits for leadership.
    let mut servers = JoinSet::new();
    // Not ready until the webhook server serves, if there is one: the webhook Service must not
    // send the API server's calls to this replica before (controller-runtime checks the same).
    let serves_webhooks = !operator.parts().webhooks.is_empty() && webhooks_enabled(&flags);
    let webhooks_started = Arc::new(AtomicBool::new(!serves_webhooks));
    let started = Arc::clone(&webhooks_started);
    let probes = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(move || readyz(Arc::clone(&started))));
    let address = &flags.health_probe_bind_address;
    if let Some(listener) = bind("health probes", address).await? {
        servers.spawn(serve::serve(
            "health probes",
            listener,
            probes,
            servers_shutdown.clone(),
        ));
    }
    let metrics = Router::new()
        .route("/metrics", get(serve_metrics))
        .with_state(registry);
    if let Some(listener) = bind("metrics", &flags.metrics_bind_address).await? {
        if flags.metrics_secure {
            let auth = MetricsAuth::new(own_client.clone());
            let metrics =
                metrics.layer(middleware::from_fn_with_state(auth, metrics_auth::require));
            let certificate = tls::certificate(
                flags.metrics_cert_path.as_deref(),
                &flags.metrics_cert_name,
                &flags.metrics_cert_key,
            )
            .context("cannot serve metrics over HTTPS")?;
            tokio::spawn(
                Arc::clone(&certificate).watch(tls::RELOAD_INTERVAL, servers_shutdown.clone()),
            );
            let config = tls::server_config(certificate)?;
            let listener = TlsListener::new(listener, config)?;
            servers.spawn(serve::serve(
                "metrics (HTTPS)",
                listener,
                metrics,
                servers_shutdown.clone(),
            ));
        } else {
            servers.spawn(serve::serve(
                "metrics",
                listener,
                metrics,
                servers_shutdown.clone(),
            ));
        }
    }

    if serves_webhooks {
        if let Some(listener) = bind("webhooks", &flags.webhook_bind_address).await? {
            let certificate = tls::certificate(
                flags.webhook_cert_path.as_deref(),
                &flags.webhook_cert_name,
                &flags.webhook_cert_key,
            )
            .context("cannot serve the webhooks over HTTPS")?;
            tokio::spawn(
                Arc::clone(&certificate).watch(tls::RELOAD_INTERVAL, servers_shutdown.clone()),
            );
            let listener = TlsListener::new(listener, tls::server_config(certificate)?)?;
            let router = webhook::router(operator.parts().webhooks);
            servers.spawn(serve::serve(
                "webhooks (HTTPS)",
                listener,
                router,
                servers_shutdown.clone(),
            ));
        }
        // Ready from now on: serving, or told not to (--webhook-bind-address=0).
        webhooks_started.store(true, Ordering::Relaxed);
    }

    // A controller or runnable that fails stops the manager as SIGTERM does; the manager then
    // exits with its error.
    let failures = Failures::new(shutdown.clone());
    let (every_replica, leader_only): (Vec<_>, Vec<_>) = extensions
        .runnables
        .into_iter()
        .partition(Runnable::runs_on_every_replica);
    // Like the servers, these run while this instance waits for leadership. (Each runnable
    // gets a child token: one that cancels its own stops nothing else.)
    let mut replicas = JoinSet::new();
    for runnable in every_replica {
        let shutdown = replicas_shutdown.child_token();
        runnable.spawn(&mut replicas, ctx.clone(), shutdown, &failures);
    }

    // What did not stop in time at shutdown, as controller-runtime reports it.
    let mut stuck = None;
    let mut leadership = None;
    let elected = if flags.leader_elect {
        let election = leader_election(operator, &own_client)?;
        // None: stopped while waiting.
        leadership = election.acquire(&shutdown).await;
        leadership.is_some()
    } else {
        true
    };
    if elected {
        let mut leaders = JoinSet::new();
        for controller in operator.parts().controllers {
            let run = (controller.run)(ctx.clone(), &states, shutdown.clone())?;
            let what = format!("controller {}", controller.name);
            runnable::spawn(&mut leaders, what, &failures, async move {
                run.await
                    .map_err(|error| start_error(controller.name, &error))
            });
        }
        for runnable in leader_only {
            let shutdown = shutdown.child_token();
            runnable.spawn(&mut leaders, ctx.clone(), shutdown, &failures);
        }
        let lost = async {
            match &mut leadership {
                Some(leadership) => leadership.lost().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            drained = wait_until_stopped(&mut leaders, &shutdown, DRAIN_TIMEOUT) => {
                if !drained {
                    stuck.get_or_insert(anyhow!(
                        "the controllers and the leader's runnables did not stop within \
                         {DRAIN_TIMEOUT:?} after the shutdown began: cancelled"
                    ));
                }
            }
            // As controller-runtime does: another instance may be reconciling already, so this
            // one stops at once, without releasing the Lease.
            () = lost => bail!("lost the leader-election Lease: exiting"),
        }
    }

    // Each request about the Lease is bounded: released well within the grace period.
    if let Some(leadership) = leadership {
        leadership.release().await;
    }
    replicas_shutdown.cancel();
    if !wait_until_stopped(&mut replicas, &replicas_shutdown, STOP_TIMEOUT).await {
        stuck.get_or_insert(anyhow!(
            "the runnables of every replica did not stop within {STOP_TIMEOUT:?}: cancelled"
        ));
    }
    servers_shutdown.cancel();
    let servers_stopped = match timeout(STOP_TIMEOUT, join_servers(&mut servers)).await {
        Ok(stopped) => stopped,
        Err(_) => Err(anyhow!("the servers did not stop within {STOP_TIMEOUT:?}")),
    };
    // The failure that stopped the manager is what it exits with; else what did not stop.
    if let Some(failure) = failures.take().or(stuck) {
        return Err(failure);
    }
    servers_stopped?;
    info!("stopped");
    Ok(())
}

/// Waits for the servers to stop; the first error of one.
async fn join_servers(servers: &mut JoinSet<std::io::Result<()>>) -> anyhow::Result<()> {
    while let Some(server) = servers.join_next().await {
        server.context("server task failed")??;
    }
    Ok(())
}

/// `/readyz`: ready once the webhook server (if any) serves.
async fn readyz(webhooks_started: Arc<AtomicBool>) -> (StatusCode, &'static str) {
    if webhooks_started.load(Ordering::Relaxed) {
        (StatusCode::OK, "ok")
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "the webhook server has not started",
        )
    }
}

/// Whether to serve webhooks: --enable-webhooks, unless ENABLE_WEBHOOKS=false.
fn webhooks_enabled(flags: &Flags) -> bool {
    flags.enable_webhooks && std::env::var("ENABLE_WEBHOOKS").as_deref() != Ok("false")
}

/// The election for `operator`'s Lease, in POD_NAMESPACE (set from the downward API in
/// config/manager) or, out of a cluster, the kubeconfig's namespace.
fn leader_election(operator: &Operator, client: &Client) -> anyhow::Result<LeaderElection> {
    let namespace =
        std::env::var("POD_NAMESPACE").unwrap_or_else(|_| client.default_namespace().to_owned());
    // The pod's name in a pod, for people to read: the identity adds what makes it unique.
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into());
    let identity = leader_election::identity(&host)
        .map_err(|_| anyhow!("cannot make a leader-election identity: no random bytes"))?;
    let lease = format!("{}-leader-election", operator.parts().name);
    Ok(LeaderElection::new(
        client.clone(),
        &namespace,
        lease,
        identity,
    ))
}

/// Binds `address` for `what`, so that a port in use fails the start-up; `None` if disabled.
async fn bind(what: &str, address: &BindAddress) -> anyhow::Result<Option<TcpListener>> {
    serve::bind(address)
        .await
        .with_context(|| format!("cannot serve {what} on {address:?}"))
}

/// The manager's clients of the API server.
pub(crate) struct Clients {
    /// The controllers' (their reconciles, watches and Events, and the project's runnables'):
    /// paced by --kube-api-qps and --kube-api-burst.
    pub(crate) controllers: Client,
    /// The manager's own (leader election, the metrics server's authentication), which no
    /// load of the controllers delays: a Lease renewal that waits behind a thousand reconciles
    /// loses the Lease. client-go gives leader election a rate limit of its own the same way.
    pub(crate) manager: Client,
}

/// One client for both, as the tests give a mocked one.
impl From<Client> for Clients {
    fn from(client: Client) -> Self {
        Self {
            controllers: client.clone(),
            manager: client,
        }
    }
}

impl Clients {
    /// The clients of the API server of `config`, the controllers' limited by `flags`; their
    /// requests are counted in `metrics`.
    pub(crate) fn new(config: &Config, metrics: &Metrics, flags: &Flags) -> anyhow::Result<Self> {
        let limit = ClientRateLimitLayer::new(flags.kube_api_qps, flags.kube_api_burst);
        Ok(Self {
            controllers: controllers_client(config.clone(), metrics, limit)?,
            manager: client(config.clone(), metrics)?,
        })
    }
}

/// The controllers' client of the API server of `config`, with `limit` (none: no limit); its
/// requests are counted in `metrics`.
///
/// kube retries a request answered 429, 503 or 504 inside the client, up to 15 times over
/// minutes, holding the reconcile (with one worker, the controller) and past the rate limit,
/// which sees one request. Here it does not: the reconcile fails and is retried as any
/// failure is, after the object's backoff and within the controller's retry budget
/// ([`crate::controller::RETRY_QPS`]), and a watch after the watcher's backoff, so that an API
/// server that asks for less gets less. (client-go resends such a request only when the
/// answer says `Retry-After`, through its rate limiter, up to 10 times.)
pub(crate) fn controllers_client(
    mut config: Config,
    metrics: &Metrics,
    limit: Option<ClientRateLimitLayer>,
) -> anyhow::Result<Client> {
    config.default_retry = false;
    client_with(config, metrics, limit)
}

/// A client of the API server of `config`, with `limit` (none: no limit); its requests are
/// counted in `metrics`, and each but a watch has a deadline ([`REQUEST_TIMEOUT`]).
fn client_with(
    config: Config,
    metrics: &Metrics,
    limit: Option<ClientRateLimitLayer>,
) -> anyhow::Result<Client> {
    let counted = RequestCounterLayer::new(&config, metrics.requests.clone());
    let builder = ClientBuilder::try_from(config)
        .map_err(|error| anyhow!("cannot make a Kubernetes client: {}", error_chain(&error)))?
        .with_layer(&RequestTimeoutLayer::new(REQUEST_TIMEOUT))
        // Outside the deadline, so that a request that ran into it is counted (as `<error>`).
        .with_layer(&counted);
    // Counted as they are sent: after the wait for their turn, which the deadline leaves out.
    Ok(match limit {
        Some(limit) => builder.with_layer(&limit).build(),
        None => builder.build(),
    })
}

/// Connects to the API server, returning its version; the clients' requests are counted in
/// `metrics`. A configuration or connection problem is reported in one line.
async fn connect(metrics: &Metrics, flags: &Flags) -> anyhow::Result<(Clients, String)> {
    const HINT: &str = "is KUBECONFIG set / is the cluster running?";
    let config = Config::infer().await.map_err(|error| {
        anyhow!(
            "cannot load a Kubernetes client configuration: {}; {HINT}",
            error_chain(&error)
        )
    })?;
    let clients = Clients::new(&config, metrics, flags)?;
    let version = clients.manager.apiserver_version().await.map_err(|error| {
        anyhow!(
            "cannot reach the Kubernetes API server: {}; {HINT}",
            error_chain(&error)
        )
    })?;
    Ok((clients, version.git_version))
}

/// How long the controllers (their reconciles under way) and the leader's runnables have to
/// stop once the shutdown began; those still running then are cancelled, as a crash would
/// stop them, and the next leader takes their work up again. Kubernetes kills the Pod 30 s
/// after SIGTERM (`terminationGracePeriodSeconds`' default): this leaves time to release the
/// Lease (at most 15 s: a renewal under way, then the release, each request bounded), so that
/// another replica takes over at once rather than after the Lease expires. controller-runtime
/// waits 30 s (`GracefulShutdownTimeout`) and releases the Lease after, which a reconcile that
/// does not stop would push past the grace period.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the runnables of every replica, then the servers, have to stop once the Lease is
/// released: the rest of the grace period.
const STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the manager's client waits for the whole answer to a request that is not a watch
/// (see [`RequestTimeoutLayer`]): the API server's own limit (its `--request-timeout`, 60 s by
/// default, after which it answers 504 itself) and a margin, so that only an API server that
/// died, or a connection that was dropped, runs into it. Connecting has kube's 30 s, as
/// client-go's dialer.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(70);

/// The manager's own client of the API server described by `config` (see [`Clients`]),
/// without a rate limit; its requests are counted in `metrics`.
pub(crate) fn client(config: Config, metrics: &Metrics) -> anyhow::Result<Client> {
    client_with(config, metrics, None)
}

/// The error of a controller that could not start, with a hint for the usual causes.
fn start_error(controller: &str, error: &kube::Error) -> anyhow::Error {
    anyhow!(
        "controller {controller} cannot start: its kind could not be listed for {:?}: {}",
        crate::controller::START_TIMEOUT,
        crate::controller::start_hint(error)
    )
}

/// Cancels `shutdown` on SIGTERM (sent by Kubernetes) or SIGINT (Ctrl-C). A second signal exits
/// at once, in case a reconcile hangs.
fn cancel_on_signal(shutdown: CancellationToken) -> anyhow::Result<()> {
    let mut sigterm = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
    let mut sigint = signal(SignalKind::interrupt()).context("cannot handle SIGINT")?;
    tokio::spawn(async move {
        tokio::select! {
            _ = sigterm.recv() => {}
            _ = sigint.recv() => {}
        }
        info!("shutting down: waiting for running reconciles (signal again to exit now)");
        shutdown.cancel();
        tokio::select! {
            _ = sigterm.recv() => {}
            _ = sigint.recv() => {}
        }
        std::process::exit(1);
    });
    Ok(())
}

/// `/metrics`, in the Prometheus text format.
async fn serve_metrics(State(registry): State<Arc<Registry>>) -> Response {
    let mut body = String::new();
    match prometheus_text::encode(&mut body, &registry) {
        Ok(()) => (
            [(header::CONTENT_TYPE, prometheus_text::CONTENT_TYPE)],
            body,
        )
            .into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// Waits until `shutdown` (which a failure cancels too), then until every task has stopped,
/// for `limit` at most: those still running then are cancelled (at their next `await`), and
/// the result is `false`.
async fn wait_until_stopped(
    tasks: &mut JoinSet<()>,
    shutdown: &CancellationToken,
    limit: Duration,
) -> bool {
    // Tasks that end before (runnables that are done) are collected meanwhile. With no
    // controller registered (yet), and every runnable finished, run until asked to stop.
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            joined = tasks.join_next() => if joined.is_none() {
                shutdown.cancelled().await;
                break;
            },
        }
    }
    let all = async { while tasks.join_next().await.is_some() {} };
    if timeout(limit, all).await.is_ok() {
        return true;
    }
    warn!(
        tasks = tasks.len(),
        "still running {limit:?} after the shutdown: cancelled"
    );
    tasks.shutdown().await;
    false
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::time::{Duration, Instant};

    use futures::StreamExt;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::Api;
    use kube::api::WatchParams;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;
    use tokio::time::timeout;

    use super::*;
    use clap::Args;

    static FLAGGED: Operator = Operator::new("flagged");

    /// Flags of an operator's own, as docs/extending.md adds one.
    #[derive(clap::Args, Debug)]
    struct Settings {
        #[arg(long, default_value = "IfNotPresent")]
        image_pull_policy: String,
    }

    /// One named as a manager's flag.
    #[derive(clap::Args, Debug)]
    struct Clashing {
        #[arg(long)]
        leader_elect: bool,
    }

    #[test]
    fn flags_of_ones_own_share_the_managers_command_line() {
        let command = Settings::augment_args(Flags::command_for(&FLAGGED));
        command.clone().debug_assert();
        let matches = command.get_matches_from(["flagged", "--image-pull-policy", "Always"]);
        let flags = Flags::from_arg_matches(&matches).expect("the manager's flags");
        let settings = Settings::from_arg_matches(&matches).expect("the settings");
        assert_eq!(settings.image_pull_policy, "Always");
        assert!(!flags.leader_elect);
    }

    /// A flag of one's own named as one of the manager's is refused when the command is built,
    /// not parsed as one or the other.
    #[test]
    #[should_panic(expected = "leader_elect")]
    fn a_flag_named_as_the_managers_is_refused() {
        Clashing::augment_args(Flags::command_for(&FLAGGED)).debug_assert();
    }

    /// An API server at the returned address that answers every request with `status` and a
    /// Status body; counts the requests.
    async fn api_server(status: u16) -> (std::net::SocketAddr, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let address = listener.local_addr().expect("its address");
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&requests);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let counted = Arc::clone(&counted);
                tokio::spawn(async move {
                    let reason = if status == 404 {
                        "NotFound"
                    } else {
                        "TooManyRequests"
                    };
                    let body = format!(
                        r#"{{"kind":"Status","apiVersion":"v1","status":"Failure","code":{status},"reason":"{reason}"}}"#
                    );
                    let answer = format!(
                        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n\
                         Retry-After: 1\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    let mut request = Vec::new();
                    let mut buffer = [0; 4096];
                    // Each request (a GET: headers alone), on a kept-alive connection.
                    while let Ok(read @ 1..) = stream.read(&mut buffer).await {
                        request.extend_from_slice(&buffer[..read]);
                        while let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                            request.drain(..end + 4);
                            counted.fetch_add(1, Ordering::Relaxed);
                            if stream.write_all(answer.as_bytes()).await.is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        (address, requests)
    }

    fn config_of(address: std::net::SocketAddr) -> Config {
        Config::new(format!("http://{address}").parse().expect("a URL"))
    }

    /// An API server that answers 429 asks for less: the controllers' client does not send
    /// the request again by itself (kube's default resends it up to 15 times); the reconcile
    /// fails and is retried within the controller's limits.
    #[tokio::test]
    async fn the_controllers_client_does_not_resend_a_request_answered_429() {
        let (address, requests) = api_server(429).await;
        let client = controllers_client(config_of(address), &Metrics::default(), None);
        let configmaps: Api<ConfigMap> = Api::default_namespaced(client.expect("a client"));
        let answer = tokio::time::timeout(Duration::from_secs(60), configmaps.get("x")).await;
        answer.expect("an answer").expect_err("429");
        assert_eq!(requests.load(Ordering::Relaxed), 1);
    }

    /// By default the controllers' requests are not paced on the client, as controller-runtime
    /// v0.25 leaves them: the API server's Priority and Fairness does it.
    #[test]
    fn no_client_side_limit_by_default() {
        let flags = Flags::parse_from(["manager"]);
        assert_eq!(flags.kube_api_qps, 0.0);
        assert!(ClientRateLimitLayer::new(flags.kube_api_qps, flags.kube_api_burst).is_none());
    }

    /// The controllers' requests wait for their turn past --kube-api-burst; the manager's own
    /// (the Lease) do not wait behind them.
    #[tokio::test]
    async fn the_controllers_requests_are_paced_and_the_managers_are_not() {
        let (address, requests) = api_server(404).await;
        let flags = Flags::parse_from(["manager", "--kube-api-qps=20", "--kube-api-burst=5"]);
        let clients = Clients::new(&config_of(address), &Metrics::default(), &flags);
        let clients = clients.expect("the clients");
        let get_all = |client: Client| async move {
            let configmaps: Api<ConfigMap> = Api::default_namespaced(client);
            let started = Instant::now();
            let gets = (0..15).map(|n| {
                let configmaps = configmaps.clone();
                async move { configmaps.get_opt(&format!("c{n}")).await }
            });
            for got in futures::future::join_all(gets).await {
                got.expect("answered 404");
            }
            started.elapsed()
        };
        // 5 at once, then 10 at 20 a second: 0.5 s at least.
        let paced = get_all(clients.controllers.clone()).await;
        assert!(paced >= Duration::from_millis(450), "{paced:?}");
        // The controllers' bucket is empty now: the manager's requests do not wait for it.
        let own = get_all(clients.manager.clone()).await;
        assert!(own < paced, "{own:?} (the controllers': {paced:?})");
        assert_eq!(requests.load(Ordering::Relaxed), 30);
    }

    /// An API server at the returned address that accepts connections, writes `answer` on
    /// each, and then never writes anything again: one that hangs, or a watch with no events.
    async fn hanging_api_server(answer: &'static str) -> std::net::SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let address = listener.local_addr().expect("its address");
        tokio::spawn(async move {
            let mut held: Vec<TcpStream> = Vec::new();
            while let Ok((mut stream, _)) = listener.accept().await {
                // The request first (a GET: its headers alone).
                let mut request = Vec::new();
                let mut buffer = [0; 1024];
                while !request.windows(4).any(|end| end == b"\r\n\r\n") {
                    match stream.read(&mut buffer).await {
                        Ok(0) | Err(_) => break,
                        Ok(read) => request.extend_from_slice(&buffer[..read]),
                    }
                }
                let _ = stream.write_all(answer.as_bytes()).await;
                held.push(stream);
            }
        });
        address
    }

    /// The manager's client of the API server at `address`.
    fn client_of(address: std::net::SocketAddr) -> Client {
        let url = format!("http://{address}").parse().expect("a URL");
        client(Config::new(url), &Metrics::default()).expect("a client")
    }

    /// A request the API server accepted and never answers fails by itself, instead of
    /// holding its reconcile (and with it that object) for ever.
    #[tokio::test(start_paused = true)]
    async fn a_request_that_is_never_answered_fails() {
        let configs: Api<ConfigMap> =
            Api::default_namespaced(client_of(hanging_api_server("").await));
        let answered = timeout(Duration::from_secs(3600), configs.get("any")).await;
        let answered = answered.expect("the request to give up by itself");
        let error = answered.expect_err("no answer came");
        assert!(
            error_chain(&error).contains("no answer"),
            "{}",
            error_chain(&error)
        );
    }

    /// A response whose body stops half-way fails too.
    #[tokio::test(start_paused = true)]
    async fn a_response_that_stalls_half_way_fails() {
        let half = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                    Content-Length: 100\r\n\r\n{\"kind\": \"ConfigMap\",";
        let configs: Api<ConfigMap> =
            Api::default_namespaced(client_of(hanging_api_server(half).await));
        let answered = timeout(Duration::from_secs(3600), configs.get("any")).await;
        let answered = answered.expect("the request to give up by itself");
        let error = answered.expect_err("half an answer came");
        assert!(
            error_chain(&error).contains("no answer"),
            "{}",
            error_chain(&error)
        );
    }

    /// A watch stays open while no event comes: the API server ends it (after the
    /// timeoutSeconds kube sends), and kube's watcher has an idle timeout of its own.
    #[tokio::test(start_paused = true)]
    async fn a_watch_without_events_is_not_cut() {
        let headers = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                       Transfer-Encoding: chunked\r\n\r\n";
        let configs: Api<ConfigMap> =
            Api::default_namespaced(client_of(hanging_api_server(headers).await));
        let watch = configs.watch(&WatchParams::default(), "0").await;
        let mut events = watch.expect("the watch starts").boxed();
        let next = timeout(Duration::from_secs(280), events.next()).await;
        assert!(next.is_err(), "the watch ended: {next:?}");
    }

    #[test]
    fn flags_are_consistent() {
        Flags::command().debug_assert();
    }

    #[test]
    fn metrics_are_secure_by_default() {
        let flags = Flags::parse_from(["manager"]);
        assert!(flags.metrics_secure);
        assert!(!Flags::parse_from(["manager", "--metrics-secure=false"]).metrics_secure);
        let flags = Flags::parse_from(["manager", "--metrics-cert-path", "/certs"]);
        assert_eq!(flags.metrics_cert_path, Some(PathBuf::from("/certs")));
        assert_eq!(
            (
                flags.metrics_cert_name.as_str(),
                flags.metrics_cert_key.as_str()
            ),
            ("tls.crt", "tls.key")
        );
    }

    #[tokio::test]
    async fn not_ready_until_the_webhook_server_serves() {
        let started = Arc::new(AtomicBool::new(false));
        let (status, _) = readyz(Arc::clone(&started)).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        started.store(true, Ordering::Relaxed);
        assert_eq!(readyz(started).await, (StatusCode::OK, "ok"));
    }

    #[test]
    fn webhooks_are_served_unless_disabled() {
        assert!(Flags::parse_from(["manager"]).enable_webhooks);
        assert!(!Flags::parse_from(["manager", "--enable-webhooks=false"]).enable_webhooks);
    }

    #[test]
    fn by_default_nothing_listens_beyond_this_machine() {
        let flags = Flags::parse_from(["manager"]);
        for address in [
            flags.metrics_bind_address,
            flags.health_probe_bind_address,
            flags.webhook_bind_address,
        ] {
            match address {
                BindAddress::Host(address) => assert!(address.ip().is_loopback(), "{address}"),
                other => panic!("{other:?} is not loopback"),
            }
        }
    }
}

/// The project's own parts of the manager: when they stop, what their failure does, and their
/// metrics on /metrics. (No API server: nothing here sends it a request.)
#[cfg(test)]
mod extension_tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use prometheus_client::metrics::counter::Counter;
    use tokio::time::{sleep, timeout};

    use k8s_openapi::api::coordination::v1::Lease;
    use kube::Api;
    use kube::api::PostParams;
    use serde_json::json;

    use super::*;
    use crate::e2e::{free_local_address, http_get};
    use crate::envtest::{ControlPlane, NAMESPACE};
    use crate::testing::mock_client;

    static NOTHING: Operator = Operator::new("extended");

    /// What happened, in order.
    type Log = Arc<Mutex<Vec<&'static str>>>;

    fn note(log: &Log, what: &'static str) {
        log.lock().expect("the log").push(what);
    }

    /// A manager with plain-HTTP metrics on a free port, and nothing else listening.
    fn flags() -> (Flags, std::net::SocketAddr) {
        let metrics = free_local_address();
        let flags = Flags::parse_from([
            "manager".to_owned(),
            format!("--metrics-bind-address={metrics}"),
            "--metrics-secure=false".to_owned(),
            "--health-probe-bind-address=0".to_owned(),
            "--webhook-bind-address=0".to_owned(),
        ]);
        (flags, metrics)
    }

    /// On shutdown the leader's runnables stop first, then those of every replica, while the
    /// servers still serve: the last runnable reads /metrics, with the project's own metric.
    #[tokio::test]
    async fn runnables_stop_in_order_before_the_servers() {
        let log = Log::default();
        let (flags, metrics_address) = flags();
        let reports = Counter::<u64>::default();
        reports.inc();
        let leader_log = Arc::clone(&log);
        let leader = Runnable::new("leader", move |_, shutdown: CancellationToken| async move {
            shutdown.cancelled().await;
            // The manager waits for a runnable that takes its time to stop.
            sleep(Duration::from_millis(200)).await;
            note(&leader_log, "the leader's runnable stopped");
            Ok::<(), std::io::Error>(())
        });
        let replica_log = Arc::clone(&log);
        let replica = Runnable::new(
            "replica",
            move |_, shutdown: CancellationToken| async move {
                note(&replica_log, "the replica's runnable started");
                shutdown.cancelled().await;
                note(&replica_log, "the replica's runnable was told to stop");
                let scraped = http_get(metrics_address, "/metrics").await?;
                if !scraped.contains("extended_reports_total 1\n") {
                    return Err(format!("no extended_reports_total in\n{scraped}"));
                }
                note(&replica_log, "the replica's runnable read /metrics");
                Ok(())
            },
        )
        .on_every_replica();
        let extensions = Extensions {
            runnables: vec![leader, replica],
            metrics: vec![Box::new(move |registry: &mut Registry| {
                registry.register("extended_reports", "Reports", reports);
            })],
            states: States::default(),
        };

        let (client, _server) = mock_client();
        let shutdown = CancellationToken::new();
        let manager = manage_until(
            &NOTHING,
            flags,
            client,
            Metrics::default(),
            extensions,
            shutdown.clone(),
        );
        let manager = tokio::spawn(manager);
        let started = async {
            while log.lock().expect("the log").is_empty() {
                sleep(Duration::from_millis(10)).await;
            }
        };
        timeout(Duration::from_secs(10), started)
            .await
            .expect("the runnables to start");
        shutdown.cancel();
        let stopped = timeout(Duration::from_secs(10), manager).await;
        let result = stopped.expect("the manager to stop").expect("its task");
        result.expect("the manager stops without an error");
        assert_eq!(
            *log.lock().expect("the log"),
            [
                "the replica's runnable started",
                "the leader's runnable stopped",
                "the replica's runnable was told to stop",
                "the replica's runnable read /metrics",
            ]
        );
    }

    /// Two controllers of one name (kubebuilder's multigroup projects name them `<group>-<kind>`
    /// so that one kind name in two groups makes two) are refused before anything starts.
    #[tokio::test]
    async fn controllers_of_one_name_are_refused() {
        use k8s_openapi::api::core::v1::ConfigMap;
        use k8s_openapi::api::rbac::v1::PolicyRule;

        use crate::controller::{Action, Reconciler, register};

        macro_rules! reconciler {
            ($name:ident) => {
                struct $name;
                impl Reconciler for $name {
                    type Resource = ConfigMap;
                    type Error = kube::Error;
                    const NAME: &'static str = "bar";
                    const FINALIZER: Option<&'static str> = None;
                    async fn apply(
                        _: Arc<ConfigMap>,
                        _: Arc<Context>,
                    ) -> Result<Action, kube::Error> {
                        Ok(Action::await_change())
                    }
                    async fn cleanup(
                        _: Arc<ConfigMap>,
                        _: Arc<Context>,
                    ) -> Result<Action, kube::Error> {
                        Ok(Action::await_change())
                    }
                    fn rbac_rules() -> Vec<PolicyRule> {
                        Vec::new()
                    }
                }
            };
        }
        reconciler!(FooBar);
        reconciler!(FizBar);
        static TWO_BARS: Operator =
            Operator::new("two-bars").controllers(&[register::<FooBar>(), register::<FizBar>()]);

        let (flags, _) = flags();
        let (client, _server) = mock_client();
        let result = manage_until(
            &TWO_BARS,
            flags,
            client,
            Metrics::default(),
            Extensions::default(),
            CancellationToken::new(),
        );
        let error = timeout(Duration::from_secs(10), result)
            .await
            .expect("the manager to stop at once")
            .expect_err("two controllers named bar");
        assert!(
            error
                .to_string()
                .contains("two controllers are named 'bar'"),
            "{error:#}"
        );
    }

    /// A runnable's error stops the manager in order, as SIGTERM does, and is what it exits
    /// with.
    #[tokio::test]
    async fn a_failing_runnable_stops_the_manager_with_its_error() {
        let log = Log::default();
        let (flags, _) = flags();
        let leader_log = Arc::clone(&log);
        let leader = Runnable::new("leader", move |_, shutdown: CancellationToken| async move {
            shutdown.cancelled().await;
            note(&leader_log, "the leader's runnable stopped");
            Ok::<(), std::io::Error>(())
        });
        let failing = Runnable::new("failing", |_, _| async {
            sleep(Duration::from_millis(100)).await;
            Err(std::io::Error::other("the disk is full"))
        })
        .on_every_replica();
        let finished = Runnable::new("finished", |_, _| async { Ok::<(), std::io::Error>(()) });
        let extensions = Extensions {
            runnables: vec![leader, failing, finished],
            metrics: Vec::new(),
            states: States::default(),
        };

        let (client, _server) = mock_client();
        let manager = manage_until(
            &NOTHING,
            flags,
            client,
            Metrics::default(),
            extensions,
            CancellationToken::new(),
        );
        let stopped = timeout(Duration::from_secs(10), manager).await;
        let error = stopped
            .expect("the manager to stop")
            .expect_err("a failure");
        assert_eq!(
            error.to_string(),
            "runnable failing failed: the disk is full"
        );
        assert_eq!(
            *log.lock().expect("the log"),
            ["the leader's runnable stopped"]
        );
    }

    /// Plays the API server for the Lease alone, as it stores it: until the client is
    /// gone, then returns every write of the Lease.
    async fn lease_store(mut server: crate::testing::ApiServer) -> Vec<serde_json::Value> {
        use crate::testing::{Method, status_error};

        let mut stored: Option<serde_json::Value> = None;
        let mut writes = Vec::new();
        loop {
            let current = stored.clone();
            let answer =
                move |method: &Method, _: &str, body: &serde_json::Value| match (method, current) {
                    (&Method::GET, Some(lease)) => (200, lease),
                    (&Method::GET, None) => (404, status_error(404, "NotFound")),
                    _ => (200, body.clone()),
                };
            let within = Duration::from_secs(3600);
            let Some((method, body)) = server.try_answer(within, answer).await else {
                return writes;
            };
            if method != Method::GET {
                stored = Some(body.clone());
                writes.push(body);
            }
        }
    }

    /// On SIGTERM, a reconcile or runnable of the leader that does not stop keeps neither the
    /// manager nor its Lease beyond the Pod's grace period (30 s by default, then SIGKILL):
    /// the Lease is released within it, so that another replica takes over at once.
    #[tokio::test(start_paused = true)]
    async fn a_leader_that_does_not_stop_still_releases_the_lease_within_the_grace_period() {
        let started = Arc::new(tokio::sync::Notify::new());
        let notify = Arc::clone(&started);
        let stuck = Runnable::new("stuck", move |_, _| async move {
            notify.notify_one();
            // Ignores the shutdown, as a reconcile waiting for an answer that never comes.
            std::future::pending::<()>().await;
            Ok::<(), std::io::Error>(())
        });
        let extensions = Extensions {
            runnables: vec![stuck],
            metrics: Vec::new(),
            states: States::default(),
        };
        let flags = Flags::parse_from([
            "manager",
            "--leader-elect",
            "--metrics-bind-address=0",
            "--health-probe-bind-address=0",
        ]);
        let (client, server) = mock_client();
        let store = tokio::spawn(lease_store(server));
        let shutdown = CancellationToken::new();
        let manager = tokio::spawn(manage_until(
            &NOTHING,
            flags,
            client,
            Metrics::default(),
            extensions,
            shutdown.clone(),
        ));
        started.notified().await;
        shutdown.cancel();
        let signalled = tokio::time::Instant::now();
        let stopped = timeout(Duration::from_secs(3600), manager).await;
        let stopped_after = signalled.elapsed();
        let result = stopped.expect("the manager to stop").expect("its task");
        assert!(stopped_after < Duration::from_secs(30), "{stopped_after:?}");
        let error = result.expect_err("what did not stop is the manager's error");
        assert!(error.to_string().contains("did not stop within"), "{error}");
        let writes = store.await.expect("the Lease's API server");
        let last = writes.last().expect("the Lease was written");
        assert_eq!(
            last["spec"]["holderIdentity"],
            serde_json::Value::Null,
            "not released"
        );
    }

    /// Who holds the Lease of [`NOTHING`]'s manager, as `ctx` reads it.
    async fn lease_holder(ctx: &Context) -> Result<String, kube::Error> {
        let leases: Api<Lease> = Api::namespaced(ctx.client.clone(), NAMESPACE);
        let lease = leases.get("extended-leader-election").await?;
        let holder = lease.spec.and_then(|spec| spec.holder_identity);
        Ok(match holder.as_deref() {
            None | Some("") => "nobody".to_owned(),
            Some("another") => "another".to_owned(),
            Some(_) => "this manager".to_owned(),
        })
    }

    /// With --leader-elect, on a real API server: the runnables of every replica run while
    /// another instance holds the Lease, the leader's only once this manager holds it; on
    /// shutdown the leader's stop while it still holds the Lease, and those of every replica
    /// once it has released it.
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn the_leaders_runnables_run_while_it_holds_the_lease() {
        let plane = ControlPlane::start().await.expect("a control plane");
        let client = plane.client().await.expect("a client");
        // Another instance's Lease, which expires 3 s after the manager first sees it.
        let lease = json!({
            "metadata": {"name": "extended-leader-election"},
            "spec": {"holderIdentity": "another", "leaseDurationSeconds": 3},
        });
        let lease: Lease = serde_json::from_value(lease).expect("a Lease");
        let leases: Api<Lease> = Api::namespaced(client.clone(), NAMESPACE);
        let created = leases.create(&PostParams::default(), &lease).await;
        created.expect("another instance's Lease");

        let log = Arc::new(Mutex::new(Vec::<String>::new()));
        let leader_log = Arc::clone(&log);
        let leader = Runnable::new(
            "leader",
            move |ctx: Arc<Context>, shutdown: CancellationToken| async move {
                leader_log
                    .lock()
                    .expect("the log")
                    .push("the leader's runnable started".into());
                shutdown.cancelled().await;
                let holder = lease_holder(&ctx).await?;
                let stopping = format!("the leader's runnable stops, the Lease held by {holder}");
                leader_log.lock().expect("the log").push(stopping);
                Ok::<(), kube::Error>(())
            },
        );
        let replica_log = Arc::clone(&log);
        let replica = Runnable::new(
            "replica",
            move |ctx: Arc<Context>, shutdown: CancellationToken| async move {
                replica_log
                    .lock()
                    .expect("the log")
                    .push("the replica's runnable started".into());
                shutdown.cancelled().await;
                let holder = lease_holder(&ctx).await?;
                let stopping = format!("the replica's runnable stops, the Lease held by {holder}");
                replica_log.lock().expect("the log").push(stopping);
                Ok::<(), kube::Error>(())
            },
        )
        .on_every_replica();
        let extensions = Extensions {
            runnables: vec![leader, replica],
            metrics: Vec::new(),
            states: States::default(),
        };
        let flags = Flags::parse_from([
            "manager",
            "--leader-elect",
            "--metrics-bind-address=0",
            "--health-probe-bind-address=0",
        ]);
        let shutdown = CancellationToken::new();
        let manager = manage_until(
            &NOTHING,
            flags,
            client,
            Metrics::default(),
            extensions,
            shutdown.clone(),
        );
        let manager = tokio::spawn(manager);

        let logged = |count: usize| {
            let log = Arc::clone(&log);
            async move {
                while log.lock().expect("the log").len() < count {
                    sleep(Duration::from_millis(50)).await;
                }
            }
        };
        let started = timeout(Duration::from_secs(10), logged(1)).await;
        started.expect("the replica's runnable to start");
        assert_eq!(
            *log.lock().expect("the log"),
            ["the replica's runnable started"],
            "while another instance holds the Lease"
        );
        let elected = timeout(Duration::from_secs(30), logged(2)).await;
        elected.expect("the leader's runnable to start once the Lease expired");
        shutdown.cancel();
        let stopped = timeout(Duration::from_secs(30), manager).await;
        let result = stopped.expect("the manager to stop").expect("its task");
        result.expect("the manager stops without an error");
        assert_eq!(
            *log.lock().expect("the log"),
            [
                "the replica's runnable started",
                "the leader's runnable started",
                "the leader's runnable stops, the Lease held by this manager",
                "the replica's runnable stops, the Lease held by nobody",
            ]
        );
    }
}

/// The manager against a real API server (envtest): what it stops first.
#[cfg(test)]
mod shutdown_tests {
    use std::time::Duration;

    use k8s_openapi::api::rbac::v1::PolicyRule;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::api::{DeleteParams, PostParams};
    use kube::core::crd::MergeError;
    use kube::{Api, CustomResourceExt, ResourceExt};
    use tokio::sync::Notify;
    use tokio::time::{sleep, timeout};

    use super::*;
    use crate::controller::Action;
    use crate::envtest::{ControlPlane, webhooks};
    use crate::webhook::{Denied, Validator, Warnings, validating};
    use crate::{Reconciler, register};

    #[derive(
        kube::CustomResource,
        schemars::JsonSchema,
        serde::Serialize,
        serde::Deserialize,
        Clone,
        Debug,
    )]
    #[kube(group = "shutdown.rbuilder.io", version = "v1", kind = "Crate")]
    pub struct CrateSpec {
        pub size: i64,
    }

    /// Refuses a negative size, in creations and updates (a finalizer's removal too).
    struct SizeCheck;

    impl Validator for SizeCheck {
        type Resource = Crate;

        fn validate_create(obj: &Crate) -> Result<Warnings, Denied> {
            if obj.spec.size < 0 {
                return Err(Denied::new("the size must not be negative"));
            }
            Ok(Warnings::new())
        }

        fn validate_update(_old: &Crate, new: &Crate) -> Result<Warnings, Denied> {
            Self::validate_create(new)
        }
    }

    static CLEANUP_STARTED: Notify = Notify::const_new();
    static CLEANUP_MAY_END: Notify = Notify::const_new();

    /// Holds a finalizer, and cleans up only when the test lets it.
    struct Slow;

    impl Reconciler for Slow {
        type Resource = Crate;
        type Error = kube::Error;
        const NAME: &'static str = "slow";
        const FINALIZER: Option<&'static str> = Some("shutdown.rbuilder.io/finalizer");

        async fn apply(_obj: Arc<Crate>, _ctx: Arc<Context>) -> Result<Action, kube::Error> {
            Ok(Action::await_change())
        }

        async fn cleanup(_obj: Arc<Crate>, _ctx: Arc<Context>) -> Result<Action, kube::Error> {
            CLEANUP_STARTED.notify_one();
            CLEANUP_MAY_END.notified().await;
            Ok(Action::await_change())
        }

        fn rbac_rules() -> Vec<PolicyRule> {
            Vec::new()
        }
    }

    fn crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
        Ok(vec![Crate::crd()])
    }

    static OPERATOR: Operator = Operator::new("shutdown")
        .controllers(&[register::<Slow>()])
        .webhooks(&[validating::<SizeCheck>()])
        .crds(crds);

    fn crate_of_size(name: &str, size: i64) -> Crate {
        Crate::new(name, CrateSpec { size })
    }

    /// On SIGTERM the webhooks are served until the reconciles under way have finished: the
    /// last one removes a finalizer, an update the API server sends the validating webhook.
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn webhooks_serve_until_the_reconciles_have_drained() {
        let plane = ControlPlane::start().await.expect("a control plane");
        let client = plane.client().await.expect("a client");
        // The manager's webhook certificate, from the CA the API server is told to trust.
        let certs = plane.dir().join("manager-certs");
        std::fs::create_dir(&certs).expect("a folder");
        let pem = plane.ca().server("manager").expect("a certificate");
        std::fs::write(certs.join("tls.crt"), pem.cert).expect("write tls.crt");
        std::fs::write(certs.join("tls.key"), pem.key).expect("write tls.key");
        let port = crate::e2e::free_local_address().port();
        let base_url = format!("https://127.0.0.1:{port}");
        let ca = plane.ca().cert.clone();
        webhooks::install_crds(&client, &OPERATOR, Some(&base_url), &ca)
            .await
            .expect("the CRD");
        let namespace = webhooks::ManagerNamespace::Named("default");
        webhooks::install_configurations(&client, &OPERATOR, &base_url, &ca, namespace)
            .await
            .expect("the webhook configuration");

        let flags = Flags::parse_from([
            "manager",
            "--metrics-bind-address=0",
            "--health-probe-bind-address=0",
            &format!("--webhook-bind-address=127.0.0.1:{port}"),
            "--webhook-cert-path",
            &certs.display().to_string(),
        ]);
        let shutdown = CancellationToken::new();
        let metrics = Metrics::default();
        let extensions = Extensions::default();
        let manager = manage_until(
            &OPERATOR,
            flags,
            client.clone(),
            metrics,
            extensions,
            shutdown.clone(),
        );
        let manager = tokio::spawn(manager);

        // The API server calls the manager's webhook, once the configuration has reached it.
        let crates: Api<Crate> = Api::all(client);
        let dry_run = PostParams {
            dry_run: true,
            ..PostParams::default()
        };
        let refused = async {
            loop {
                let attempt = crates
                    .create(&dry_run, &crate_of_size("negative", -1))
                    .await;
                if attempt.is_err_and(|error| error.to_string().contains("denied the request")) {
                    return;
                }
                sleep(Duration::from_millis(100)).await;
            }
        };
        let waited = timeout(Duration::from_secs(30), refused).await;
        waited.expect("the manager's webhook to refuse a negative size");

        let name = "held";
        crates
            .create(&PostParams::default(), &crate_of_size(name, 1))
            .await
            .expect("a crate");
        let finalized = async {
            loop {
                match crates.get(name).await {
                    Ok(obj) if !obj.finalizers().is_empty() => return,
                    _ => sleep(Duration::from_millis(100)).await,
                }
            }
        };
        let waited = timeout(Duration::from_secs(30), finalized).await;
        waited.expect("the controller to add its finalizer");

        crates
            .delete(name, &DeleteParams::default())
            .await
            .expect("the deletion");
        let started = timeout(Duration::from_secs(30), CLEANUP_STARTED.notified()).await;
        started.expect("the cleanup to start");
        // SIGTERM while the cleanup runs; the servers would stop at once.
        shutdown.cancel();
        sleep(Duration::from_secs(1)).await;
        CLEANUP_MAY_END.notify_one();
        let stopped = timeout(Duration::from_secs(30), manager).await;
        let result = stopped.expect("the manager to stop").expect("its task");
        result.expect("the manager stops without an error");
        let left = crates.get_opt(name).await.expect("a read");
        let finalizers = left.map(|obj| obj.finalizers().to_vec());
        assert_eq!(finalizers, None, "the crate kept its finalizer");
    }
}

/// A manager whose conversion webhook is not reachable when it starts: the API server calls it
/// through the webhook Service, which has no endpoint until this very Pod is Ready.
#[cfg(test)]
mod start_tests {
    use std::net::SocketAddr;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use k8s_openapi::api::rbac::v1::PolicyRule;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::api::PostParams;
    use kube::core::crd::MergeError;
    use kube::{Api, CustomResourceExt};
    use tokio::net::{TcpListener, TcpStream};
    use tokio::time::{sleep, timeout};

    use super::*;
    use crate::controller::Action;
    use crate::e2e::free_local_address;
    use crate::envtest::{ControlPlane, NAMESPACE, webhooks};
    use crate::webhook::conversion;
    use crate::{Reconciler, register};

    /// Version v1 of the dials, the storage version.
    mod v1 {
        #[derive(
            kube::CustomResource,
            schemars::JsonSchema,
            serde::Serialize,
            serde::Deserialize,
            Clone,
            Debug,
        )]
        #[kube(group = "start.rbuilder.io", version = "v1", kind = "Dial", namespaced)]
        pub struct DialSpec {
            pub turns: i64,
        }
    }

    /// Version v2, the one the controller reads: the API server converts the stored objects.
    mod v2 {
        #[derive(
            kube::CustomResource,
            schemars::JsonSchema,
            serde::Serialize,
            serde::Deserialize,
            Clone,
            Debug,
        )]
        #[kube(group = "start.rbuilder.io", version = "v2", kind = "Dial", namespaced)]
        pub struct DialSpec {
            pub degrees: i64,
        }
    }

    impl From<v2::Dial> for v1::Dial {
        fn from(dial: v2::Dial) -> Self {
            let spec = v1::DialSpec {
                turns: dial.spec.degrees / 360,
            };
            Self {
                metadata: dial.metadata,
                spec,
            }
        }
    }

    impl From<v1::Dial> for v2::Dial {
        fn from(dial: v1::Dial) -> Self {
            let spec = v2::DialSpec {
                degrees: dial.spec.turns * 360,
            };
            Self {
                metadata: dial.metadata,
                spec,
            }
        }
    }

    /// How many times [`Turner`] has reconciled a dial.
    static RECONCILED: AtomicUsize = AtomicUsize::new(0);

    /// Reads the dials in v2.
    struct Turner;

    impl Reconciler for Turner {
        type Resource = v2::Dial;
        type Error = kube::Error;
        const NAME: &'static str = "turner";
        const FINALIZER: Option<&'static str> = None;

        async fn apply(_obj: Arc<v2::Dial>, _ctx: Arc<Context>) -> Result<Action, kube::Error> {
            RECONCILED.fetch_add(1, Ordering::Relaxed);
            Ok(Action::await_change())
        }

        fn rbac_rules() -> Vec<PolicyRule> {
            Vec::new()
        }
    }

    fn crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
        crate::crd::merge_versions(vec![v1::Dial::crd(), v2::Dial::crd()])
    }

    static OPERATOR: Operator = Operator::new("dials")
        .controllers(&[register::<Turner>()])
        .webhooks(&[conversion::<v1::Dial, v2::Dial>()])
        .crds(crds);

    /// Forwards what `listener` accepts to `to`, as a Service forwards to its endpoints.
    async fn forward(listener: TcpListener, to: SocketAddr) {
        while let Ok((mut inbound, _)) = listener.accept().await {
            tokio::spawn(async move {
                if let Ok(mut outbound) = TcpStream::connect(to).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    }

    /// The manager keeps trying to list its kind while its own conversion webhook cannot be
    /// reached (as controller-runtime's informer retries until its cache sync timeout), and
    /// reconciles once it can.
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn a_conversion_webhook_reachable_only_later_does_not_stop_the_manager() {
        let plane = ControlPlane::start().await.expect("a control plane");
        let client = plane.client().await.expect("a client");
        let certs = plane.dir().join("manager-certs");
        std::fs::create_dir(&certs).expect("a folder");
        let pem = plane.ca().server("manager").expect("a certificate");
        std::fs::write(certs.join("tls.crt"), pem.cert).expect("write tls.crt");
        std::fs::write(certs.join("tls.key"), pem.key).expect("write tls.key");
        // The manager serves its webhooks on one port; the API server calls them through
        // another (the Service), where nothing listens yet.
        let (served, service) = (free_local_address(), free_local_address());
        let service_url = format!("https://{service}");
        let ca = plane.ca().cert.clone();
        webhooks::install_crds(&client, &OPERATOR, Some(&service_url), &ca)
            .await
            .expect("the CRD");
        let dials: Api<v1::Dial> = Api::namespaced(client.clone(), NAMESPACE);
        let dial = v1::Dial::new("stored-in-v1", v1::DialSpec { turns: 2 });
        let created = dials.create(&PostParams::default(), &dial).await;
        created.expect("a dial, stored in v1");

        let flags = Flags::parse_from([
            "manager".to_owned(),
            "--metrics-bind-address=0".to_owned(),
            "--health-probe-bind-address=0".to_owned(),
            format!("--webhook-bind-address={served}"),
            format!("--webhook-cert-path={}", certs.display()),
        ]);
        let shutdown = CancellationToken::new();
        let manager = manage_until(
            &OPERATOR,
            flags,
            client,
            Metrics::default(),
            Extensions::default(),
            shutdown.clone(),
        );
        let manager = tokio::spawn(manager);

        // Until the Pod is Ready, and its Service has an endpoint.
        sleep(Duration::from_secs(5)).await;
        if manager.is_finished() {
            let result = manager.await.expect("the manager's task");
            panic!("the manager stopped before its webhook was reachable: {result:?}");
        }
        let listener = TcpListener::bind(service)
            .await
            .expect("the Service's port");
        tokio::spawn(forward(listener, served));

        let reconciled = async {
            while RECONCILED.load(Ordering::Relaxed) == 0 {
                sleep(Duration::from_millis(100)).await;
            }
        };
        let waited = timeout(Duration::from_secs(60), reconciled).await;
        waited.expect("the dial to be reconciled once the webhook is reachable");
        shutdown.cancel();
        let stopped = timeout(Duration::from_secs(30), manager).await;
        let result = stopped.expect("the manager to stop").expect("its task");
        result.expect("the manager stops without an error");
    }
}
