// Copyright 2026 The demo-microservice Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The manager: runs the controllers, serves the health probes and the metrics.

use std::io::IsTerminal;
use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, anyhow, bail};
use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use clap::{Parser, ValueEnum};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::Timestamp;
use kube::{Api, Client};
use kube_lease_manager::{LeaseManager, LeaseManagerBuilder};
use prometheus_client::encoding::prometheus_text;
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};
use tracing_subscriber::EnvFilter;

use demo_microservice::controller::CONTROLLERS;
use demo_microservice::metrics::Metrics;
use demo_microservice::{Context, error_chain};

/// The Lease that instances started with `--leader-elect` compete for.
const LEADER_ELECTION_LEASE: &str = "demo-microservice-leader-election";

/// Runs the controllers of the demo-microservice operator.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Address the /metrics endpoint binds to: "[host]:port" (":8080" is every interface), or
    /// "0" to disable it. The default is loopback only, for `make run` on a workstation;
    /// config/manager passes ":8080" in the cluster.
    #[arg(long, default_value = "127.0.0.1:8080", value_parser = parse_bind_address)]
    metrics_bind_address: BindAddress,

    /// Address the /healthz and /readyz probes bind to: "[host]:port", or "0" to disable them.
    /// The default is loopback only; config/manager passes ":8081" for the kubelet's probes.
    #[arg(long, default_value = "127.0.0.1:8081", value_parser = parse_bind_address)]
    health_probe_bind_address: BindAddress,

    /// Run the controllers only while holding the Lease `demo-microservice-leader-election` (in the
    /// POD_NAMESPACE namespace), so that one of several replicas is active at a time.
    #[arg(long)]
    leader_elect: bool,

    /// Log format; the level is set by RUST_LOG (default "info").
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
}

#[derive(Clone, Copy, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// A listen address; `None` when disabled.
#[derive(Clone)]
struct BindAddress(Option<SocketAddr>);

/// Parses a bind address the way the Go flags of kubebuilder projects read it.
fn parse_bind_address(address: &str) -> Result<BindAddress, String> {
    if address == "0" {
        return Ok(BindAddress(None));
    }
    // Go's ":8080" means every interface. 0.0.0.0 rather than [::], which fails where IPv6 is
    // disabled.
    let address = match address.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => address.to_owned(),
    };
    let resolved = address
        .to_socket_addrs()
        .map_err(|error| error.to_string())?;
    resolved
        .into_iter()
        .next()
        .map(|address| BindAddress(Some(address)))
        .ok_or_else(|| format!("{address} resolves to no address"))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    // Connect before logging starts: kube's HTTP layer logs failed requests too, and an
    // unreachable cluster should give one clear error line.
    let (client, version) = match connect().await {
        Ok(connected) => connected,
        Err(error) => return fail(&error),
    };

    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colours only on a terminal: not in `kubectl logs` or a redirected `make run`.
        .with_ansi(std::io::stderr().is_terminal());
    match args.log_format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs.json().init(),
    }
    info!(version, "connected to the Kubernetes API server");

    match run(args, client).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(&error),
    }
}

fn fail(error: &anyhow::Error) -> ExitCode {
    eprintln!("error: {error:#}");
    ExitCode::FAILURE
}

async fn run(args: Args, client: Client) -> anyhow::Result<()> {
    let shutdown = CancellationToken::new();
    cancel_on_signal(shutdown.clone())?;

    let mut registry = Registry::default();
    let metrics = Metrics::default();
    metrics.register(&mut registry);
    for controller in CONTROLLERS {
        metrics.init_controller(controller.name);
    }
    let watch_namespace = std::env::var("WATCH_NAMESPACE")
        .ok()
        .filter(|namespace| !namespace.is_empty());
    let ctx = Arc::new(Context::new(client.clone(), metrics, watch_namespace));

    // The servers start first: the probes must answer while this instance waits for leadership.
    let mut servers = JoinSet::new();
    if let Some(address) = args.health_probe_bind_address.0 {
        let probes = Router::new()
            .route("/healthz", get(|| async { "ok" }))
            .route("/readyz", get(|| async { "ok" }));
        let server = serve("health probes", address, probes, &shutdown).await?;
        servers.spawn(server);
    }
    if let Some(address) = args.metrics_bind_address.0 {
        let metrics = Router::new()
            .route("/metrics", get(serve_metrics))
            .with_state(Arc::new(registry));
        let server = serve("metrics", address, metrics, &shutdown).await?;
        servers.spawn(server);
    }

    let mut leadership = None;
    if args.leader_elect {
        match Leadership::acquire(&client, &shutdown).await? {
            Some(acquired) => leadership = Some(acquired),
            None => return Ok(()), // shut down while waiting
        }
    }

    let mut controllers = JoinSet::new();
    for controller in CONTROLLERS {
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
        // As controller-runtime does: another instance may be reconciling already.
        () = lost => bail!("lost the Lease {LEADER_ELECTION_LEASE}: exiting"),
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

/// Binds `address` (so that a port in use fails the start-up) and returns the server, which
/// stops on `shutdown`.
async fn serve(
    what: &str,
    address: SocketAddr,
    router: Router,
    shutdown: &CancellationToken,
) -> anyhow::Result<impl Future<Output = std::io::Result<()>> + use<>> {
    let listener = TcpListener::bind(address)
        .await
        .with_context(|| format!("cannot serve {what} on {address}"))?;
    // Log the bound address, not the requested one: port 0 means any free port.
    let bound = listener.local_addr().unwrap_or(address);
    info!(address = %bound, "serving {what}");
    let server =
        axum::serve(listener, router).with_graceful_shutdown(shutdown.clone().cancelled_owned());
    Ok(server.into_future())
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

/// The Lease held by this instance.
struct Leadership {
    /// `true` while this instance holds the Lease.
    is_leader: watch::Receiver<bool>,
    /// Renews the Lease; releases it when `is_leader` is dropped.
    manager: JoinHandle<kube_lease_manager::Result<LeaseManager>>,
    /// The Lease's API, to check that this instance still holds it.
    leases: Api<Lease>,
    /// This instance's `holderIdentity` in the Lease.
    identity: String,
}

/// How long after the Lease's last renewal other instances may take it over.
const LEASE_DURATION_SECONDS: u64 = 30;

/// How long before the end of [`LEASE_DURATION_SECONDS`] the leader renews the Lease
/// (kube-lease-manager's grace period): renewals every 10 s leave room for a failed one.
const LEASE_GRACE_SECONDS: u64 = 20;

/// How old the Lease's last renewal may get before the leader steps down: 10 s before
/// another instance may take over, 10 s after a renewal was due. controller-runtime calls
/// this the renew deadline.
const RENEW_DEADLINE: Duration = Duration::from_secs(20);

/// How often the leader checks that it still holds the Lease.
const LEASE_CHECK_INTERVAL: Duration = Duration::from_secs(2);

impl Leadership {
    /// Waits until this instance holds the Lease; `None` when shut down first.
    async fn acquire(
        client: &Client,
        shutdown: &CancellationToken,
    ) -> anyhow::Result<Option<Self>> {
        // POD_NAMESPACE is set from the downward API in config/manager; out of a cluster, the
        // kubeconfig's namespace is used.
        let namespace = std::env::var("POD_NAMESPACE")
            .unwrap_or_else(|_| client.default_namespace().to_owned());
        // The pod's name (HOSTNAME in a pod) and the process id: unique per instance.
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into());
        let identity = format!("{host}-{}", std::process::id());
        let manager = LeaseManagerBuilder::new(client.clone(), LEADER_ELECTION_LEASE)
            .with_namespace(&namespace)
            .with_identity(&identity)
            .with_duration(LEASE_DURATION_SECONDS)
            .with_grace(LEASE_GRACE_SECONDS)
            .build()
            .await
            .context("cannot set up leader election")?;
        let (mut is_leader, manager) = manager.watch().await;
        info!(
            lease = LEADER_ELECTION_LEASE,
            namespace, "waiting for leadership"
        );
        tokio::select! {
            acquired = is_leader.wait_for(|&leader| leader) => {
                acquired.map_err(|_| anyhow!("leader election stopped"))?;
            }
            () = shutdown.cancelled() => return Ok(None),
        }
        info!(lease = LEADER_ELECTION_LEASE, "became the leader");
        let leases = Api::namespaced(client.clone(), &namespace);
        Ok(Some(Self {
            is_leader,
            manager,
            leases,
            identity,
        }))
    }

    /// Resolves when this instance no longer holds the Lease: the lease manager says so, or
    /// the Lease could not be confirmed as ours within the renew deadline. (kube-lease-manager
    /// retries a failed renewal without stepping down; without this check a leader cut off
    /// from the API server would go on reconciling after another instance took over.)
    async fn lost(&mut self) {
        let deadline = renew_deadline_passed(self.leases.clone(), self.identity.clone());
        tokio::select! {
            // An error means the lease manager stopped: the Lease will not be renewed.
            _ = self.is_leader.wait_for(|&leader| !leader) => {}
            () = deadline => {}
        }
    }

    /// Gives the Lease up, so that another instance takes over without waiting for it to expire.
    async fn release(self) {
        drop(self.is_leader);
        match self.manager.await {
            Ok(Ok(_)) => info!(lease = LEADER_ELECTION_LEASE, "released"),
            Ok(Err(error)) => warn!(%error, "cannot release the Lease"),
            Err(error) => warn!(%error, "cannot release the Lease"),
        }
    }
}

/// Resolves once this instance can no longer be sure that it holds the Lease: the Lease names
/// another holder, or its last renewal is older than [`RENEW_DEADLINE`]. The deadline is a
/// timer of its own, so a request that hangs (e.g. packets dropped) cannot hold it up.
async fn renew_deadline_passed(leases: Api<Lease>, identity: String) {
    // Leadership was acquired a moment ago, by renewing the Lease.
    let mut deadline = Instant::now() + RENEW_DEADLINE;
    loop {
        let check = async {
            tokio::time::sleep(LEASE_CHECK_INTERVAL).await;
            leases.get(LEADER_ELECTION_LEASE).await
        };
        let Ok(checked) = tokio::time::timeout_at(deadline, check).await else {
            warn!("the Lease was not renewed within {RENEW_DEADLINE:?}");
            return;
        };
        match checked {
            Ok(lease) => {
                let spec = lease.spec.unwrap_or_default();
                if spec.holder_identity.as_deref() != Some(identity.as_str()) {
                    warn!(holder = ?spec.holder_identity, "another instance holds the Lease");
                    return;
                }
                if let Some(renewed) = spec.renew_time {
                    let now = Instant::now();
                    deadline = step_down_at(renewed.0, Timestamp::now(), now);
                }
            }
            Err(error) => warn!(%error, "cannot read the Lease"),
        }
    }
}

/// When the leader must step down unless the Lease is renewed again: [`RENEW_DEADLINE`] after
/// `renewed` (the Lease's renewTime), on the monotonic clock that reads `now` at `now_ts`.
/// A renewal time in the future (clock skew) counts as just now.
fn step_down_at(renewed: Timestamp, now_ts: Timestamp, now: Instant) -> Instant {
    let age = Duration::try_from(now_ts.duration_since(renewed)).unwrap_or_default();
    now + RENEW_DEADLINE.saturating_sub(age)
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn flags_are_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn by_default_nothing_listens_beyond_this_machine() {
        let args = Args::parse_from(["manager"]);
        for address in [args.metrics_bind_address, args.health_probe_bind_address] {
            let address = address.0.expect("enabled by default");
            assert!(address.ip().is_loopback(), "{address}");
        }
    }

    #[test]
    fn the_step_down_deadline_counts_from_the_last_renewal() {
        let now_ts = Timestamp::now();
        let now = Instant::now();
        let ago = |seconds| now_ts - Duration::from_secs(seconds);
        assert_eq!(
            step_down_at(ago(5), now_ts, now),
            now + RENEW_DEADLINE - Duration::from_secs(5)
        );
        assert_eq!(step_down_at(ago(60), now_ts, now), now);
        let ahead = now_ts + Duration::from_secs(3);
        assert_eq!(step_down_at(ahead, now_ts, now), now + RENEW_DEADLINE);
    }

    #[test]
    fn bind_addresses_are_read_as_in_go() {
        let parse = |address| parse_bind_address(address).map(|parsed| parsed.0);
        assert_eq!(
            parse(":8080"),
            Ok(Some(SocketAddr::from(([0, 0, 0, 0], 8080))))
        );
        assert_eq!(
            parse("127.0.0.1:9"),
            Ok(Some(SocketAddr::from(([127, 0, 0, 1], 9))))
        );
        assert_eq!(parse("0"), Ok(None));
        assert!(parse("8080").is_err());
    }
}
