//! etcd and kube-apiserver, started as controller-runtime's envtest starts them
//! (`pkg/internal/testing/controlplane`): free ports on 127.0.0.1, a temporary folder, a CA that
//! signs the API server's serving certificate and an admin's client certificate (in
//! `system:masters`), a ServiceAccount token signing key, RBAC authorization, and no
//! ServiceAccount admission plugin (no controller would make the `default` ServiceAccount that
//! Pods then need).

use std::fmt::Write as _;
use std::hash::{BuildHasher, RandomState};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::{Context as _, anyhow, bail};
use base64::prelude::{BASE64_STANDARD, Engine as _};
use k8s_openapi::api::core::v1::Namespace;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, RootCertStore};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{Semaphore, SemaphorePermit};
use tokio::time::{Instant, sleep, timeout_at};
use tokio_rustls::TlsConnector;

use super::assets::Assets;
use super::certs::{self, Ca};
use super::process::Process;
use rbuilder_runtime_core::harness;

use crate::e2e::{http_get, http_post};
use rbuilder_runtime_core::error_chain;

/// How long etcd and the API server may take to become ready. Generous: tests start control
/// planes in parallel on small CI machines.
const START_TIMEOUT: Duration = Duration::from_secs(90);

/// How often readiness is checked.
const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// How many times a start is tried again when a port picked as free was taken meanwhile.
const START_ATTEMPTS: u32 = 3;

/// The user of the admin client certificate.
const ADMIN: &str = "rbuilder-envtest-admin";

/// How many control planes run at once in a test process: as many as tests run at once
/// (`RUST_TEST_THREADS`, as libtest reads it, else one a core), at most 4, since each takes
/// about 370 MB and a core while it starts. Tests that mostly wait (on a controller's
/// retries, a Lease's expiry) run faster with more threads than cores, each with its own.
fn concurrent_control_planes() -> &'static Semaphore {
    static PERMITS: OnceLock<Semaphore> = OnceLock::new();
    PERMITS.get_or_init(|| {
        let threads = std::env::var("RUST_TEST_THREADS")
            .ok()
            .and_then(|threads| threads.parse::<usize>().ok());
        let cores = std::thread::available_parallelism().map_or(1, |cores| cores.get());
        Semaphore::new(threads.unwrap_or(cores).clamp(1, 4))
    })
}

/// etcd and kube-apiserver, running until dropped; dropping stops both and deletes their
/// folder, also when a test panics.
pub struct ControlPlane {
    // Fields drop in this order: the API server before etcd, the folder, then the permit.
    apiserver: Process,
    etcd: Process,
    kubeconfig: Kubeconfig,
    server: String,
    /// etcd's client address.
    etcd_address: SocketAddr,
    ca: Ca,
    dir: Folder,
    /// One of [`concurrent_control_planes`]' permits, unless the test binary shares it.
    _permit: Option<SemaphorePermit<'static>>,
}

impl ControlPlane {
    /// Starts etcd and kube-apiserver from `KUBEBUILDER_ASSETS` (see [`super`]) and waits until
    /// the API server is ready and has made the `default` namespace.
    pub async fn start() -> anyhow::Result<Self> {
        Self::start_with(&[]).await
    }

    /// [`start`](Self::start), with `apiserver_flags` added to the API server's (e.g.
    /// `--watch-cache=false`, so that watches read etcd, whose compaction then expires them).
    pub async fn start_with(apiserver_flags: &[&str]) -> anyhow::Result<Self> {
        Self::start_limited(true, apiserver_flags).await
    }

    /// The control plane the tests of a test binary share ([`super::Environment::shared`]):
    /// it takes none of the permits of the planes tests start for themselves, so that it never
    /// waits for them, nor they for it.
    pub(crate) async fn start_shared() -> anyhow::Result<Self> {
        Self::start_limited(false, &[]).await
    }

    async fn start_limited(limited: bool, apiserver_flags: &[&str]) -> anyhow::Result<Self> {
        let assets = Assets::find()?;
        let mut attempt = 1;
        loop {
            let permit = match limited {
                true => Some(concurrent_control_planes().acquire().await?),
                false => None,
            };
            match Self::start_once(&assets, permit, apiserver_flags).await {
                Err(Start::PortTaken(_)) if attempt < START_ATTEMPTS => attempt += 1,
                Err(Start::PortTaken(error) | Start::Failed(error)) => return Err(error),
                Ok(plane) => return Ok(plane),
            }
        }
    }

    async fn start_once(
        assets: &Assets,
        permit: Option<SemaphorePermit<'static>>,
        apiserver_flags: &[&str],
    ) -> Result<Self, Start> {
        let dir = Folder::new().map_err(Start::Failed)?;
        let ca = Ca::new().map_err(|e| Start::Failed(e.into()))?;
        let files = Files::write(&dir.0, &ca).map_err(Start::Failed)?;
        let (etcd_port, peer_port, api_port) = (free_port()?, free_port()?, free_port()?);
        let etcd_url = format!("http://127.0.0.1:{etcd_port}");
        let etcd_args = [
            format!("--data-dir={}", dir.0.join("etcd").display()),
            format!("--listen-client-urls={etcd_url}"),
            format!("--advertise-client-urls={etcd_url}"),
            format!("--listen-peer-urls=http://127.0.0.1:{peer_port}"),
            // Its data is thrown away: no need to wait for the disk.
            "--unsafe-no-fsync=true".to_owned(),
        ];
        let log = dir.0.join("etcd.log");
        // A plane that took a permit serves one test.
        let one_test = permit.is_some();
        let etcd = Process::spawn("etcd", &assets.etcd, &etcd_args, log, one_test)?;
        let deadline = Instant::now() + START_TIMEOUT;
        let health = SocketAddr::from(([127, 0, 0, 1], etcd_port));
        loop {
            let checked = timeout_at(deadline, http_get(health, "/health")).await;
            if matches!(checked, Ok(Ok(body)) if body.contains("true")) {
                break;
            }
            check_running(&etcd, deadline, "etcd to answer /health")?;
            sleep(POLL_INTERVAL).await;
        }

        let server = format!("https://127.0.0.1:{api_port}");
        let path = |file: &Path| file.display().to_string();
        let mut apiserver_args = vec![
            format!("--etcd-servers={etcd_url}"),
            "--bind-address=127.0.0.1".to_owned(),
            format!("--secure-port={api_port}"),
            format!("--tls-cert-file={}", path(&files.serving_cert)),
            format!("--tls-private-key-file={}", path(&files.serving_key)),
            format!("--client-ca-file={}", path(&files.ca)),
            "--authorization-mode=RBAC".to_owned(),
            "--service-cluster-ip-range=10.0.0.0/24".to_owned(),
            "--allow-privileged=true".to_owned(),
            "--disable-admission-plugins=ServiceAccount".to_owned(),
            // It serves on 127.0.0.1 only, which it refuses to publish as the endpoint of the
            // `kubernetes` Service (no Pod could reach it anyway).
            "--endpoint-reconciler-type=none".to_owned(),
            format!("--service-account-issuer={server}"),
            format!(
                "--service-account-key-file={}",
                path(&files.service_accounts_public)
            ),
            format!(
                "--service-account-signing-key-file={}",
                path(&files.service_accounts_key)
            ),
        ];
        apiserver_args.extend(apiserver_flags.iter().map(|flag| (*flag).to_owned()));
        let log = dir.0.join("kube-apiserver.log");
        let apiserver = Process::spawn(
            "kube-apiserver",
            &assets.kube_apiserver,
            &apiserver_args,
            log,
            one_test,
        )?;

        let kubeconfig = kubeconfig(&server, &ca, &files.admin).map_err(Start::Failed)?;
        std::fs::write(dir.0.join("kubeconfig"), kubeconfig.to_string())
            .map_err(|e| Start::Failed(e.into()))?;
        let kubeconfig =
            Kubeconfig::from_yaml(&kubeconfig.to_string()).map_err(|e| Start::Failed(e.into()))?;
        let client = admin_client(&kubeconfig).await.map_err(Start::Failed)?;
        let namespaces: Api<Namespace> = Api::all(client.clone());
        let address = SocketAddr::from(([127, 0, 0, 1], api_port));
        loop {
            // Each request within the deadline too: a server that accepts and never answers
            // must not hold the start for ever.
            let ready = timeout_at(deadline, readyz(address, &ca.cert)).await;
            let last = match ready.unwrap_or_else(|_| Err("no answer".to_owned())) {
                Ok(()) => match timeout_at(deadline, namespaces.get_opt("default")).await {
                    Ok(Ok(Some(_))) => break,
                    Ok(Ok(None)) => "no default namespace yet".to_owned(),
                    Ok(Err(error)) => error_chain(&error),
                    Err(_) => "no answer".to_owned(),
                },
                Err(error) => error,
            };
            let what = format!("kube-apiserver to be ready (last: {last})");
            check_running(&apiserver, deadline, &what)?;
            check_running(&etcd, deadline, &what)?;
            sleep(POLL_INTERVAL).await;
        }
        Ok(Self {
            apiserver,
            etcd,
            kubeconfig,
            server,
            etcd_address: health,
            ca,
            dir,
            _permit: permit,
        })
    }

    /// A client of the admin (in `system:masters`: allowed everything).
    pub async fn client(&self) -> anyhow::Result<Client> {
        admin_client(&self.kubeconfig).await
    }

    /// A client acting as `user` in `groups` (impersonated by the admin): what `user` may do
    /// is what RBAC grants it.
    pub async fn client_as(&self, user: &str, groups: &[&str]) -> anyhow::Result<Client> {
        Ok(Client::try_from(self.config_as(user, groups).await?)?)
    }

    /// Compacts etcd's history up to now, as the API server does every 5 minutes: a watch
    /// that resumes from an older resourceVersion then gets 410 Gone, and lists again (when
    /// the API server reads watches from etcd: `--watch-cache=false`).
    pub async fn compact_etcd(&self) -> anyhow::Result<()> {
        let range = json!({"key": BASE64_STANDARD.encode("/")});
        let answer = http_post(self.etcd_address, "/v3/kv/range", &range.to_string()).await;
        let answer: serde_json::Value = serde_json::from_str(&answer.map_err(|e| anyhow!(e))?)?;
        let revision = answer
            .pointer("/header/revision")
            .and_then(serde_json::Value::as_str)
            .context("no revision in etcd's answer")?;
        let compact = json!({"revision": revision, "physical": true});
        http_post(self.etcd_address, "/v3/kv/compaction", &compact.to_string())
            .await
            .map_err(|e| anyhow!(e))?;
        Ok(())
    }

    /// The configuration of [`client_as`](Self::client_as).
    pub(crate) async fn config_as(&self, user: &str, groups: &[&str]) -> anyhow::Result<Config> {
        let mut config = config(&self.kubeconfig).await?;
        config.auth_info.impersonate = Some(user.to_owned());
        config.auth_info.impersonate_groups =
            Some(groups.iter().map(|group| (*group).to_owned()).collect());
        Ok(config)
    }

    /// The admin's kubeconfig, e.g. for `kubectl --kubeconfig`.
    pub fn kubeconfig_path(&self) -> PathBuf {
        self.dir.0.join("kubeconfig")
    }

    /// The API server's URL.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The control plane's folder (certificates, logs, etcd's data), deleted on drop.
    pub fn dir(&self) -> &Path {
        &self.dir.0
    }

    /// The CA the API server trusts for webhooks served from the test.
    pub(crate) fn ca(&self) -> &Ca {
        &self.ca
    }

    /// Stops etcd and the API server and deletes the folder when this process ends, however it
    /// ends (a plane in a `static` is never dropped): a shell waits for the end of its input,
    /// which the returned handle holds open until the process exits.
    pub(crate) fn stop_at_exit(&self) -> anyhow::Result<ChildStdin> {
        // Not stopped by a Ctrl-C (which the control plane gets too): it still cleans up.
        let script = r#"trap '' INT TERM HUP; read -r _; kill -KILL "$@" 2>/dev/null
            # Until they are gone or zombies (which a container's first process may never
            # reap), for at most 5 s.
            for _ in $(seq 50); do
              ps -o stat= -p "$(echo "$@" | tr ' ' ,)" 2>/dev/null | grep -qv Z || break
              sleep 0.1
            done
            rm -rf "$DIR""#;
        let mut shell = Command::new("sh")
            .args(["-c", script, "sh"])
            .args([self.apiserver.id(), self.etcd.id()].map(|pid| pid.to_string()))
            .env("DIR", &self.dir.0)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start the shell that stops the control plane at exit")?;
        shell.stdin.take().context("no input for the shell")
    }

    /// Fails with the end of the logs if etcd or the API server stopped.
    pub fn check_running(&self) -> anyhow::Result<()> {
        for process in [&self.etcd, &self.apiserver] {
            if let Some(status) = process.exited() {
                bail!(
                    "the control plane stopped ({status}); {}",
                    process.log_tail()
                );
            }
        }
        Ok(())
    }
}

/// Why a start failed: a port taken meanwhile is worth another try.
enum Start {
    PortTaken(anyhow::Error),
    Failed(anyhow::Error),
}

impl From<anyhow::Error> for Start {
    fn from(error: anyhow::Error) -> Self {
        Self::Failed(error)
    }
}

/// Fails if `process` exited, or `deadline` passed while waiting for `what`.
fn check_running(process: &Process, deadline: Instant, what: &str) -> Result<(), Start> {
    if let Some(status) = process.exited() {
        let log = process.log_tail();
        let error = anyhow!("the control plane did not start ({status}); {log}");
        if log.contains("address already in use") {
            return Err(Start::PortTaken(error));
        }
        return Err(Start::Failed(error));
    }
    if Instant::now() > deadline {
        let log = process.log_tail();
        return Err(Start::Failed(anyhow!(
            "timed out after {START_TIMEOUT:?} waiting for {what}; {log}"
        )));
    }
    Ok(())
}

/// `GET /readyz` of the API server at `address` (anonymous, as the kubelet's probes ask it),
/// trusting `ca`: 200 once its post-start hooks have run, RBAC's default roles among them. A
/// request of its own, not kube's client, which logs each 500 the API server answers while it
/// starts as an error.
async fn readyz(address: SocketAddr, ca: &str) -> Result<(), String> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca.as_bytes()) {
        let cert = cert.map_err(|error| format!("the CA: {error}"))?;
        roots
            .add(cert)
            .map_err(|error| format!("the CA: {error}"))?;
    }
    let config = ClientConfig::builder_with_provider(harness::provider())
        .with_safe_default_protocol_versions()
        .map_err(|error| error.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let connector = TlsConnector::from(Arc::new(config));
    let exchange = async {
        let tcp = TcpStream::connect(address).await?;
        let mut tls = connector
            .connect(ServerName::from(address.ip()), tcp)
            .await?;
        let request = format!("GET /readyz HTTP/1.0\r\nHost: {address}\r\n\r\n");
        tls.write_all(request.as_bytes()).await?;
        let mut response = Vec::new();
        tls.read_to_end(&mut response).await?;
        Ok::<_, std::io::Error>(response)
    };
    let response = exchange
        .await
        .map_err(|error| format!("GET /readyz: {error}"))?;
    let response = String::from_utf8_lossy(&response);
    let status = response.lines().next().unwrap_or_default();
    if status.split_whitespace().nth(1) == Some("200") {
        Ok(())
    } else {
        Err(format!("GET /readyz: {status}"))
    }
}

/// A port on 127.0.0.1 that was free a moment ago, as envtest picks them.
fn free_port() -> Result<u16, Start> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| Start::Failed(e.into()))?;
    let port = listener
        .local_addr()
        .map_err(|e| Start::Failed(e.into()))?
        .port();
    Ok(port)
}

/// The files the API server reads.
struct Files {
    ca: PathBuf,
    serving_cert: PathBuf,
    serving_key: PathBuf,
    service_accounts_key: PathBuf,
    service_accounts_public: PathBuf,
    admin: certs::Pem,
}

impl Files {
    fn write(dir: &Path, ca: &Ca) -> anyhow::Result<Self> {
        let write = |name: &str, content: &str| -> anyhow::Result<PathBuf> {
            let path = dir.join(name);
            std::fs::write(&path, content)
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(path)
        };
        let serving = ca.server("kube-apiserver")?;
        let service_accounts = certs::key()?;
        Ok(Self {
            ca: write("ca.crt", &ca.cert)?,
            serving_cert: write("apiserver.crt", &serving.cert)?,
            serving_key: write("apiserver.key", &serving.key)?,
            service_accounts_public: write(
                "service-accounts.pub",
                &certs::public_key(&service_accounts)?,
            )?,
            service_accounts_key: write("service-accounts.key", &service_accounts)?,
            admin: ca.client(ADMIN, "system:masters")?,
        })
    }
}

/// The admin's kubeconfig, self-contained (certificates inline): JSON, which is YAML too.
fn kubeconfig(server: &str, ca: &Ca, admin: &certs::Pem) -> anyhow::Result<serde_json::Value> {
    let base64 = |pem: &str| BASE64_STANDARD.encode(pem);
    Ok(json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "envtest", "cluster": {
            "server": server,
            "certificate-authority-data": base64(&ca.cert),
        }}],
        "users": [{"name": ADMIN, "user": {
            "client-certificate-data": base64(&admin.cert),
            "client-key-data": base64(&admin.key),
        }}],
        "contexts": [{"name": "envtest", "context": {
            "cluster": "envtest",
            "user": ADMIN,
            "namespace": "default",
        }}],
        "current-context": "envtest",
    }))
}

async fn config(kubeconfig: &Kubeconfig) -> anyhow::Result<Config> {
    let options = KubeConfigOptions::default();
    Ok(Config::from_custom_kubeconfig(kubeconfig.clone(), &options).await?)
}

async fn admin_client(kubeconfig: &Kubeconfig) -> anyhow::Result<Client> {
    Ok(Client::try_from(config(kubeconfig).await?)?)
}

/// A folder of its own under the system's temporary folder, deleted when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new() -> anyhow::Result<Self> {
        // The process id and a random number: unique among parallel tests and processes.
        let mut name = format!("rbuilder-envtest-{}-", std::process::id());
        let _ = write!(name, "{:016x}", RandomState::new().hash_one(0u8));
        let path = std::env::temp_dir().join(name);
        std::fs::create_dir(&path)
            .with_context(|| format!("cannot create the folder {}", path.display()))?;
        Ok(Self(path))
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
