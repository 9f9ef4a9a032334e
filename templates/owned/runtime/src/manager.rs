//! The manager: the operator binary's `main`. It reads the flags, connects to the API server,
//! serves the health probes and the metrics, waits for leadership if asked to, runs every
//! controller, and on SIGTERM stops them (letting reconciles under way finish) and releases
//! the Lease.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, anyhow, bail};
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use clap::{CommandFactory, FromArgMatches, Parser, ValueEnum};
use kube::Client;
use prometheus_client::encoding::prometheus_text;
use prometheus_client::registry::Registry;
use tokio::signal::unix::{SignalKind, signal};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::info;
use tracing_subscriber::EnvFilter;

use crate::leader_election::LeaderElection;
use crate::serve::{self, BindAddress};
use crate::{Context, Operator, WatchScope, error_chain};

/// The manager's flags: those of kubebuilder projects.
#[derive(Parser, Debug)]
pub struct Flags {
    /// Address the /metrics endpoint binds to: "[host]:port" (":8080" is every interface, IPv6
    /// and IPv4), or "0" to disable it. The default is loopback only, for `make run` on a
    /// workstation; config/manager passes ":8080" in the cluster.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub metrics_bind_address: BindAddress,

    /// Address the /healthz and /readyz probes bind to: "[host]:port", or "0" to disable them.
    /// The default is loopback only; config/manager passes ":8081" for the kubelet's probes.
    #[arg(long, default_value = "127.0.0.1:8081")]
    pub health_probe_bind_address: BindAddress,

    /// Run the controllers only while holding the Lease `<name>-leader-election` (in the
    /// POD_NAMESPACE namespace), so that one of several replicas is active at a time.
    #[arg(long)]
    pub leader_elect: bool,

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
        let command = Self::command()
            .name(operator.name)
            .version(operator.version)
            .about(format!(
                "Runs the controllers of the {} operator",
                operator.name
            ));
        Self::from_arg_matches(&command.get_matches()).unwrap_or_else(|error| error.exit())
    }
}

/// Runs `operator` with the flags of the command line until SIGTERM or SIGINT: the whole
/// `main` of a manager.
pub async fn run(operator: &'static Operator) -> ExitCode {
    run_with(operator, Flags::parse_for(operator)).await
}

/// [`run`] with `flags` given, e.g. parsed as part of flags of your own (`#[command(flatten)]`).
pub async fn run_with(operator: &'static Operator, flags: Flags) -> ExitCode {
    // Connect before logging starts: kube's HTTP layer logs failed requests too, and an
    // unreachable cluster should give one clear error line.
    let (client, version) = match connect().await {
        Ok(connected) => connected,
        Err(error) => return fail(&error),
    };
    init_logging(flags.log_format);
    info!(version, "connected to the Kubernetes API server");
    match manage(operator, flags, client).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(&error),
    }
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

async fn manage(operator: &'static Operator, flags: Flags, client: Client) -> anyhow::Result<()> {
    let shutdown = CancellationToken::new();
    cancel_on_signal(shutdown.clone())?;

    let watch_namespace = std::env::var("WATCH_NAMESPACE")
        .ok()
        .filter(|namespace| !namespace.is_empty());
    if operator.scope == WatchScope::Namespace && watch_namespace.is_none() {
        info!("WATCH_NAMESPACE is not set: watching every namespace the credentials can read");
    }
    let ctx = Arc::new(Context::new(
        client.clone(),
        operator.field_manager(),
        watch_namespace,
    ));
    let mut registry = Registry::default();
    ctx.metrics.register(&mut registry);
    for controller in operator.controllers {
        ctx.metrics.init_controller(controller.name);
    }

    // The servers start first: the probes must answer while this instance waits for leadership.
    let mut servers = JoinSet::new();
    let probes = Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(|| async { "ok" }));
    let metrics = Router::new()
        .route("/metrics", get(serve_metrics))
        .with_state(Arc::new(registry));
    for (what, address, router) in [
        ("health probes", &flags.health_probe_bind_address, probes),
        ("metrics", &flags.metrics_bind_address, metrics),
    ] {
        let listener = serve::bind(address)
            .await
            .with_context(|| format!("cannot serve {what} on {address:?}"))?;
        if let Some(listener) = listener {
            servers.spawn(serve::serve(what, listener, router, shutdown.clone()));
        }
    }

    let mut leadership = None;
    if flags.leader_elect {
        let election = leader_election(operator, &client);
        match election.acquire(&shutdown).await {
            Some(acquired) => leadership = Some(acquired),
            None => return Ok(()), // shut down while waiting
        }
    }

    let mut controllers = JoinSet::new();
    for controller in operator.controllers {
        let (ctx, shutdown) = (ctx.clone(), shutdown.clone());
        controllers.spawn(async move {
            (controller.run)(ctx, shutdown)
                .await
                .map_err(|error| start_error(controller.name, &error))
        });
    }
    let lost = async {
        match &mut leadership {
            Some(leadership) => leadership.lost().await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        result = wait_for_controllers(&mut controllers, &shutdown) => result?,
        // As controller-runtime does: another instance may be reconciling already, so this
        // one stops at once, without releasing the Lease.
        () = lost => bail!("lost the leader-election Lease: exiting"),
    }

    if let Some(leadership) = leadership {
        leadership.release().await;
    }
    while let Some(server) = servers.join_next().await {
        server.context("server task failed")??;
    }
    info!("stopped");
    Ok(())
}

/// The election for `operator`'s Lease, in POD_NAMESPACE (set from the downward API in
/// config/manager) or, out of a cluster, the kubeconfig's namespace.
fn leader_election(operator: &Operator, client: &Client) -> LeaderElection {
    let namespace =
        std::env::var("POD_NAMESPACE").unwrap_or_else(|_| client.default_namespace().to_owned());
    // The pod's name (HOSTNAME in a pod) and the process id: unique per instance.
    let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into());
    let identity = format!("{host}-{}", std::process::id());
    let lease = format!("{}-leader-election", operator.name);
    LeaderElection::new(client.clone(), &namespace, lease, identity)
}

/// Connects to the API server, returning its version. A configuration or connection problem is
/// reported in one line.
async fn connect() -> anyhow::Result<(Client, String)> {
    const HINT: &str = "is KUBECONFIG set / is the cluster running?";
    let client = Client::try_default().await.map_err(|error| {
        anyhow!(
            "cannot load a Kubernetes client configuration: {}; {HINT}",
            error_chain(&error)
        )
    })?;
    let version = client.apiserver_version().await.map_err(|error| {
        anyhow!(
            "cannot reach the Kubernetes API server: {}; {HINT}",
            error_chain(&error)
        )
    })?;
    Ok((client, version.git_version))
}

/// The error of a controller that could not start, with a hint for the usual causes.
fn start_error(controller: &str, error: &kube::Error) -> anyhow::Error {
    let reason = match error {
        kube::Error::Api(status) if status.is_not_found() => {
            format!("{}; is its CRD installed (make install)?", status.message)
        }
        kube::Error::Api(status) if status.is_forbidden() => {
            format!(
                "{}; does the manager's role grant it (make manifests)?",
                status.message
            )
        }
        _ => error_chain(error),
    };
    anyhow!("controller {controller} cannot start: {reason}")
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

/// Waits until every controller has stopped (after `shutdown`), or one of them fails.
async fn wait_for_controllers(
    controllers: &mut JoinSet<anyhow::Result<()>>,
    shutdown: &CancellationToken,
) -> anyhow::Result<()> {
    while let Some(stopped) = controllers.join_next().await {
        stopped.context("controller task failed")??;
    }
    // With no controller registered (yet), run until asked to stop.
    shutdown.cancelled().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_consistent() {
        Flags::command().debug_assert();
    }

    #[test]
    fn by_default_nothing_listens_beyond_this_machine() {
        let flags = Flags::parse_from(["manager"]);
        for address in [flags.metrics_bind_address, flags.health_probe_bind_address] {
            match address {
                BindAddress::Host(address) => assert!(address.ip().is_loopback(), "{address}"),
                other => panic!("{other:?} is not loopback"),
            }
        }
    }
}
