//! Caches of the other kinds a controller watches, so that its reconciles read them from
//! memory instead of sending a GET each time, as controller-runtime's informer cache does for
//! kubebuilder's controllers: [`Cache`], a typed handle a controller keeps in its state for
//! what it reads, and, kept by the runtime, the cache of each kind it
//! [owns](crate::Reconciler::owns).
//!
//! Each cache is kept by a reflector on the very watch that triggers the controller's
//! reconciles: one watch, not one for the triggers and another for the cache. Its objects are
//! without `managedFields`, which most of an object's size is and which reconciles rarely read
//! ([`release_field`](crate::Context::release_field) reads them fresh when it needs them); an
//! owned kind's keep less still: what the controller reads of each (its metadata, its status
//! and the fields the operator set; `owned::slim`). A cache is its controller's (each gets its
//! own [`Context`]), its watch shared with the other controllers that watch the same.

use std::fmt::Debug;
use std::sync::{Arc, OnceLock};

use futures::stream::Stream;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use tracing::debug;

use crate::context::Context;
use crate::namespaces;
use crate::scope::Scope;
use crate::stores::{Caches, Ready, ready, touched_and_vanished};
pub use crate::stores::{NotSynced, SYNC_TIMEOUT};

/// A cache of `K`s that a controller keeps from a watch of its own, so that its reconciles read
/// them from memory instead of sending a GET each: what controller-runtime's informer cache is
/// to kubebuilder's reads, and a kube-rs `reflector::Store` to a controller that keeps one in
/// its context. A typed handle: made empty where the controller's state is made
/// (`src/main.rs`, or a test), held in that state, filled by [`watch`](Self::watch) in the
/// controller's [`watches`](crate::Reconciler::watches), read in `apply`. Clones share the
/// cache.
///
/// ```
/// use std::sync::Arc;
///
/// use k8s_openapi::api::core::v1::Secret;
/// use kube::runtime::controller::Controller;
/// use kube::runtime::reflector::ObjectRef;
/// use kube::runtime::watcher;
/// use rbuilder_runtime::{Cache, Context};
/// # use k8s_openapi::api::core::v1::ConfigMap as Site;
///
/// /// What the controller of Sites holds: the Secrets it reads, from memory.
/// pub struct State {
///     pub secrets: Cache<Secret>,
/// }
///
/// // In `impl Reconciler<State>`: a change to a Secret labelled for a Site reconciles it.
/// fn watches(controller: Controller<Site>, ctx: &Context<State>) -> Controller<Site> {
///     let config = watcher::Config::default().labels("example.com/site");
///     let secrets = ctx.state().secrets.watch_watched(ctx, config);
///     controller.watches_stream(secrets, |secret| {
///         let site = secret.metadata.labels?.get("example.com/site")?.clone();
///         Some(ObjectRef::new(&site).within(secret.metadata.namespace.as_deref()?))
///     })
/// }
///
/// // In `apply`: the Secret as the watch last saw it, if there is one. (`Unwatched` goes into
/// // the reconciler's error with a variant `#[error("{0}")] Cache(#[from] cache::Unwatched)`.)
/// fn tls_secret(ctx: &Context<State>, namespace: &str) -> Result<Option<Arc<Secret>>, rbuilder_runtime::cache::Unwatched> {
///     ctx.state().secrets.get(&ObjectRef::new("tls").within(namespace))
/// }
/// # let state = State { secrets: Cache::new() };
/// # let _ = (watches, tls_secret, state);
/// ```
///
/// The controller waits for the cache's first list before its first reconcile, so that a
/// reconcile never takes an object missing from a cache still being filled for one that does
/// not exist. A cached object has no `managedFields` and lags the cluster by the watch's
/// delay; an object deleted while the watch was down is sent as deleted once it has listed
/// again. The manager needs `list` and `watch` on `K` (the controller's `rbac_rules`: unlike
/// [`owns`](crate::Reconciler::owns), a cache grants nothing by itself; without them the watch
/// fails, logged, and reconciles wait for its first list until they fail with
/// [`NotSynced`]). A handle holds one watch, the first: two controllers that take one state
/// both watch the cache it holds, and both are triggered, but only the first watch fills it,
/// and both wait for that watch's first list. Two caches of one kind (other label selectors,
/// say) are two handles. Objects the controller owns need no handle: declare their kind in
/// [`owns`](crate::Reconciler::owns).
pub struct Cache<K: Resource<DynamicType = ()> + Clone + 'static> {
    /// The store its first watch fills, and when that has listed.
    store: Arc<OnceLock<(Store<K>, Ready)>>,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Clone for Cache<K> {
    fn clone(&self) -> Self {
        Self {
            store: Arc::clone(&self.store),
        }
    }
}

impl<K> Default for Cache<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    fn default() -> Self {
        Self::new()
    }
}

impl<K> Cache<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    /// An empty cache, until a controller [watches](Self::watch) it.
    pub fn new() -> Self {
        Self {
            store: Arc::default(),
        }
    }

    /// A cache that holds `objects`, as if its watch had listed them: for unit tests of
    /// reconcilers that read it.
    pub fn of(objects: impl IntoIterator<Item = K>) -> Self {
        let (store, mut writer) = reflector::store();
        writer.apply_watcher_event(&watcher::Event::Init);
        for obj in objects {
            writer.apply_watcher_event(&watcher::Event::InitApply(obj));
        }
        writer.apply_watcher_event(&watcher::Event::InitDone);
        let ready = ready(&store);
        Self {
            store: Arc::new(OnceLock::from((store, ready))),
        }
    }

    /// Watches the `K`s that `api` lists with `config`, keeps them in this cache for `ctx`'s
    /// controller, and returns the watch for the controller to be triggered by, in
    /// [`watches`](crate::Reconciler::watches): `controller.watches_stream(...)` with a mapper
    /// to the objects to reconcile, or `owns_stream` for objects that carry an owner reference.
    pub fn watch(
        &self,
        ctx: &Context<impl Send + Sync + 'static>,
        api: Api<K>,
        config: watcher::Config,
    ) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static {
        self.watch_all(ctx, vec![api], config)
    }

    /// [`watch`](Self::watch) of the `K`s in the namespaces the controllers watch
    /// (`WATCH_NAMESPACE`: one watch per namespace when it lists several). Controllers that
    /// watch the same (kind, `config`) share one watch and one copy of the objects, as
    /// controller-runtime's informers are shared.
    pub fn watch_watched(
        &self,
        ctx: &Context<impl Send + Sync + 'static>,
        config: watcher::Config,
    ) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static
    where
        K::Scope: Scope,
    {
        let apis = ctx.watch_namespaces.apis(&ctx.client);
        let (store, ready, _, changes) =
            ctx.watches
                .watch(apis, config, namespaces::without_managed_fields);
        self.keep(&ctx.caches, store, ready);
        changes
    }

    fn watch_all(
        &self,
        ctx: &Context<impl Send + Sync + 'static>,
        apis: Vec<Api<K>>,
        config: watcher::Config,
    ) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static {
        let (store, writer) = reflector::store();
        self.keep(&ctx.caches, store.clone(), ready(&store));
        let events = namespaces::reflected(apis, config, writer);
        touched_and_vanished(events, store)
    }

    /// Keeps `store` as this cache's, which the controller of `caches` waits for (`ready`)
    /// before its reconciles.
    fn keep(&self, caches: &Caches, store: Store<K>, ready: Ready) {
        match self.store.set((store, ready.clone())) {
            Ok(()) => caches.wait_until(&ready),
            Err(_) => {
                // A second watch of the handle (a state two controllers take): it triggers its
                // controller, and the first watch fills the cache both read.
                let kind = K::kind(&());
                debug!(%kind, "a cache watched again: its first watch fills it");
                if let Some((_, first)) = self.store.get() {
                    caches.wait_until(first);
                }
            }
        }
    }

    /// The object `key` names, as the watch last saw it (`None`: there is none, as far as the
    /// watch knows). `Err` if no controller watches this cache.
    pub fn get(&self, key: &ObjectRef<K>) -> Result<Option<Arc<K>>, Unwatched> {
        Ok(self.store()?.get(key))
    }

    /// Every object in the cache.
    pub fn all(&self) -> Result<Vec<Arc<K>>, Unwatched> {
        Ok(self.store()?.state())
    }

    fn store(&self) -> Result<&Store<K>, Unwatched> {
        let store = self.store.get().map(|(store, _)| store);
        store.ok_or(Unwatched {
            kind: K::kind(&()).into_owned(),
        })
    }
}

/// A [`Cache`] read before any controller watched it: a controller's `watches` must
/// [`watch`](Cache::watch) the caches its `apply` reads.
#[derive(Debug, thiserror::Error)]
#[error(
    "the cache of {kind} is not watched: watch it in the controller's `watches` \
     (cache.watch(ctx, api, config))"
)]
pub struct Unwatched {
    kind: String,
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
    use kube::Api;
    use kube::runtime::reflector::ObjectRef;
    use kube::runtime::watcher;
    use serde_json::json;

    use super::*;
    use crate::owned::Slim;
    use crate::stores::tests::deployment;
    use crate::testing::{Method, mock_context, within_timeout};

    #[tokio::test]
    async fn a_controller_reads_its_cache_by_kind() {
        let (ctx, _server) = mock_context();
        // An owned kind's cache keeps its objects as `Slim` ones.
        assert!(ctx.caches.get::<Slim<Deployment>>().is_none());
        ctx.cache_of([deployment("a")]);
        let cache = ctx
            .caches
            .get::<Slim<Deployment>>()
            .expect("a cache of Deployments");
        let key = ObjectRef::new("a").within("default");
        assert!(cache.get(&key).is_some());
        // Only the kinds it caches.
        assert!(ctx.caches.get::<Slim<ConfigMap>>().is_none());
        within_timeout(ctx.caches.synced(SYNC_TIMEOUT))
            .await
            .expect("a filled cache is synced");
    }

    /// Each controller has caches of its own.
    #[tokio::test]
    async fn a_controllers_context_starts_without_caches() {
        let (ctx, _server) = mock_context();
        ctx.cache_of([deployment("a")]);
        assert!(ctx.for_controller().caches.get::<Deployment>().is_none());
    }

    /// A typed cache reads what it holds, and says so when no controller watches it.
    #[test]
    fn a_typed_cache_is_read_once_watched() {
        let key = ObjectRef::new("a").within("default");
        let filled = Cache::of([deployment("a")]);
        let found = filled.get(&key).expect("a filled cache");
        assert_eq!(
            found.map(|d| d.metadata.uid.clone()),
            Some(Some("d-1".into()))
        );
        assert_eq!(filled.clone().all().map(|all| all.len()).ok(), Some(1));
        let unwatched = Cache::<Deployment>::new()
            .get(&key)
            .expect_err("not watched");
        assert_eq!(
            unwatched.to_string(),
            "the cache of Deployment is not watched: watch it in the controller's `watches` \
             (cache.watch(ctx, api, config))"
        );
    }

    /// A typed cache watched by a controller holds its watch's objects, and the controller
    /// waits for its first list; a second watch of one handle leaves the first's in place.
    #[tokio::test]
    async fn a_typed_cache_is_filled_by_its_watch_and_waited_for() {
        let (ctx, mut server) = mock_context();
        let cache: Cache<ConfigMap> = Cache::new();
        let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), "default");
        let watch = cache.watch(&ctx, api.clone(), watcher::Config::default());
        let again = cache.watch(&ctx, api, watcher::Config::default());
        drop(again);
        let mut watch = Box::pin(watch);
        // Polled on: the list is in the cache once the watch has gone past its end.
        let watching = tokio::spawn(async move { while watch.next().await.is_some() {} });
        let list = json!({
            "apiVersion": "v1", "kind": "ConfigMapList",
            "metadata": {"resourceVersion": "1"},
            "items": [{"metadata": {"name": "a", "namespace": "default", "uid": "c-1"}}],
        });
        server
            .expect(
                Method::GET,
                "/api/v1/namespaces/default/configmaps",
                200,
                list,
            )
            .await;
        within_timeout(ctx.caches.synced(SYNC_TIMEOUT))
            .await
            .expect("synced once listed");
        let key = ObjectRef::new("a").within("default");
        assert!(cache.get(&key).expect("watched").is_some());
        watching.abort();
    }

    fn owning_replicas(mut deployment: Deployment) -> Deployment {
        deployment.spec.replicas = Some(3);
        deployment.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
            manager: Some("test-operator".into()),
            operation: Some("Apply".into()),
            fields_v1: Some(FieldsV1(json!({"f:spec": {"f:replicas": {}}}))),
            ..ManagedFieldsEntry::default()
        }]);
        deployment
    }

    /// A cached object has no managedFields: `release_field` reads them.
    #[tokio::test]
    async fn release_field_reads_what_a_cached_object_lacks() {
        let (ctx, mut server) = mock_context();
        let api: Api<Deployment> = Api::namespaced(ctx.client.clone(), "default");
        let path = "/apis/apps/v1/namespaces/default/deployments/a";
        let read = json!(owning_replicas(deployment("a")));
        let released = tokio::spawn(async move {
            server.expect(Method::GET, path, 200, read.clone()).await;
            server.expect(Method::PATCH, path, 200, read).await
        });
        let cached = deployment("a");
        let replicas = ["spec", "replicas"];
        let result = within_timeout(ctx.release_field(&api, &cached, &replicas)).await;
        assert!(result.expect("released").is_some());
        let patch = released.await.expect("the API server's script");
        assert_eq!(patch["spec"], json!({"replicas": 3}));
        assert_eq!(patch["metadata"]["uid"], "d-1");
    }

    /// Read again, it is another object: nothing is released (the apply that follows, with
    /// the cached uid, is refused).
    #[tokio::test]
    async fn release_field_leaves_an_object_replaced_since() {
        let (ctx, mut server) = mock_context();
        let api: Api<Deployment> = Api::namespaced(ctx.client.clone(), "default");
        let path = "/apis/apps/v1/namespaces/default/deployments/a";
        let mut replaced = owning_replicas(deployment("a"));
        replaced.metadata.uid = Some("d-2".into());
        let read = json!(replaced);
        let script = tokio::spawn(async move {
            server.expect(Method::GET, path, 200, read).await;
        });
        let replicas = ["spec", "replicas"];
        let result = within_timeout(ctx.release_field(&api, &deployment("a"), &replicas)).await;
        assert!(result.expect("no failure").is_none());
        script.await.expect("the API server's script");
    }
}

/// Against a real kube-apiserver and etcd (envtest).
#[cfg(test)]
mod envtests {
    use std::net::SocketAddr;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex, OnceLock, PoisonError};
    use std::time::Instant;

    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::api::rbac::v1::PolicyRule;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::api::{DeleteParams, PostParams};
    use kube::core::crd::MergeError;
    use kube::runtime::watcher;
    use kube::{Api, Client, CustomResourceExt, Resource, ResourceExt};
    use serde::Serialize;
    use tokio::net::{TcpListener, TcpStream};
    use tokio::task::JoinSet;
    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::controller::{Action, Controller};
    use crate::envtest::webhooks::install_crds;
    use crate::envtest::{ControlPlane, NAMESPACE, step};
    use crate::owned::{ControllerExt, MANAGED_BY};
    use crate::state::States;
    use crate::{Context, Operator, Reconciler, Registration, register};

    /// A kind that owns ConfigMaps.
    #[derive(
        kube::CustomResource, schemars::JsonSchema, Serialize, serde::Deserialize, Clone, Debug,
    )]
    #[kube(group = "test.my.domain", version = "v1", kind = "Holder", namespaced)]
    struct HolderSpec {
        size: i32,
    }

    /// Each reconcile of a Holder: its name, when, and whether the controller's cache held its
    /// ConfigMap then.
    static RECONCILED: Mutex<Vec<(String, Instant, bool)>> = Mutex::new(Vec::new());

    /// The clients through which [`Holders`] watch their ConfigMaps, by `OWNED`.
    static CHILDREN_CLIENTS: [OnceLock<Client>; 2] = [OnceLock::new(), OnceLock::new()];

    /// The cache of ConfigMaps that `Holders<false>` keeps (`Holders<true>`'s is its context's).
    static CHILDREN_CACHE: OnceLock<Cache<ConfigMap>> = OnceLock::new();

    /// How many times `name` was reconciled after `since` with its ConfigMap in the cache
    /// (`cached`) or not.
    fn reconciles_since(name: &str, since: Instant, cached: bool) -> usize {
        let all = RECONCILED.lock().unwrap_or_else(PoisonError::into_inner);
        all.iter()
            .filter(|(seen, at, held)| seen == name && *at > since && *held == cached)
            .count()
    }

    /// Whether the cache of `Holders<OWNED>` holds the ConfigMap of the Holder `name`.
    fn child_cached<const OWNED: bool>(ctx: &Context, name: &str) -> bool {
        let child = format!("{name}-child");
        if OWNED {
            let store = ctx.caches.get::<crate::owned::Slim<ConfigMap>>();
            let key = ObjectRef::new(&child).within(NAMESPACE);
            store.is_some_and(|store| store.get(&key).is_some())
        } else {
            let cache = CHILDREN_CACHE.get();
            let key = ObjectRef::new(&child).within(NAMESPACE);
            cache.is_some_and(|cache| matches!(cache.get(&key), Ok(Some(_))))
        }
    }

    /// Holders that watch their ConfigMaps with `watch_owned` if `OWNED`, else with
    /// `owns_stream(ctx.cache(...))`.
    struct Holders<const OWNED: bool>;

    impl<const OWNED: bool> Reconciler for Holders<OWNED> {
        type Resource = Holder;
        type Error = kube::Error;
        const NAME: &'static str = "holders";
        const FINALIZER: Option<&'static str> = None;

        async fn apply(obj: Arc<Holder>, ctx: Arc<Context>) -> Result<Action, kube::Error> {
            let cached = child_cached::<OWNED>(&ctx, &obj.name_any());
            let mut all = RECONCILED.lock().unwrap_or_else(PoisonError::into_inner);
            all.push((obj.name_any(), Instant::now(), cached));
            // No periodic resync: only a change wakes a Holder.
            Ok(Action::await_change())
        }

        fn rbac_rules() -> Vec<PolicyRule> {
            Vec::new()
        }

        fn watches(controller: Controller<Holder>, ctx: &Context) -> Controller<Holder> {
            let client = CHILDREN_CLIENTS[usize::from(OWNED)]
                .get()
                .expect("the children's client")
                .clone();
            if OWNED {
                // The controller's own context (its caches) but for the client.
                let mut through_proxy = ctx.clone();
                through_proxy.client = client;
                // What `Reconciler::owns` does, with this client.
                #[allow(deprecated)]
                controller.watch_owned::<ConfigMap>(&through_proxy)
            } else {
                let children: Api<ConfigMap> = Api::namespaced(client, NAMESPACE);
                let cache = CHILDREN_CACHE.get_or_init(Cache::new);
                controller.owns_stream(cache.watch(ctx, children, watcher::Config::default()))
            }
        }
    }

    fn crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
        Ok(vec![Holder::crd()])
    }

    static OPERATOR: Operator = Operator::new("holders").crds(crds);

    /// A TCP proxy to `upstream` that can be cut: its connections dropped, new ones refused.
    struct Proxy {
        address: SocketAddr,
        cut: Arc<AtomicBool>,
        connections: Arc<Mutex<JoinSet<()>>>,
    }

    impl Proxy {
        async fn start(upstream: SocketAddr) -> Self {
            let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
            let address = listener.local_addr().expect("its address");
            let cut = Arc::new(AtomicBool::new(false));
            let connections = Arc::new(Mutex::new(JoinSet::new()));
            let (is_cut, tasks) = (Arc::clone(&cut), Arc::clone(&connections));
            tokio::spawn(async move {
                while let Ok((mut client, _)) = listener.accept().await {
                    if is_cut.load(Ordering::SeqCst) {
                        continue; // dropped: the connection is closed at once
                    }
                    let mut tasks = tasks.lock().unwrap_or_else(PoisonError::into_inner);
                    tasks.spawn(async move {
                        if let Ok(mut server) = TcpStream::connect(upstream).await {
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                    });
                }
            });
            Self {
                address,
                cut,
                connections,
            }
        }

        /// Drops every connection and refuses new ones, as a network partition would.
        fn cut(&self) {
            self.cut.store(true, Ordering::SeqCst);
            let tasks = self.connections.lock();
            tasks.unwrap_or_else(PoisonError::into_inner).abort_all();
        }

        fn heal(&self) {
            self.cut.store(false, Ordering::SeqCst);
        }
    }

    /// A ConfigMap deleted while its watch was disconnected, whose watch then had to list
    /// again (its resourceVersion compacted away: 410 Gone), wakes its owner, as client-go's
    /// informer sends it as `DeletedFinalStateUnknown`. Without it the owner would wait for its
    /// next resync (kube's watcher only puts what exists in the store).
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn a_child_deleted_while_its_watch_was_down_wakes_its_owner() {
        child_deleted_while_its_watch_was_down::<false>("holder").await;
    }

    /// The same through [`ControllerExt::watch_owned`](crate::owned::ControllerExt), whose
    /// children carry the operator's label.
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn a_child_deleted_while_watch_owned_was_down_wakes_its_owner() {
        child_deleted_while_its_watch_was_down::<true>("owner").await;
    }

    /// A Holder `name` owns a ConfigMap, watched by [`Holders<OWNED>`] through a proxy; the
    /// ConfigMap is deleted while the proxy is cut and etcd compacted; once healed the Holder
    /// must be reconciled.
    async fn child_deleted_while_its_watch_was_down<const OWNED: bool>(name: &str) {
        // Watches read etcd: its compaction expires a resourceVersion (with the watch cache,
        // only the API server's restart does, which makes every watch list again).
        crate::envtest::init_logging();
        let plane = ControlPlane::start_with(&["--watch-cache=false"]).await;
        let plane = plane.expect("a control plane");
        let client = plane.client().await.expect("a client");
        install_crds(&client, &OPERATOR, None, &plane.ca().cert)
            .await
            .expect("the CRD");

        // The Holders' own watch goes straight to the API server, their ConfigMaps' through a
        // proxy that the test cuts.
        let upstream: SocketAddr = plane
            .server()
            .trim_start_matches("https://")
            .parse()
            .expect("the API server's address");
        let proxy = Proxy::start(upstream).await;
        let config = plane.config_as("admin", &["system:masters"]).await;
        let mut config = config.expect("a configuration");
        config.cluster_url = format!("https://{}", proxy.address).parse().expect("a URL");
        let children_client = Client::try_from(config).expect("a client");
        CHILDREN_CLIENTS[usize::from(OWNED)]
            .set(children_client)
            .unwrap_or_else(|_| panic!("one test sets it"));
        let ctx = Context::new(
            client.clone(),
            OPERATOR.field_manager(),
            crate::namespaces::Namespaces::all(),
        );
        let shutdown = CancellationToken::new();
        let _stop = shutdown.clone().drop_guard();
        let holders: Registration = register::<Holders<OWNED>>();
        let run = (holders.run)(Arc::new(ctx), &States::default(), shutdown);
        tokio::spawn(run.expect("a controller without a state"));

        let wait = async |what: &str, probe: &dyn Fn() -> bool| {
            let deadline = Instant::now() + std::time::Duration::from_secs(60);
            while !probe() {
                plane.check_running().expect("the control plane");
                assert!(Instant::now() < deadline, "timed out waiting for {what}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        };

        step("a Holder owns a ConfigMap");
        let start = Instant::now();
        let holders: Api<Holder> = Api::namespaced(client.clone(), NAMESPACE);
        let holder = Holder::new(name, HolderSpec { size: 1 });
        let holder = holders.create(&PostParams::default(), &holder).await;
        let holder = holder.expect("the Holder is created");
        let mut child = ConfigMap::default();
        let child_name = format!("{name}-child");
        child.metadata.name = Some(child_name.clone());
        if OWNED {
            // What `Context::owned` labels its objects with, and `watch_owned` watches.
            let label = (MANAGED_BY.to_owned(), OPERATOR.field_manager());
            child.metadata.labels = Some([label].into());
        }
        child.metadata.owner_references = holder.controller_owner_ref(&()).map(|r| vec![r]);
        let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
        let created = configmaps.create(&PostParams::default(), &child).await;
        created.expect("the ConfigMap is created");
        // Until a reconcile finds the ConfigMap in the cache, its watch may not have it yet
        // (the Holder's own creation reconciles it too): cut before, the watch would never
        // have seen what is then deleted.
        wait("a reconcile with the ConfigMap in the cache", &|| {
            reconciles_since(name, start, true) >= 1
        })
        .await;

        step("cut the ConfigMaps' watch; delete the ConfigMap; compact etcd");
        proxy.cut();
        let deleted = configmaps
            .delete(&child_name, &DeleteParams::default())
            .await;
        deleted.expect("the ConfigMap is deleted");
        let deleted = Instant::now();
        // A write after the deletion, and etcd compacted up to it: the deletion's revision
        // is compacted too (the API server compacts minutes behind; a compaction at the
        // deletion itself would leave a watch the deletion without the object it deleted).
        let mut later = ConfigMap::default();
        later.metadata.name = Some("later".into());
        let written = configmaps.create(&PostParams::default(), &later).await;
        written.expect("another ConfigMap is created");
        plane.compact_etcd().await.expect("etcd compacted");

        step("heal the watch: it lists again, and the Holder is reconciled");
        proxy.heal();
        wait(
            "the Holder's reconcile with its ConfigMap gone from the cache",
            &|| reconciles_since(name, deleted, false) >= 1,
        )
        .await;
    }
}
