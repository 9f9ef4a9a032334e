//! The harness of the end-to-end tests (`tests/e2e/`): the manager against the cluster of the
//! current kubeconfig context.
//!
//! [`TestEnv::start`] installs the CRDs of `config/crd/bases` (server-side apply), creates a
//! namespace of its own, starts the manager binary built by cargo as a child process that
//! watches only that namespace, and waits for its probes. No image is built or deployed: any
//! cluster will do, e.g. `kind create cluster`. A manager deployed in the cluster (`make
//! deploy`) would reconcile the test's objects too: `make undeploy` first.
//!
//! A test deletes what it created when it ends, also when it fails: its namespace, and the CRDs
//! unless they were installed before. A test killed before it could clean up leaves its
//! namespace behind: `kubectl delete namespace -l app.kubernetes.io/created-by=<package>-e2e`.
//! Where the tests may not create namespaces, `E2E_NAMESPACE=<existing namespace>` makes them
//! use that one, and leave it in place. The manager's log goes to
//! `target/tmp/<namespace>-manager.log`; its end is printed when a test fails.
//!
//! ```no_run
//! use k8s_openapi::api::apps::v1::Deployment;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::Api;
//! use rbuilder_runtime::e2e::{Project, TestEnv, fetch, is_controlled_by, step};
//!
//! const PROJECT: Project = Project {
//!     root: env!("CARGO_MANIFEST_DIR"),
//!     # manager: "",
//!     # package: "guestbook",
//!     # tmp: "",
//!     // manager: env!("CARGO_BIN_EXE_guestbook"),
//!     // package: env!("CARGO_PKG_NAME"),
//!     // tmp: env!("CARGO_TARGET_TMPDIR"),
//! };
//!
//! /// The `controller` label of the controller's metrics.
//! const CONTROLLER: &str = "guestbook";
//!
//! #[tokio::test]
//! #[ignore = "needs a Kubernetes cluster: run `make test-e2e`"]
//! async fn a_guestbook_runs_as_a_deployment() {
//!     let env = TestEnv::start(&PROJECT, CONTROLLER).await;
//!     let reconciles = env.reconcile_total(CONTROLLER).await;
//!     step("apply the sample");
//!     let guestbooks: Api<ConfigMap> = env.api();
//!     let sample: ConfigMap = PROJECT.read_yaml("config/samples/guestbook.yaml");
//!     let owner = env.apply(&guestbooks, &sample).await;
//!     step("a Deployment controlled by it");
//!     let deployments: Api<Deployment> = env.api();
//!     env.wait_for("its Deployment", async || {
//!         let deployment = fetch(&deployments, "guestbook").await?;
//!         is_controlled_by(&deployment, &owner)
//!     })
//!     .await;
//!     env.wait_for_reconciles(CONTROLLER, reconciles).await;
//! }
//! ```

use std::collections::BTreeMap;
use std::fmt::{Debug, Display};
use std::fs::File;
use std::hash::{BuildHasher, RandomState};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{
    ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams,
    PostParams,
};
use kube::core::NamespaceResourceScope;
use kube::runtime::wait::{await_condition, conditions};
use kube::{Api, Client, Config, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio::time::{Instant, sleep, timeout};

use crate::checks;
pub use crate::checks::{
    ReplicaSetState, fetch, gone, has_condition, images, is_controlled_by, is_ready, is_rolled_out,
    replica_sets,
};
use rbuilder_runtime_core::error_chain;

/// The project under test, as its e2e tests describe it with cargo's variables:
///
/// ```text
/// const PROJECT: Project = Project {
///     root: env!("CARGO_MANIFEST_DIR"),
///     manager: env!("CARGO_BIN_EXE_<name>"),
///     package: env!("CARGO_PKG_NAME"),
///     tmp: env!("CARGO_TARGET_TMPDIR"),
/// };
/// ```
pub struct Project {
    /// The project's folder: the CRDs and samples are read from there.
    pub root: &'static str,
    /// The manager binary, built by cargo for the integration tests.
    pub manager: &'static str,
    /// The Cargo package: the field manager of what the tests apply is `<package>-e2e`, and the
    /// `created-by` label of their namespaces.
    pub package: &'static str,
    /// Where the manager's log goes.
    pub tmp: &'static str,
}

impl Project {
    fn test_name(&self) -> String {
        format!("{}-e2e", self.package)
    }
}

/// How long a test waits for one expected change before failing. Generous, for slow CI
/// clusters; what waits for Pods to run has longer (see [`POD_WAIT_TIMEOUT`]).
pub const WAIT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a test waits for Pods to run (a Deployment available, a rollout finished): on a
/// real cluster their images are pulled first, which may take minutes.
pub const POD_WAIT_TIMEOUT: Duration = Duration::from_secs(300);

/// How often a condition is checked while waiting.
const POLL_INTERVAL: Duration = Duration::from_millis(250);

/// How long the API server may take to answer the first request.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// How long one request to the manager's probes or metrics may take.
const HTTP_TIMEOUT: Duration = Duration::from_secs(5);

/// Prints the step a test is at: with `--nocapture` it shows the progress, and it is part of
/// the output of a failed test.
pub fn step(what: impl Display) {
    println!("e2e: {what}");
}

/// A test namespace with the CRDs installed and the manager running. Dropping it, also when the
/// test fails, stops the manager and deletes what it created.
pub struct TestEnv {
    project: &'static Project,
    /// Kept to build another client for the clean-up (see `drop`).
    config: Config,
    client: Client,
    /// The CRDs of `config/crd/bases`.
    crds: Vec<CustomResourceDefinition>,
    /// The CRDs this test installed, to be deleted; not those that were there before.
    installed_crds: Vec<String>,
    /// The test namespace, once created.
    namespace: Option<String>,
    /// Whether the test created the namespace, and so deletes it.
    owns_namespace: bool,
    /// Behind a lock so that waits (`&self`) can check that it still runs.
    manager: Option<Mutex<Manager>>,
}

impl TestEnv {
    /// Connects to the cluster, installs the CRDs, creates a test namespace whose name starts
    /// with `prefix`, starts the manager and waits until its probes answer.
    pub async fn start(project: &'static Project, prefix: &str) -> Self {
        let (config, client) = connect().await;
        // Built before anything is created, so that a failure halfway cleans up too.
        let mut env = Self {
            project,
            config,
            client,
            crds: project.read_crds(),
            installed_crds: Vec::new(),
            namespace: None,
            owns_namespace: true,
            manager: None,
        };
        env.install_crds().await;
        env.create_namespace(prefix).await;
        env.manager = Some(Mutex::new(Manager::start(project, env.namespace())));
        env.wait_for_probes().await;
        env
    }

    /// The test namespace.
    pub fn namespace(&self) -> &str {
        self.namespace
            .as_deref()
            .expect("TestEnv::start creates the namespace")
    }

    /// An [`Api`] over the test namespace.
    pub fn api<K>(&self) -> Api<K>
    where
        K: Resource<Scope = NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), self.namespace())
    }

    fn manager(&self) -> MutexGuard<'_, Manager> {
        let manager = self.manager.as_ref();
        let manager = manager.expect("TestEnv::start starts the manager");
        // A test that panicked while holding the lock has failed already.
        manager.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Server-side applies every CRD of the project and waits until they are established. CRDs
    /// that are installed already are updated too: the test runs against the current code.
    async fn install_crds(&mut self) {
        let api: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        let params = PatchParams::apply(&self.project.test_name()).force();
        for crd in &self.crds {
            let name = crd.name_any();
            step(format!("install CRD {name}"));
            let existing = api
                .get_opt(&name)
                .await
                .unwrap_or_else(|error| panic!("cannot read CRD {name}: {error}"));
            api.patch(&name, &params, &Patch::Apply(crd))
                .await
                .unwrap_or_else(|error| panic!("cannot apply CRD {name}: {error}"));
            if existing.is_none() {
                self.installed_crds.push(name.clone());
            }
            let established = await_condition(api.clone(), &name, conditions::is_crd_established());
            match timeout(WAIT_TIMEOUT, established).await {
                Ok(Ok(_)) => {}
                Ok(Err(error)) => panic!("cannot watch CRD {name}: {error}"),
                Err(_) => panic!(
                    "timed out after {WAIT_TIMEOUT:?} waiting for CRD {name} to be established"
                ),
            }
        }
    }

    /// Creates a namespace named `e2e-<prefix>-<random>`, so that tests and runs never see each
    /// other's objects. With `E2E_NAMESPACE` set, uses that existing namespace instead (for
    /// clusters where the tests may not create namespaces) and leaves it in place.
    async fn create_namespace(&mut self, prefix: &str) {
        if let Some(name) = std::env::var("E2E_NAMESPACE")
            .ok()
            .filter(|n| !n.is_empty())
        {
            step(format!("use the namespace {name} (E2E_NAMESPACE)"));
            self.namespace = Some(name);
            self.owns_namespace = false;
            return;
        }
        // A namespace name is a DNS label: at most 63 characters.
        let prefix: String = prefix.chars().take(48).collect();
        let suffix = RandomState::new().hash_one(std::process::id()) & 0xff_ffff;
        let name = format!("e2e-{prefix}-{suffix:06x}");
        step(format!("create namespace {name}"));
        let label = (
            "app.kubernetes.io/created-by".to_owned(),
            self.project.test_name(),
        );
        let namespace = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                labels: Some(BTreeMap::from([label])),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        Api::<Namespace>::all(self.client.clone())
            .create(&PostParams::default(), &namespace)
            .await
            .unwrap_or_else(|error| panic!("cannot create namespace {name}: {error}"));
        self.namespace = Some(name);
    }

    /// Waits until the manager's `/healthz` and `/readyz` answer 200.
    async fn wait_for_probes(&self) {
        let address = self.manager().probes;
        step("the manager's /healthz and /readyz answer");
        let what = format!("/healthz and /readyz on {address} to answer 200");
        self.wait_for(&what, async || {
            http_get(address, "/healthz").await?;
            http_get(address, "/readyz").await
        })
        .await;
    }

    /// The manager's count of successful reconciles by `controller`
    /// (`controller_runtime_reconcile_total`): those that asked for nothing more (`success`)
    /// and those that asked to be run again after a while (`requeue_after`, e.g. the plain
    /// controller's hourly safety net), as controller-runtime labels them.
    pub async fn reconcile_total(&self, controller: &str) -> f64 {
        self.try_reconcile_total(controller)
            .await
            .unwrap_or_else(|error| panic!("cannot read the manager's metrics: {error}"))
    }

    async fn try_reconcile_total(&self, controller: &str) -> Result<f64, String> {
        let address = self.manager().metrics;
        let metrics = http_get(address, "/metrics").await?;
        let name = "controller_runtime_reconcile_total";
        let counts: Vec<f64> = ["success", "requeue_after"]
            .into_iter()
            .filter_map(|result| {
                let labels = [("controller", controller), ("result", result)];
                metric_value(&metrics, name, &labels)
            })
            .collect();
        if counts.is_empty() {
            return Err(format!(
                "no {name} of the controller {controller} in /metrics"
            ));
        }
        Ok(counts.iter().sum())
    }

    /// Waits until `controller` has reconciled successfully more than `before` times.
    pub async fn wait_for_reconciles(&self, controller: &str, before: f64) {
        let what = format!("the reconcile count of {controller} to grow from {before}");
        self.wait_for(&what, async || {
            let total = self.try_reconcile_total(controller).await?;
            if total > before {
                Ok(())
            } else {
                Err(format!("still {total}"))
            }
        })
        .await;
    }

    /// Calls `probe` until it succeeds, and returns what it returned. Fails the test after
    /// [`WAIT_TIMEOUT`], with `what` it waited for and why `probe` last failed, or as soon as the
    /// manager exits.
    pub async fn wait_for<T>(
        &self,
        what: &str,
        probe: impl AsyncFnMut() -> Result<T, String>,
    ) -> T {
        let check = |what: &str| self.manager().assert_running(what);
        checks::poll(what, WAIT_TIMEOUT, POLL_INTERVAL, check, probe).await
    }

    /// As [`wait_for`](Self::wait_for), for what waits on Pods running, e.g. a rollout: fails
    /// after [`POD_WAIT_TIMEOUT`]. (A cluster that cannot run the Pods, without nodes or
    /// without access to the image's registry, fails it.)
    ///
    /// ```no_run
    /// # use rbuilder_runtime::e2e::TestEnv;
    /// # async fn f(env: TestEnv) {
    /// use k8s_openapi::api::apps::v1::Deployment;
    /// use kube::Api;
    /// use rbuilder_runtime::e2e::{fetch, is_rolled_out};
    ///
    /// let deployments: Api<Deployment> = env.api();
    /// let replicas = env
    ///     .wait_for_pods("Deployment web rolled out", async || {
    ///         is_rolled_out(&fetch(&deployments, "web").await?)
    ///     })
    ///     .await;
    /// assert_eq!(replicas, 2);
    /// # }
    /// ```
    pub async fn wait_for_pods<T>(
        &self,
        what: &str,
        probe: impl AsyncFnMut() -> Result<T, String>,
    ) -> T {
        let check = |what: &str| self.manager().assert_running(what);
        checks::poll(what, POD_WAIT_TIMEOUT, POLL_INTERVAL, check, probe).await
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        // First, so that nothing is reconciled while the objects are deleted.
        if let Some(manager) = self.manager.take() {
            let manager = manager.into_inner();
            let manager = manager.unwrap_or_else(PoisonError::into_inner);
            manager.stop(std::thread::panicking());
        }
        let namespace = self.namespace.take();
        let owns_namespace = self.owns_namespace;
        let installed_crds = std::mem::take(&mut self.installed_crds);
        if namespace.is_none() && installed_crds.is_empty() {
            return;
        }
        let (config, crds) = (self.config.clone(), std::mem::take(&mut self.crds));
        // The test's runtime is blocked in this `drop`, a kube Client needs the runtime it was
        // created on, and a runtime cannot be started inside another: the clean-up runs on a
        // thread of its own, with a runtime and a client of its own.
        let cleanup = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the clean-up");
            runtime.block_on(cleanup(
                config,
                namespace,
                owns_namespace,
                &crds,
                installed_crds,
            ));
        });
        if cleanup.join().is_err() {
            eprintln!("e2e: the clean-up failed (see above)");
        }
    }
}

/// Deletes the test namespace and the CRDs the test installed. Reports failures rather than
/// panicking: it runs while a failed test unwinds.
async fn cleanup(
    config: Config,
    namespace: Option<String>,
    owns_namespace: bool,
    crds: &[CustomResourceDefinition],
    installed_crds: Vec<String>,
) {
    let client = match Client::try_from(config) {
        Ok(client) => client,
        Err(error) => return eprintln!("e2e: cannot clean up: {error}"),
    };
    if let Some(namespace) = namespace {
        step(format!("clean up namespace {namespace}"));
        // With the manager stopped, the finalizers of the custom resources that a failed test
        // left would never be removed, and the namespace never finish deleting.
        for crd in crds {
            remove_finalizers(&client, crd, &namespace).await;
        }
        let namespaces: Api<Namespace> = Api::all(client.clone());
        if owns_namespace
            && let Err(error) = namespaces
                .delete(&namespace, &DeleteParams::default())
                .await
        {
            eprintln!("e2e: cannot delete namespace {namespace}: {error}");
        }
    }
    let api: Api<CustomResourceDefinition> = Api::all(client);
    for name in installed_crds {
        step(format!("delete CRD {name}"));
        if let Err(error) = api.delete(&name, &DeleteParams::default()).await {
            eprintln!("e2e: cannot delete CRD {name}: {error}");
            continue;
        }
        // Until it is gone, so that the next test can install it again.
        let deadline = Instant::now() + WAIT_TIMEOUT;
        while !matches!(api.get_opt(&name).await, Ok(None)) {
            if Instant::now() >= deadline {
                eprintln!("e2e: CRD {name} is still there after {WAIT_TIMEOUT:?}");
                break;
            }
            sleep(POLL_INTERVAL).await;
        }
    }
}

/// Removes the finalizers of the objects of `crd`'s kind in `namespace`.
async fn remove_finalizers(client: &Client, crd: &CustomResourceDefinition, namespace: &str) {
    let spec = &crd.spec;
    let storage = spec.versions.iter().find(|version| version.storage);
    let Some(version) = storage.filter(|_| spec.scope == "Namespaced") else {
        return;
    };
    let gvk = GroupVersionKind::gvk(&spec.group, &version.name, &spec.names.kind);
    let resource = ApiResource::from_gvk_with_plural(&gvk, &spec.names.plural);
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    // Fails if the CRD was never installed: then there is nothing to remove.
    let Ok(objects) = api.list(&ListParams::default()).await else {
        return;
    };
    let patch = Patch::Merge(json!({"metadata": {"finalizers": null}}));
    for obj in objects.iter().filter(|obj| !obj.finalizers().is_empty()) {
        let name = obj.name_any();
        if let Err(error) = api.patch(&name, &PatchParams::default(), &patch).await {
            let kind = &spec.names.kind;
            eprintln!("e2e: cannot remove the finalizers of {kind} {name}: {error}");
        }
    }
}

/// The manager, run as a child process.
struct Manager {
    process: Child,
    /// Where its output goes.
    log: PathBuf,
    metrics: SocketAddr,
    probes: SocketAddr,
}

impl Manager {
    /// Starts the manager on free local ports, watching only `namespace`.
    fn start(project: &Project, namespace: &str) -> Self {
        let (metrics, probes) = (free_local_address(), free_local_address());
        let log = Path::new(project.tmp).join(format!("{namespace}-manager.log"));
        let file = File::create(&log)
            .unwrap_or_else(|error| panic!("cannot create {}: {error}", log.display()));
        let stderr = file.try_clone().expect("a second handle on the log file");
        step(format!("start the manager (log: {})", log.display()));
        let process = Command::new(project.manager)
            .arg(format!("--metrics-bind-address={metrics}"))
            // Plain HTTP on loopback: the tests read the metrics without a token.
            .arg("--metrics-secure=false")
            .arg(format!("--health-probe-bind-address={probes}"))
            // No webhook configuration calls this manager (the tests install only the CRDs);
            // a free port keeps it clear of another manager on this machine.
            .arg(format!("--webhook-bind-address={}", free_local_address()))
            // Leaves the objects of other namespaces alone: the cluster may be shared.
            .env("WATCH_NAMESPACE", namespace)
            // A plain-text log file.
            .env("NO_COLOR", "1")
            .stdout(file)
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|error| {
                panic!("cannot start the manager {}: {error}", project.manager)
            });
        Self {
            process,
            log,
            metrics,
            probes,
        }
    }

    /// Fails the test if the manager has exited (its log is printed when the test ends).
    fn assert_running(&mut self, what: &str) {
        match self.process.try_wait() {
            Ok(None) => {}
            Ok(Some(status)) => panic!("the manager exited ({status}) while waiting for {what}"),
            Err(error) => panic!("cannot check the manager process: {error}"),
        }
    }

    /// Kills the manager; prints the end of its log if the test `failed`.
    fn stop(mut self, failed: bool) {
        // Killing is enough: a test manager holds no Lease, and the test is over.
        let stopped = self.process.kill().and_then(|()| self.process.wait());
        if let Err(error) = stopped {
            eprintln!("e2e: cannot stop the manager: {error}");
        }
        if failed {
            const LINES: usize = 40;
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            let lines: Vec<&str> = log.lines().collect();
            let tail = lines[lines.len().saturating_sub(LINES)..].join("\n");
            eprintln!(
                "---- the manager's log ({}) ----\n{tail}",
                self.log.display()
            );
        }
    }
}

/// Connects to the cluster of the current kubeconfig context; fails the test with one clear
/// message if there is none.
async fn connect() -> (Config, Client) {
    let connected = async {
        let config = Config::infer().await.map_err(|error| error.to_string())?;
        let client = Client::try_from(config.clone()).map_err(|error| error.to_string())?;
        match timeout(CONNECT_TIMEOUT, client.apiserver_version()).await {
            Ok(Ok(_)) => Ok((config, client)),
            Ok(Err(error)) => Err(error_chain(&error)),
            Err(_) => Err(format!("no answer within {CONNECT_TIMEOUT:?}")),
        }
    };
    connected.await.unwrap_or_else(|error: String| {
        let kubeconfig = std::env::var("KUBECONFIG");
        let kubeconfig = kubeconfig.as_deref().unwrap_or("(unset: ~/.kube/config)");
        panic!(
            "no cluster reachable through KUBECONFIG={kubeconfig} ({error}): \
             start one (kind create cluster) or set KUBECONFIG"
        )
    })
}

impl Project {
    /// Reads a YAML file of the project, e.g. a sample.
    pub fn read_yaml<T: DeserializeOwned>(&self, path: impl AsRef<Path>) -> T {
        let path = Path::new(self.root).join(path);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
        serde_saphyr::from_str(&text)
            .unwrap_or_else(|error| panic!("cannot parse {}: {error}", path.display()))
    }

    /// The CRDs written to `config/crd/bases` by `make manifests`.
    fn read_crds(&self) -> Vec<CustomResourceDefinition> {
        let dir = Path::new(self.root).join("config/crd/bases");
        let entries = std::fs::read_dir(&dir)
            .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()));
        let mut paths: Vec<PathBuf> = entries
            .map(|entry| entry.expect("a directory entry").path())
            .filter(|path| {
                path.extension()
                    .is_some_and(|extension| extension == "yaml")
            })
            .collect();
        assert!(
            !paths.is_empty(),
            "no CRD in {}: run make manifests",
            dir.display()
        );
        paths.sort();
        paths.iter().map(|path| self.read_yaml(path)).collect()
    }
}

/// Server-side applies `obj`, as `kubectl apply --server-side` does, and returns it as stored.
impl TestEnv {
    /// Server-side applies `obj`, as `kubectl apply --server-side` does, and returns it as
    /// stored.
    pub async fn apply<K>(&self, api: &Api<K>, obj: &K) -> K
    where
        K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned,
    {
        let name = obj.meta().name.as_deref().expect("the object has a name");
        let params = PatchParams::apply(&self.project.test_name()).force();
        api.patch(name, &params, &Patch::Apply(obj))
            .await
            .unwrap_or_else(|error| panic!("cannot apply {} {name}: {error}", K::kind(&())))
    }
}

/// A local address that was free a moment ago. (Another process could take it before the
/// manager binds it: unlikely enough for a test.)
pub(crate) fn free_local_address() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free local port")
}

/// The body of `GET http://<address><path>`, which must answer 200. HTTP/1.0 on a plain
/// socket: the server closes the connection after the response and sends no chunks, so the
/// tests need no HTTP client crate.
pub(crate) async fn http_get(address: SocketAddr, path: &str) -> Result<String, String> {
    let request = format!("GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n");
    http_request(address, "GET", path, request).await
}

/// The body of `POST http://<address><path>` with the JSON `body`, which must answer 200, as
/// [`http_get`] sends it.
pub(crate) async fn http_post(
    address: SocketAddr,
    path: &str,
    body: &str,
) -> Result<String, String> {
    let request = format!(
        "POST {path} HTTP/1.0\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    http_request(address, "POST", path, request).await
}

/// Sends `request` to `address`, and returns the answer's body if it is 200.
async fn http_request(
    address: SocketAddr,
    method: &str,
    path: &str,
    request: String,
) -> Result<String, String> {
    let response = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect_timeout(&address, HTTP_TIMEOUT)?;
        stream.set_read_timeout(Some(HTTP_TIMEOUT))?;
        stream.write_all(request.as_bytes())?;
        let mut response = String::new();
        stream.read_to_string(&mut response)?;
        Ok::<_, std::io::Error>(response)
    })
    .await
    .expect("the HTTP request's thread")
    .map_err(|error| format!("{method} {path}: {error}"))?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.lines().next().unwrap_or_default();
    if status.split_whitespace().nth(1) == Some("200") {
        Ok(body.to_owned())
    } else {
        Err(format!("{method} {path}: {status}"))
    }
}

/// The value of the metric `name` with exactly `labels`, in the Prometheus text format.
fn metric_value(metrics: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut wanted: Vec<String> = labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    wanted.sort_unstable();
    metrics.lines().find_map(|line| {
        let (series, value) = line.rsplit_once(' ')?;
        let labels = series
            .strip_prefix(name)?
            .strip_prefix('{')?
            .strip_suffix('}')?;
        let mut found: Vec<&str> = labels.split(',').collect();
        found.sort_unstable();
        (found == wanted).then(|| value.parse().ok()).flatten()
    })
}
