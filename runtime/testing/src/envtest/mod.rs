//! envtest for Rust: a real kube-apiserver and etcd for a project's integration tests
//! (`tests/integration/`), as controller-runtime's envtest gives them to kubebuilder projects.
//!
//! [`Environment::start`] starts etcd and kube-apiserver ([`ControlPlane`]) on free ports of
//! this machine, in a temporary folder; installs the operator's CRDs from its code and waits
//! until they are served; serves the operator's admission and conversion webhooks from the test
//! process over HTTPS and points the API server at them; and grants the manager's role (the one
//! `make manifests` writes into `config/rbac/role.yaml`) to the identity its controllers run
//! as. [`Environment::run`] then runs a controller as the manager runs it. Dropping the
//! environment, also when a test panics, stops the controllers, both processes, and deletes
//! the folder. Each test starts an environment of its own (about 3 s), so tests never see each
//! other's objects.
//!
//! [`Environment::shared`] does the same once for all the tests of a test binary that ask for
//! it, as a kubebuilder suite starts one envtest in its `BeforeSuite`: each test then works in
//! a namespace of its own, where its objects go and its controllers look, and starts in a
//! fraction of a second. The control plane stops when the test binary exits. Tests of objects
//! that are not in a namespace (of a cluster-scoped kind) start their own.
//!
//! The binaries are found as envtest finds them for a kubebuilder project: in the folder
//! `KUBEBUILDER_ASSETS` names, each overridable with `TEST_ASSET_ETCD` and
//! `TEST_ASSET_KUBE_APISERVER`; else in the project's `bin/k8s/<version>-<os>-<arch>`, where
//! `make setup-envtest` downloads them (the newest release there), so that a plain `cargo test`
//! finds them; else in `/usr/local/kubebuilder/bin`. Without them a test fails and says how to
//! get them. A test's own control plane runs them with `GOMAXPROCS=1` and `GOGC=400` unless
//! the environment sets either: it serves one test, and starts on about a third less CPU so.
//!
//! ```no_run
//! # use k8s_openapi::api::core::v1::ConfigMap;
//! # use rbuilder_runtime::{Operator, Registration};
//! # static OPERATOR: Operator = Operator::new("guestbook");
//! # const CONTROLLER: Registration = rbuilder_runtime::register::<Guestbooks>();
//! # struct Guestbooks;
//! # impl rbuilder_runtime::Reconciler for Guestbooks {
//! #     type Resource = ConfigMap; type Error = kube::Error;
//! #     const NAME: &'static str = "g"; const FINALIZER: Option<&'static str> = None;
//! #     async fn apply(_: std::sync::Arc<ConfigMap>, _: std::sync::Arc<rbuilder_runtime::Context>)
//! #         -> Result<rbuilder_runtime::controller::Action, kube::Error> { todo!() }
//! # }
//! use kube::Api;
//! use rbuilder_runtime::envtest::{Environment, fetch, step};
//!
//! #[tokio::test]
//! async fn a_guestbook_gets_its_config_map() {
//!     let env = Environment::shared(&OPERATOR).await;
//!     env.run(&CONTROLLER).await;
//!     step("create a guestbook");
//!     let config_maps: Api<ConfigMap> = env.api();
//!     // env.apply(&guestbooks, &guestbook).await; ...
//!     env.wait_for("its ConfigMap", async || fetch(&config_maps, "guestbook").await)
//!         .await;
//! }
//! ```
//!
//! As with envtest, there is no kube-controller-manager, scheduler or kubelet: nothing deletes
//! namespaces or garbage-collects owned objects, Deployments get no ReplicaSets, and no Pod
//! runs. A test checks what the operator asks of the API server, as the API server itself
//! validates, defaults, converts and stores it.

mod assets;
mod certs;
mod control_plane;
mod process;
mod shared;
pub(crate) mod webhooks;

use std::fmt::Debug;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;
use tokio_util::sync::{CancellationToken, DropGuard};

pub use crate::checks::{
    ReplicaSetState, fetch, gone, has_condition, images, is_controlled_by, is_ready, is_rolled_out,
    replica_sets,
};
pub use control_plane::ControlPlane;

use crate::checks;
use rbuilder_runtime_core::context::Scope;
use rbuilder_runtime_core::derived;
use rbuilder_runtime_core::harness::{self, Metrics, SharedWatches, States};
use rbuilder_runtime_core::namespaces::Namespaces;
use rbuilder_runtime_core::{Operator, Registration, WatchScope, Webhook, error_chain, rbac};
use webhooks::{ManagerNamespace, TEST_NAMESPACE_LABEL, WebhookServer};

/// How long [`Environment::wait_for`] waits for one expected change.
const WAIT_TIMEOUT: Duration = Duration::from_secs(30);

/// How often a condition is checked while waiting.
const POLL_INTERVAL: Duration = Duration::from_millis(100);

/// The namespace the test's objects go to (`Environment::api`), and the one an operator scoped
/// to its namespace watches.
pub const NAMESPACE: &str = "default";

/// The manager's namespace for an operator of the whole cluster: one of its own, as in a
/// cluster, so that the webhooks that leave out the manager's namespace see the tests' objects.
/// (It need not exist: selectors and RBAC only name it.)
const CLUSTER_MANAGER_NAMESPACE: &str = "rbuilder-envtest-system";

/// The ServiceAccount the controllers run as, in the manager's namespace, as `config/manager`
/// deploys them (before kustomize's name prefix).
const MANAGER_SERVICE_ACCOUNT: &str = "controller-manager";

/// The field manager of what the environment installs and a test applies.
const FIELD_MANAGER: &str = "rbuilder-envtest";

/// Prints the step a test is at: with `--nocapture` it shows the progress, and it is part of
/// the output of a failed test.
pub fn step(what: impl std::fmt::Display) {
    println!("envtest: {what}");
}

/// The manager's namespace: for an operator scoped to its namespace, the one it watches,
/// `watched`; else one of its own.
fn manager_namespace<'a>(operator: &Operator, watched: &'a str) -> &'a str {
    match operator.parts().scope {
        WatchScope::Cluster => CLUSTER_MANAGER_NAMESPACE,
        WatchScope::Namespace => watched,
    }
}

/// A test's view of a control plane with an operator's CRDs, webhooks and role installed: its
/// own ([`start`](Self::start)), or the one the test binary's tests share
/// ([`shared`](Self::shared)). Dropping it stops the controllers it runs, and the control
/// plane if it is the test's own.
pub struct Environment {
    // Fields drop in this order: the controllers stop before the control plane.
    controllers: Controllers,
    operator: &'static Operator,
    client: Client,
    /// The namespace of the test's objects: [`NAMESPACE`] on a control plane of the test's
    /// own, one of the test's own on a shared one.
    namespace: String,
    /// The controllers' metrics: their reconciles and API requests.
    metrics: Metrics,
    plane: Plane,
}

/// A control plane with an operator's CRDs, webhooks, and role (a ClusterRole; the Role of an
/// operator scoped to its namespace goes to the namespace each test watches) installed.
pub(crate) struct Installed {
    // The webhook server stops before the control plane.
    /// Serves until dropped.
    webhooks: Option<WebhookServer>,
    plane: ControlPlane,
}

impl Installed {
    /// Installs `operator`'s CRDs and webhooks (served from this process) into `plane`, and its
    /// manager's ClusterRole; for the tests of the binary to `share`, or for one.
    async fn start(
        operator: &'static Operator,
        plane: ControlPlane,
        share: bool,
    ) -> anyhow::Result<Self> {
        let client = plane.client().await?;
        let ca = plane.ca().cert.clone();
        let webhooks = if operator.parts().webhooks.is_empty() {
            None
        } else {
            Some(WebhookServer::start(operator, &plane).await?)
        };
        let base_url = webhooks.as_ref().map(WebhookServer::base_url);
        webhooks::install_crds(&client, operator, base_url.as_deref(), &ca).await?;
        if let (Some(server), Some(base_url)) = (&webhooks, &base_url) {
            let namespace = match (share, operator.parts().scope) {
                (true, WatchScope::Namespace) => ManagerNamespace::EachTests,
                _ => ManagerNamespace::Named(manager_namespace(operator, NAMESPACE)),
            };
            webhooks::install_configurations(&client, operator, base_url, &ca, namespace).await?;
            if !derived::webhook_configurations(operator)?.is_empty() {
                webhooks::wait_until_called(&client, server, &ca).await?;
            }
        }
        if operator.parts().scope == WatchScope::Cluster {
            bind_manager_role(&client, operator, None, CLUSTER_MANAGER_NAMESPACE)
                .await
                .context("cannot grant the manager's role")?;
        }
        Ok(Self { webhooks, plane })
    }
}

/// The control plane an [`Environment`] works on.
enum Plane {
    /// Started for the test, stopped when it ends.
    Own(Box<Installed>),
    /// The test binary's, running until it exits.
    Shared(&'static Installed),
}

impl std::ops::Deref for Plane {
    type Target = Installed;

    fn deref(&self) -> &Installed {
        match self {
            Self::Own(installed) => installed,
            Self::Shared(installed) => installed,
        }
    }
}

/// The controllers a test runs.
struct Controllers {
    /// Each controller's name and why it stopped, once it has.
    stopped: Arc<Mutex<Vec<(&'static str, String)>>>,
    shutdown: CancellationToken,
    /// Shared by the controllers, as the manager's are.
    watches: Arc<SharedWatches>,
    _stop: DropGuard,
}

impl Environment {
    /// Starts a control plane for `operator`, as [`try_start`](Self::try_start) does; panics
    /// if it cannot, saying why (no binaries: how to get them).
    pub async fn start(operator: &'static Operator) -> Self {
        match Self::try_start(operator).await {
            Ok(env) => env,
            Err(error) => panic!("envtest: {error:#}"),
        }
    }

    /// Starts a control plane, installs `operator`'s CRDs and webhooks (served from this
    /// process) and its manager's role.
    pub async fn try_start(operator: &'static Operator) -> anyhow::Result<Self> {
        init_logging();
        let plane = ControlPlane::start().await?;
        let installed = Installed::start(operator, plane, false).await?;
        let client = installed.plane.client().await?;
        let env = Self::new(
            operator,
            client,
            NAMESPACE.to_owned(),
            Plane::Own(Box::new(installed)),
        );
        env.grant_namespaced_role().await?;
        Ok(env)
    }

    /// Works in a namespace of the test's own, on the control plane that the tests of this
    /// test binary share (as a kubebuilder suite's tests share its envtest): the first test to
    /// ask starts it and installs `operator`'s CRDs, webhooks and role; it stops when the
    /// binary exits. A test then starts in a fraction of a second instead of about 3 s.
    ///
    /// [`api`](Self::api) and the controllers the test [runs](Self::run) use the test's
    /// namespace ([`namespace`](Self::namespace)), and [`webhook_calls`](Self::webhook_calls)
    /// counts the reviews of objects there, so that tests running side by side do not see
    /// each other's objects. What is not in a namespace is shared: objects of cluster-scoped
    /// kinds, the namespaces of [`run_watching`](Self::run_watching), CRDs installed with
    /// [`install_crds`](Self::install_crds). A test of those starts its own.
    /// The webhooks of an operator scoped to its namespace, which look at the manager's
    /// namespace only, look at each test's. Panics if the control plane cannot start, saying
    /// why.
    ///
    /// ```no_run
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use rbuilder_runtime::Operator;
    /// # static OPERATOR: Operator = Operator::new("guestbook");
    /// # async fn f() {
    /// use kube::Api;
    /// use rbuilder_runtime::envtest::Environment;
    ///
    /// let env = Environment::shared(&OPERATOR).await;
    /// let config_maps: Api<ConfigMap> = env.api();
    /// assert_eq!(config_maps.namespace(), Some(env.namespace()));
    /// # }
    /// ```
    pub async fn shared(operator: &'static Operator) -> Self {
        match Self::try_shared(operator).await {
            Ok(env) => env,
            Err(error) => panic!("envtest: {error:#}"),
        }
    }

    /// [`shared`](Self::shared), returning why it could not start.
    pub async fn try_shared(operator: &'static Operator) -> anyhow::Result<Self> {
        init_logging();
        let installed = shared::plane(operator).await?;
        let client = installed.plane.client().await?;
        let namespace = shared::next_namespace();
        step(format!(
            "the shared control plane, in the namespace {namespace}"
        ));
        let labels = json!({ TEST_NAMESPACE_LABEL: "true" });
        create_namespace_with(&client, &namespace, labels)
            .await
            .with_context(|| format!("cannot create the namespace {namespace}"))?;
        let env = Self::new(operator, client, namespace, Plane::Shared(installed));
        env.grant_namespaced_role().await?;
        Ok(env)
    }

    fn new(operator: &'static Operator, client: Client, namespace: String, plane: Plane) -> Self {
        let shutdown = CancellationToken::new();
        Self {
            controllers: Controllers {
                stopped: Arc::default(),
                watches: Arc::default(),
                _stop: shutdown.clone().drop_guard(),
                shutdown,
            },
            operator,
            client,
            namespace,
            metrics: Metrics::default(),
            plane,
        }
    }

    /// Grants an operator scoped to its namespace its manager's role there, as `config/rbac`
    /// binds it: a Role in the test's namespace. (The ServiceAccount itself need not exist:
    /// RBAC matches its user name.)
    async fn grant_namespaced_role(&self) -> anyhow::Result<()> {
        if self.operator.parts().scope == WatchScope::Namespace {
            let namespace = Some(self.namespace.as_str());
            bind_manager_role(&self.client, self.operator, namespace, &self.namespace)
                .await
                .context("cannot grant the manager's role")?;
        }
        Ok(())
    }

    /// The manager's namespace: for an operator scoped to its namespace, the test's.
    fn manager_namespace(&self) -> &str {
        manager_namespace(self.operator, &self.namespace)
    }

    /// Installs the CRDs of `yaml`, a CRD file of another project (of an external type's, read
    /// with `include_str!`), as the cluster the operator runs in has them: the environment
    /// installs only the operator's own. Waits until the API server serves them; panics if it
    /// cannot install them, saying why.
    ///
    /// ```no_run
    /// # use rbuilder_runtime::envtest::Environment;
    /// # static OPERATOR: rbuilder_runtime::Operator = rbuilder_runtime::Operator::new("backups");
    /// # async fn f() {
    /// let env = Environment::start(&OPERATOR).await;
    /// # const CRD: &str = "";
    /// // CRD: the CRD file of another project's kind (`include_str!`), as the cluster has it.
    /// env.install_crds(CRD).await;
    /// # }
    /// ```
    pub async fn install_crds(&self, yaml: &str) {
        if let Err(error) = webhooks::install_crd_file(&self.client, yaml).await {
            panic!("envtest: cannot install the CRDs: {error:#}");
        }
    }

    /// A client of the cluster's admin: what the test itself uses.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    /// An [`Api`] over the objects of kind `K` in the test's [`namespace`](Self::namespace)
    /// (or the cluster, for a cluster-scoped kind), as the admin.
    pub fn api<K>(&self) -> Api<K>
    where
        K: Resource<DynamicType = (), Scope: Scope>,
    {
        K::Scope::api(self.client(), Some(&self.namespace))
    }

    /// The namespace of the test's objects: [`NAMESPACE`] on a control plane of the test's
    /// own ([`start`](Self::start)), one of the test's own on a shared one
    /// ([`shared`](Self::shared)).
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// How many times the API server has called `webhook` (an admission webhook, or a
    /// conversion: every conversion of the project shares one path); on a shared control
    /// plane, about objects in the test's namespace.
    ///
    /// ```no_run
    /// # use k8s_openapi::api::core::v1::ConfigMap as Site;
    /// # use rbuilder_runtime::envtest::Environment;
    /// # use rbuilder_runtime::webhook::{self, Defaulter, Denied, Webhook};
    /// # struct SiteWebhook;
    /// # impl Defaulter for SiteWebhook {
    /// #     type Resource = Site;
    /// #     fn default(_: &mut Site) -> Result<(), Denied> { Ok(()) }
    /// # }
    /// const DEFAULTING: Webhook = webhook::defaulting::<SiteWebhook>();
    /// static OPERATOR: rbuilder_runtime::Operator =
    ///     rbuilder_runtime::Operator::new("sites").webhooks(&[DEFAULTING]);
    ///
    /// # async fn f() {
    /// let env = Environment::start(&OPERATOR).await;
    /// // ... a Site applied with env.apply
    /// assert_eq!(env.webhook_calls(&DEFAULTING), 1, "the API server asked the defaulter");
    /// # }
    /// ```
    pub fn webhook_calls(&self, webhook: &Webhook) -> usize {
        let namespace = match self.plane {
            Plane::Own(_) => None,
            Plane::Shared(_) => Some(self.namespace.as_str()),
        };
        let server = self.plane.webhooks.as_ref();
        server
            .map(|server| server.calls(&webhook.path(), namespace))
            .unwrap_or_default()
    }

    /// The control plane, e.g. for its kubeconfig.
    pub fn control_plane(&self) -> &ControlPlane {
        &self.plane.plane
    }

    /// A client as the manager's ServiceAccount, with only the role `make manifests` grants
    /// it, its requests counted for [`writes`](Self::writes) and [`reads`](Self::reads).
    pub async fn manager_client(&self) -> Client {
        let namespace = self.manager_namespace();
        let user = format!("system:serviceaccount:{namespace}:{MANAGER_SERVICE_ACCOUNT}");
        let groups = [
            "system:serviceaccounts",
            &format!("system:serviceaccounts:{namespace}"),
            "system:authenticated",
        ];
        let config = self
            .control_plane()
            .config_as(&user, &groups)
            .await
            .unwrap_or_else(|error| panic!("envtest: cannot make the manager's client: {error}"));
        // As the manager makes the controllers' client, with its default rate limit; counted
        // as the manager counts its requests, for `writes`.
        harness::controllers_client(config, &self.metrics)
            .unwrap_or_else(|error| panic!("envtest: cannot make the manager's client: {error}"))
    }

    /// Runs `controller` as the manager runs it, until the environment is dropped: as the
    /// manager's ServiceAccount, with only the role `make manifests` grants it, watching every
    /// namespace (a namespaced operator, or a test on a shared control plane: the test's
    /// [`namespace`](Self::namespace)).
    ///
    /// A controller that holds a state of its own: [`run_with_state`](Self::run_with_state).
    pub async fn run(&self, controller: &'static Registration) {
        self.run_in(controller, self.namespaces(), States::default())
            .await;
    }

    /// Runs `controller` as [`run`](Self::run) does, with `state` as the state it holds of its
    /// own (see [`register_with_state`](rbuilder_runtime_core::register_with_state)): each test gives the
    /// state it tests the controller with, as `src/main.rs` gives the manager its own.
    ///
    /// ```no_run
    /// # use std::sync::Arc;
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use rbuilder_runtime::envtest::Environment;
    /// # use rbuilder_runtime::{Context, Operator, Reconciler, Registration};
    /// # use rbuilder_runtime::controller::Action;
    /// # static OPERATOR: Operator = Operator::new("guestbook");
    /// # struct Guestbooks;
    /// # impl Reconciler<Settings> for Guestbooks {
    /// #     type Resource = ConfigMap; type Error = kube::Error;
    /// #     const NAME: &'static str = "g"; const FINALIZER: Option<&'static str> = None;
    /// #     async fn apply(_: Arc<ConfigMap>, _: Arc<Context<Settings>>)
    /// #         -> Result<Action, kube::Error> { todo!() }
    /// # }
    /// /// The controller's settings, which `src/main.rs` reads from its flags.
    /// pub struct Settings {
    ///     pub replicas: i32,
    /// }
    ///
    /// const CONTROLLER: Registration =
    ///     rbuilder_runtime::register_with_state::<Guestbooks, Settings>();
    ///
    /// # async fn f() {
    /// let env = Environment::start(&OPERATOR).await;
    /// env.run_with_state(&CONTROLLER, Settings { replicas: 3 }).await;
    /// # }
    /// ```
    pub async fn run_with_state<S: Send + Sync + 'static>(
        &self,
        controller: &'static Registration,
        state: S,
    ) {
        let mut states = States::default();
        states.add(state);
        self.run_in(controller, self.namespaces(), states).await;
    }

    /// The namespaces the controllers watch by default: as the manager does, but on a shared
    /// control plane, where they watch the test's namespace only.
    fn namespaces(&self) -> Namespaces {
        match (&self.plane, self.operator.parts().scope) {
            (Plane::Own(_), WatchScope::Cluster) => Namespaces::all(),
            _ => Namespaces::only(self.namespace.as_str()),
        }
    }

    /// Runs `controller` as [`run`](Self::run) does, watching the namespaces of `list` as the
    /// manager does when `WATCH_NAMESPACE` is `list` (names separated by commas), with the
    /// manager's role as a Role in each of them, created if need be, and no other permission.
    pub async fn run_watching(&self, controller: &'static Registration, list: &str) {
        let namespaces = Namespaces::parse(list);
        for namespace in namespaces.names() {
            create_namespace(&self.client, namespace)
                .await
                .unwrap_or_else(|error| panic!("envtest: cannot create {namespace}: {error}"));
            let manager = self.manager_namespace();
            bind_manager_role(&self.client, self.operator, Some(namespace), manager)
                .await
                .unwrap_or_else(|error| {
                    panic!("envtest: cannot grant the manager's role: {error:#}")
                });
        }
        self.run_in(controller, namespaces, States::default()).await;
    }

    async fn run_in(
        &self,
        controller: &'static Registration,
        namespaces: Namespaces,
        states: States,
    ) {
        let client = self.manager_client().await;
        let ctx = harness::controllers_context(
            client,
            self.operator.field_manager(),
            namespaces,
            &self.metrics,
            Arc::clone(&self.controllers.watches),
        );
        let ctx = Arc::new(ctx);
        let (stopped, shutdown) = (
            Arc::clone(&self.controllers.stopped),
            self.controllers.shutdown.clone(),
        );
        step(format!("run the controller {}", controller.name));
        let run = harness::run_controller(controller, ctx, &states, shutdown)
            .unwrap_or_else(|error| panic!("envtest: {error}"));
        tokio::spawn(async move {
            let why = match run.await {
                Ok(()) => "it stopped".to_owned(),
                Err(error) => error_chain(&error),
            };
            let mut stopped = stopped.lock().unwrap_or_else(PoisonError::into_inner);
            stopped.push((controller.name, why));
        });
    }

    /// How many reconciles `controller` has finished, whatever their outcome: to know that a
    /// change was reconciled when the reconcile is expected to change nothing.
    ///
    /// ```no_run
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use rbuilder_runtime::envtest::Environment;
    /// # use rbuilder_runtime::{Operator, Registration};
    /// # static OPERATOR: Operator = Operator::new("guestbook");
    /// # const CONTROLLER: Registration = rbuilder_runtime::register::<Guestbooks>();
    /// # struct Guestbooks;
    /// # impl rbuilder_runtime::Reconciler for Guestbooks {
    /// #     type Resource = ConfigMap; type Error = kube::Error;
    /// #     const NAME: &'static str = "g"; const FINALIZER: Option<&'static str> = None;
    /// #     async fn apply(_: std::sync::Arc<ConfigMap>, _: std::sync::Arc<rbuilder_runtime::Context>)
    /// #         -> Result<rbuilder_runtime::controller::Action, kube::Error> { todo!() }
    /// # }
    /// # async fn f() {
    /// use kube::Api;
    /// use kube::api::{Patch, PatchParams};
    /// use serde_json::json;
    ///
    /// let env = Environment::start(&OPERATOR).await;
    /// env.run(&CONTROLLER).await;
    /// // ... the object applied and reconciled, then a change the controller has nothing to do for:
    /// let (reconciled, written, read) = (env.reconciles(&CONTROLLER), env.writes(), env.reads());
    /// let guestbooks: Api<ConfigMap> = env.api();
    /// let label = json!({"metadata": {"labels": {"team": "a"}}});
    /// let params = PatchParams::default();
    /// guestbooks.patch("guestbook", &params, &Patch::Merge(&label)).await.expect("labelled");
    /// env.wait_for("a reconcile of the label", async || {
    ///     match env.reconciles(&CONTROLLER) > reconciled {
    ///         true => Ok(()),
    ///         false => Err("no reconcile yet".to_owned()),
    ///     }
    /// })
    /// .await;
    /// assert_eq!(env.writes(), written, "nothing to write");
    /// assert_eq!(env.reads(), read, "read from the cache");
    /// # }
    /// ```
    pub fn reconciles(&self, controller: &Registration) -> u64 {
        self.metrics.reconciles_of(controller.name)
    }

    /// How many writes (POST, PUT, PATCH, DELETE) the controllers [run](Self::run) here have
    /// sent to the API server, answered or not.
    pub fn writes(&self) -> u64 {
        self.metrics.writes()
    }

    /// How many reads (GET requests of an object or a list) the controllers [run](Self::run)
    /// here have sent to the API server: to know that a reconcile read from a cache. The
    /// watches their caches open are not counted: a cache is ready once its first list is in,
    /// and its watch may be answered after a reconcile has run.
    pub fn reads(&self) -> u64 {
        self.metrics.reads()
    }

    /// Calls `probe` until it succeeds, and returns what it returned. Fails the test after 30
    /// seconds, with `what` it waited for and why `probe` last failed, or as soon as a
    /// controller or the control plane stops.
    ///
    /// ```no_run
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use rbuilder_runtime::envtest::Environment;
    /// # static OPERATOR: rbuilder_runtime::Operator = rbuilder_runtime::Operator::new("guestbook");
    /// # async fn f() {
    /// # let env = Environment::start(&OPERATOR).await;
    /// use kube::Api;
    /// use rbuilder_runtime::envtest::fetch;
    ///
    /// let config_maps: Api<ConfigMap> = env.api();
    /// // `fetch`'s error says what it found instead ("not found", say): the test's failure shows it.
    /// let settings = env.wait_for("the ConfigMap settings", async || {
    ///     let found = fetch(&config_maps, "settings").await?;
    ///     let data = found.data.unwrap_or_default();
    ///     data.get("mode").cloned().ok_or_else(|| format!("no mode yet: {data:?}"))
    /// })
    /// .await;
    /// assert_eq!(settings, "fast");
    /// # }
    /// ```
    pub async fn wait_for<T>(
        &self,
        what: &str,
        probe: impl AsyncFnMut() -> Result<T, String>,
    ) -> T {
        let check = |what: &str| self.check_running(what);
        checks::poll(what, WAIT_TIMEOUT, POLL_INTERVAL, check, probe).await
    }

    /// Panics if a controller or the control plane stopped while waiting for `what`.
    fn check_running(&self, what: &str) {
        let stopped = self.controllers.stopped.lock();
        let stopped = stopped.unwrap_or_else(PoisonError::into_inner);
        if let Some((name, why)) = stopped.first() {
            panic!("the controller {name} stopped while waiting for {what}: {why}");
        }
        if let Err(error) = self.control_plane().check_running() {
            panic!("{error:#}, while waiting for {what}");
        }
    }

    /// Server-side applies `obj`, as `kubectl apply --server-side` does, and returns it as
    /// stored; panics if the API server refuses it.
    ///
    /// ```no_run
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use rbuilder_runtime::envtest::Environment;
    /// # static OPERATOR: rbuilder_runtime::Operator = rbuilder_runtime::Operator::new("guestbook");
    /// # async fn f() {
    /// # let env = Environment::start(&OPERATOR).await;
    /// use kube::Api;
    /// use rbuilder_runtime::envtest::from_yaml;
    ///
    /// let config_maps: Api<ConfigMap> = env.api();
    /// let settings: ConfigMap = from_yaml("metadata: {name: settings}\ndata: {mode: fast}");
    /// let stored = env.apply(&config_maps, &settings).await;
    /// assert!(stored.metadata.resource_version.is_some());
    /// # }
    /// ```
    pub async fn apply<K>(&self, api: &Api<K>, obj: &K) -> K
    where
        K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned,
    {
        let name = obj.meta().name.clone().unwrap_or_default();
        self.try_apply(api, obj)
            .await
            .unwrap_or_else(|error| panic!("cannot apply {} {name}: {error}", K::kind(&())))
    }

    /// [`apply`](Self::apply), returning the API server's refusal, e.g. a webhook's.
    ///
    /// ```no_run
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use rbuilder_runtime::envtest::Environment;
    /// # static OPERATOR: rbuilder_runtime::Operator = rbuilder_runtime::Operator::new("guestbook");
    /// # async fn f() {
    /// # let env = Environment::start(&OPERATOR).await;
    /// use kube::Api;
    /// use rbuilder_runtime::envtest::from_yaml;
    ///
    /// let config_maps: Api<ConfigMap> = env.api();
    /// let misnamed: ConfigMap = from_yaml("metadata: {name: Not_A_Name}");
    /// let refused = env.try_apply(&config_maps, &misnamed).await;
    /// assert!(matches!(refused, Err(kube::Error::Api(status)) if status.code == 422));
    /// # }
    /// ```
    pub async fn try_apply<K>(&self, api: &Api<K>, obj: &K) -> Result<K, kube::Error>
    where
        K: Resource<DynamicType = ()> + Clone + Debug + Serialize + DeserializeOwned,
    {
        let name = obj.meta().name.as_deref().unwrap_or_default();
        let params = PatchParams::apply(FIELD_MANAGER).force();
        api.patch(name, &params, &Patch::Apply(obj)).await
    }
}

/// `yaml` as a `T`, e.g. a sample of `config/samples` read with `include_str!`; panics if it
/// is not one.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use rbuilder_runtime::envtest::from_yaml;
///
/// let settings: ConfigMap = from_yaml("metadata:\n  name: settings\ndata:\n  mode: fast\n");
/// assert_eq!(settings.metadata.name.as_deref(), Some("settings"));
/// ```
pub fn from_yaml<T: DeserializeOwned>(yaml: &str) -> T {
    serde_saphyr::from_str(yaml)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", std::any::type_name::<T>()))
}

/// Binds the manager's role (`config/rbac/role.yaml`, from the controllers' rules) to the
/// manager's ServiceAccount in `manager_namespace`, as `config/rbac` binds it: as a Role in
/// `namespace`, or as a ClusterRole if `None`. (The ServiceAccount itself need not exist: RBAC
/// matches its user name.)
async fn bind_manager_role(
    client: &Client,
    operator: &Operator,
    namespace: Option<&str>,
    manager_namespace: &str,
) -> anyhow::Result<()> {
    let (role, binding) = ("manager-role", "manager-rolebinding");
    let kind = if namespace.is_some() {
        "Role"
    } else {
        "ClusterRole"
    };
    let metadata = |name: &str| json!({"name": name, "namespace": namespace});
    let role_object = json!({"metadata": metadata(role), "rules": rbac::merged(operator)?});
    let binding_object = json!({
        "metadata": metadata(binding),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
        "subjects": [{
            "kind": "ServiceAccount",
            "name": MANAGER_SERVICE_ACCOUNT,
            "namespace": manager_namespace,
        }],
    });
    use serde_json::from_value as from;
    match namespace {
        None => {
            let role: ClusterRole = from(role_object)?;
            webhooks::apply(&Api::all(client.clone()), &role).await?;
            let binding: ClusterRoleBinding = from(binding_object)?;
            webhooks::apply(&Api::all(client.clone()), &binding).await?;
        }
        Some(namespace) => {
            let role: Role = from(role_object)?;
            webhooks::apply(&Api::namespaced(client.clone(), namespace), &role).await?;
            let binding: RoleBinding = from(binding_object)?;
            webhooks::apply(&Api::namespaced(client.clone(), namespace), &binding).await?;
        }
    }
    Ok(())
}

/// Creates the namespace `name` unless it exists.
pub(crate) async fn create_namespace(client: &Client, name: &str) -> Result<(), kube::Error> {
    create_namespace_with(client, name, json!({})).await
}

/// Creates the namespace `name` with `labels` unless it exists.
async fn create_namespace_with(
    client: &Client,
    name: &str,
    labels: serde_json::Value,
) -> Result<(), kube::Error> {
    let metadata = json!({"metadata": {"name": name, "labels": labels}});
    let namespace: Namespace = serde_json::from_value(metadata).map_err(kube::Error::SerdeError)?;
    match Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &namespace)
        .await
    {
        Err(kube::Error::Api(status)) if status.is_already_exists() => Ok(()),
        result => result.map(drop),
    }
}

/// The controllers' and webhooks' logs in the test's output (shown when it fails), at the level
/// RUST_LOG sets (default: info).
pub(crate) fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Only the first test of the process installs it; the others find it in place.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_test_writer()
        .with_ansi(false)
        .try_init();
}
