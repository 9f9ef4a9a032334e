//! What every reconcile gets besides its object: the client, Events, the watched namespace, the
//! caches of what its controller watches.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{Patch, PatchParams};
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher;
use kube::{Api, Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tracing::warn;

use crate::events::{Event, Recorder};
use crate::metrics::Metrics;
use crate::namespaces::{self, Namespaces};
use crate::shared_watches::SharedWatches;
use crate::stores::{self, Caches};
// The trait's public path: it is in the bounds of `Reconciler::Resource` and of `Owned`.
pub use crate::scope::Scope;

/// How long publishing an Event may hold up a reconcile.
pub(crate) const EVENT_TIMEOUT: Duration = Duration::from_secs(10);

/// How many Events published in the background ([`Context::publish_later`]) may be on their
/// way at once; past that, more are dropped, as client-go's broadcaster drops Events when its
/// queue (1000 deep) is full, rather than hold up the reconciles that report them.
pub(crate) const EVENTS_IN_FLIGHT: usize = 100;

/// What each reconciler gets besides the object: built once by the manager; each controller
/// gets a copy (in an `Arc`) with caches of its own.
///
/// `S` is the state the controller holds of its own (a configuration read at start, a client
/// of another service), which [`state`](Self::state) returns: `()` for a controller without
/// one. The manager is given it in `src/main.rs`
/// ([`Manager::state`](crate::manager::Manager::state)), a unit test with
/// [`with_state`](Self::with_state); see [`register_with_state`](crate::register_with_state).
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::ResourceExt;
/// use kube::api::{Patch, PatchParams};
/// use rbuilder_runtime::owned::MANAGED_BY;
/// use rbuilder_runtime::{Context, Event, EventType};
///
/// /// Applies the ConfigMap of `owner`'s settings beside it, as the operator's, and says so.
/// async fn settings_of(owner: &ConfigMap, ctx: &Context) -> Result<(), kube::Error> {
///     let mut settings = ConfigMap::default();
///     let name = format!("{}-settings", owner.name_any());
///     settings.metadata.name = Some(name.clone());
///     let manager = ctx.field_manager().to_owned();
///     settings.labels_mut().insert(MANAGED_BY.to_owned(), manager);
///     let configmaps = ctx.api_near::<ConfigMap>(owner);
///     configmaps.patch(&name, &ctx.apply_params(), &Patch::Apply(&settings)).await?;
///     let event = Event {
///         type_: EventType::Normal,
///         reason: "Configured".into(),
///         note: Some(format!("applied ConfigMap {name}")),
///         action: "Reconcile".into(),
///         secondary: None,
///     };
///     ctx.publish(owner, event).await;
///     Ok(())
/// }
/// # let _ = settings_of;
/// ```
///
/// Owned objects are simpler with [`owned`](Self::owned), which adds the owner reference, the
/// label and the Event.
pub struct Context<S = ()> {
    /// Client for the Kubernetes API.
    pub client: Client,
    /// The namespaces from `WATCH_NAMESPACE`: when set, controllers watch only those (a
    /// project made with `rbuilder init --namespaced` sets it to the manager's own, and binds a
    /// namespaced Role instead of a ClusterRole); unset, every namespace.
    pub watch_namespaces: Namespaces,
    /// The name the operator uses towards the API server: see [`crate::Operator::field_manager`].
    field_manager: String,
    recorder: Arc<Recorder>,
    /// The budget of [`publish_later`](Self::publish_later), shared by every controller.
    events_in_flight: Arc<tokio::sync::Semaphore>,
    pub(crate) metrics: Metrics,
    /// The caches that [`cache`](Self::cache) fills, for [`cached`](Self::cached).
    pub(crate) caches: Arc<Caches>,
    /// The manager's watches, which its controllers share (see [`SharedWatches`]).
    pub(crate) watches: Arc<SharedWatches>,
    /// The controller's own: see [`state`](Self::state).
    state: Arc<S>,
}

// Not derived: a derive would ask `S: Clone`, and the state is shared, not copied.
impl<S> Clone for Context<S> {
    fn clone(&self) -> Self {
        self.with_shared_state(Arc::clone(&self.state))
    }
}

impl Context {
    /// The context of an operator named `field_manager` (see
    /// [`crate::Operator::field_manager`]).
    pub fn new(client: Client, field_manager: String, watch_namespaces: Namespaces) -> Self {
        Self {
            recorder: Arc::new(Recorder::new(client.clone(), field_manager.clone())),
            events_in_flight: Arc::new(tokio::sync::Semaphore::new(EVENTS_IN_FLIGHT)),
            client,
            watch_namespaces,
            field_manager,
            metrics: Metrics::default(),
            caches: Arc::default(),
            watches: Arc::default(),
            state: Arc::new(()),
        }
    }
}

impl<S> Context<S> {
    /// What the controller holds of its own, as `src/main.rs` gave it to the manager (or a
    /// test to [`with_state`](Self::with_state)).
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use rbuilder_runtime::Context;
    ///
    /// /// A setting of the operator's, read at start.
    /// struct Settings {
    ///     registry: String,
    /// }
    ///
    /// fn image(ctx: &Context<Settings>, name: &str) -> String {
    ///     format!("{}/{name}", ctx.state().registry)
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let (ctx, _server) = rbuilder_runtime::testing::mock_context();
    /// let ctx = ctx.with_state(Settings { registry: "registry.example.com".into() });
    /// assert_eq!(image(&ctx, "nginx"), "registry.example.com/nginx");
    /// # }
    /// ```
    pub fn state(&self) -> &S {
        &self.state
    }

    /// This context holding `state` instead: the same client, Events, metrics and caches. For
    /// tests, which give each controller the state they test it with; the manager gives it
    /// what [`Manager::state`](crate::manager::Manager::state) was given.
    pub fn with_state<T>(&self, state: T) -> Context<T> {
        self.with_shared_state(Arc::new(state))
    }

    /// [`with_state`](Self::with_state) with a state shared with others.
    pub(crate) fn with_shared_state<T>(&self, state: Arc<T>) -> Context<T> {
        Context {
            client: self.client.clone(),
            watch_namespaces: self.watch_namespaces.clone(),
            field_manager: self.field_manager.clone(),
            recorder: Arc::clone(&self.recorder),
            events_in_flight: Arc::clone(&self.events_in_flight),
            metrics: self.metrics.clone(),
            caches: Arc::clone(&self.caches),
            watches: Arc::clone(&self.watches),
            state,
        }
    }

    /// This context without its state: what the runtime's own code takes.
    pub(crate) fn stateless(&self) -> Context {
        self.with_shared_state(Arc::new(()))
    }

    /// This context sharing `watches` (those of the contexts of other controllers of one
    /// environment, for envtest).
    pub(crate) fn with_watches(mut self, watches: Arc<SharedWatches>) -> Self {
        self.watches = watches;
        self
    }

    /// This context for one controller: the same client, Events, metrics and shared watches,
    /// no caches yet.
    pub(crate) fn for_controller(&self) -> Self {
        Self {
            caches: Arc::default(),
            ..self.clone()
        }
    }

    /// Watches the `K`s that `api` lists with `config`, keeps them in a cache that
    /// [`cached`](Self::cached) reads, and returns the watch for the controller to be triggered
    /// by: in [`Reconciler::watches`](crate::Reconciler::watches),
    /// `controller.owns_stream(ctx.cache(api, config))` (or `watches_stream`, with a mapper).
    /// One watch then both triggers reconciles and fills the cache, so reconciles read the
    /// objects from memory instead of sending a GET each.
    ///
    /// The cached objects have no `managedFields` (most of an object's size). The controller
    /// waits for the cache's first list before its first reconcile, so that a reconcile never
    /// takes an object missing from a cache still being filled for one that does not exist.
    /// An object deleted while the watch was down (the API server restarted, the network
    /// failed) is sent as deleted once the watch has listed again, as client-go's informer
    /// sends it, so that its owner is reconciled then, not at its next resync.
    /// One cache per kind: a second call for `K` replaces the first's cache (its watch still
    /// triggers reconciles). Deprecated for a typed handle, [`Cache`](crate::Cache), which
    /// holds no such trap.
    #[deprecated(
        since = "0.2.0",
        note = "keep a typed `Cache<K>` in the controller's state and `watch` it; owned kinds: `Reconciler::owns`"
    )]
    pub fn cache<K>(
        &self,
        api: Api<K>,
        config: watcher::Config,
    ) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        self.cache_from(vec![api], config)
    }

    /// [`cache`](Self::cache) of the `K`s in the namespaces the controllers watch
    /// ([`watch_namespaces`](Self::watch_namespaces): one watch per namespace when
    /// `WATCH_NAMESPACE` lists several, where `ctx.cache(ctx.api(), config)` would need to list
    /// every namespace).
    #[deprecated(
        since = "0.2.0",
        note = "keep a typed `Cache<K>` in the controller's state and `watch` it; owned kinds: `Reconciler::owns`"
    )]
    pub fn cache_watched<K>(
        &self,
        config: watcher::Config,
    ) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        K::Scope: Scope,
    {
        self.cache_of_kind(config)
    }

    /// The cache of the `K`s in the watched namespaces, kept by kind, whole (less
    /// `managedFields`): the deprecated [`cache_watched`](Self::cache_watched)'s. One watch and
    /// one cache for every controller of the manager that watches the same (see
    /// [`SharedWatches`]).
    fn cache_of_kind<K>(
        &self,
        config: watcher::Config,
    ) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        K::Scope: Scope,
    {
        let apis = self.watch_namespaces.apis(&self.client);
        let keep = namespaces::without_managed_fields;
        let (store, ready, _, changes) = self.watches.watch(apis, config, keep);
        self.caches.insert_ready(store, &ready);
        changes
    }

    fn cache_from<K>(
        &self,
        apis: Vec<Api<K>>,
        config: watcher::Config,
    ) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        let (store, writer) = reflector::store();
        self.caches.insert(store.clone());
        let events = namespaces::reflected(apis, config, writer);
        // Deletions too, those the watch missed while it was down included: a deleted object
        // must reconcile its owner (e.g. to create it again).
        stores::touched_and_vanished(events, store)
    }

    /// The cache of `K`s that [`cache`](Self::cache) or [`cache_watched`](Self::cache_watched)
    /// keeps, if this controller keeps one. (Not that of a kind declared in
    /// [`Reconciler::owns`](crate::Reconciler::owns), which keeps only what the controller reads
    /// of each object: [`Owned::get`](crate::owned::Owned::get) reads it.)
    ///
    /// A cache lags the cluster by the watch's delay: an object may be missing from it that was
    /// just created, or be there as it was before a change or deletion. Each such change sends
    /// a watch event that reconciles again, so a reconcile that acts on a stale object must only
    /// make a change that the API server refuses when it is based on a stale read (e.g. a uid
    /// or resourceVersion precondition), or one that the next reconcile puts right.
    #[deprecated(
        since = "0.2.0",
        note = "keep a typed `Cache<K>` in the controller's state and `watch` it; owned kinds: `Reconciler::owns`"
    )]
    pub fn cached<K>(&self) -> Option<Store<K>>
    where
        K: Resource<DynamicType = ()> + Clone + 'static,
    {
        self.caches.get::<K>()
    }

    /// This context with `metrics` (the manager's, which `/metrics` serves).
    pub(crate) fn with_metrics(mut self, metrics: Metrics) -> Self {
        self.metrics = metrics;
        self
    }

    /// The server-side apply field manager and `app.kubernetes.io/managed-by` label value of
    /// this operator.
    pub fn field_manager(&self) -> &str {
        &self.field_manager
    }

    /// Parameters for a server-side apply by this operator that takes over fields set by
    /// others (see the server-side apply documentation on conflicts).
    pub fn apply_params(&self) -> PatchParams {
        PatchParams::apply(&self.field_manager).force()
    }

    /// An [`Api`] over what the controllers watch: the watched namespace, or the whole cluster
    /// (always the whole cluster for cluster-scoped kinds). When `WATCH_NAMESPACE` lists
    /// several namespaces, this is the whole cluster too, which the manager's Roles do not let
    /// it list: use `ctx.watch_namespaces.apis(&ctx.client)`, one per namespace, or
    /// [`cache_watched`](Self::cache_watched).
    pub fn api<K>(&self) -> Api<K>
    where
        K: Resource,
        K::DynamicType: Default,
        K::Scope: Scope,
    {
        let namespace = match self.watch_namespaces.names() {
            [one] => Some(one.as_str()),
            _ => None,
        };
        K::Scope::api(self.client.clone(), namespace)
    }

    /// An [`Api`] over `K`s in the namespace of `obj` (the cluster if `K` is cluster-scoped).
    pub fn api_near<K>(&self, obj: &impl Resource) -> Api<K>
    where
        K: Resource,
        K::DynamicType: Default,
        K::Scope: Scope,
    {
        K::Scope::api(self.client.clone(), obj.meta().namespace.as_deref())
    }

    /// Server-side applies `status` as the status of `obj`: the whole status this operator
    /// owns. A status equal to the one `obj` has is not sent: the apply would change nothing,
    /// and most reconciles compute the status they found. (`obj` is as the controller's watch
    /// last saw it; if the status changed since, that change brings another reconcile.)
    ///
    /// The status written does not bring another reconcile of the controller's own kind: the
    /// reconcile that wrote it knows it (a change of the object made meanwhile by someone else
    /// still does). A reconciler that must run again after writing its status says so with
    /// `Action::requeue`.
    ///
    /// ```no_run
    /// # use rbuilder_runtime::Context;
    /// # use rbuilder_runtime::conditions::condition;
    /// # use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
    /// # use k8s_openapi::api::core::v1::ConfigMap as Guestbook;
    /// #[derive(serde::Serialize)]
    /// struct GuestbookStatus {
    ///     conditions: Vec<Condition>,
    /// }
    ///
    /// # async fn f(obj: &Guestbook, ctx: &Context) -> Result<(), kube::Error> {
    /// let generation = obj.metadata.generation;
    /// let ready = condition(&[], "Ready", "True", "Reconciled", "All set", generation);
    /// let status = GuestbookStatus { conditions: vec![ready] };
    /// ctx.apply_status(obj, &status).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn apply_status<K>(&self, obj: &K, status: &impl Serialize) -> Result<K, kube::Error>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Serialize,
        K::Scope: Scope,
    {
        let status = serde_json::to_value(status).map_err(kube::Error::SerdeError)?;
        let current = serde_json::to_value(obj).map_err(kube::Error::SerdeError)?;
        if current.get("status") == Some(&status) {
            return Ok(obj.clone());
        }
        let patch = serde_json::json!({
            "apiVersion": K::api_version(&()),
            "kind": K::kind(&()),
            "status": status,
        });
        // The controller's own kind: its watch need not bring this back to reconcile it (see
        // `Echoes`).
        let echoes = self.caches.own_echoes::<K>();
        let namespace = obj.meta().namespace.as_deref();
        let _writing = echoes
            .as_ref()
            .map(|echoes| echoes.writing(namespace, &obj.name_any()));
        let written = self
            .api_near::<K>(obj)
            .patch_status(&obj.name_any(), &self.apply_params(), &Patch::Apply(patch))
            .await?;
        if let Some(echoes) = echoes {
            echoes.wrote(obj.meta().resource_version.as_deref(), written.meta());
        }
        Ok(written)
    }

    /// Stops this operator's server-side applies from managing the field at `path` of `obj`
    /// (e.g. `["spec", "replicas"]`) without changing its value. An apply that leaves out a
    /// field its field manager alone owned removes it (a Deployment without `replicas` falls
    /// back to 1), so, as the server-side apply documentation's "transferring ownership" does,
    /// the value is first applied by a field manager of its own, `<field manager>-released`,
    /// which keeps it; whoever changes it next (an HPA, `kubectl scale`) takes it over. Call it
    /// before the apply that leaves the field out; it does nothing unless this operator's
    /// applies own the field. Returns the object as released, if it released the field (its
    /// resourceVersion is new).
    ///
    /// Who owns the field is in `obj`'s `managedFields`; an object without them (one from a
    /// [cache](Self::cache), which drops them) is read again from the API server, and left
    /// alone if it is another object by now (the apply that follows, which should carry the
    /// cached object's uid, is then refused, and the reconcile retried).
    pub async fn release_field<K>(
        &self,
        api: &Api<K>,
        obj: &K,
        path: &[&str],
    ) -> Result<Option<K>, kube::Error>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Serialize,
    {
        let fresh;
        let obj = if obj.meta().managed_fields.is_some() {
            obj
        } else {
            match api.get_opt(&obj.name_any()).await? {
                Some(read) if read.meta().uid == obj.meta().uid => {
                    fresh = read;
                    &fresh
                }
                _ => return Ok(None),
            }
        };
        let applied_by_us = obj.meta().managed_fields.iter().flatten().any(|entry| {
            let fields = entry.fields_v1.as_ref().map(|fields| &fields.0);
            let owned = fields.and_then(|fields| {
                path.iter()
                    .try_fold(fields, |fields, key| fields.get(format!("f:{key}")))
            });
            entry.manager.as_deref() == Some(&self.field_manager)
                && entry.operation.as_deref() == Some("Apply")
                && owned.is_some()
        });
        let pointer = format!("/{}", path.join("/"));
        let value = serde_json::to_value(obj).map_err(kube::Error::SerdeError)?;
        let Some(value) = value.pointer(&pointer).filter(|_| applied_by_us) else {
            return Ok(None);
        };
        // The field alone, in the object's place.
        let field = path.iter().rev().fold(
            value.clone(),
            |inner, key| serde_json::json!({ *key: inner }),
        );
        // The uid: that very object, not one created in its place (an apply would create it).
        let mut patch = serde_json::json!({
            "apiVersion": K::api_version(&()),
            "kind": K::kind(&()),
            "metadata": {"name": obj.name_any(), "uid": obj.meta().uid},
        });
        if let (Some(patch), Some(field)) = (patch.as_object_mut(), field.as_object()) {
            patch.extend(field.clone());
        }
        // Not forced: the same value as now conflicts with no one.
        let released = PatchParams::apply(&format!("{}-released", self.field_manager));
        let released = api
            .patch(&obj.name_any(), &released, &Patch::Apply(patch))
            .await?;
        Ok(Some(released))
    }

    /// Publishes `event` about `obj`. Events are informational: a failure (e.g. in a namespace
    /// being deleted, which refuses new objects) is logged, and never fails the reconcile; nor
    /// does a publish hold the reconcile for longer than 10 s (client-go sends
    /// Events in the background, and drops them when it falls behind).
    pub async fn publish<K>(&self, obj: &K, event: Event)
    where
        K: Resource<DynamicType = ()>,
    {
        self.publish_about(&obj.object_ref(&()), event).await;
    }

    /// [`publish`](Self::publish), in the background: the caller goes on at once. For the
    /// driver's failure Events, which would otherwise hold a worker for up to [`EVENT_TIMEOUT`]
    /// each while the API server is slow, which is when failures come in numbers. Past
    /// [`EVENTS_IN_FLIGHT`] on their way, the Event is dropped (logged), as client-go drops
    /// Events under pressure.
    pub(crate) fn publish_later(&self, regarding: ObjectReference, event: Event) {
        let Ok(permit) = Arc::clone(&self.events_in_flight).try_acquire_owned() else {
            warn!(
                reason = event.reason,
                "Event dropped: {EVENTS_IN_FLIGHT} Events are on their way already"
            );
            return;
        };
        let ctx = self.stateless();
        tokio::spawn(async move {
            ctx.publish_about(&regarding, event).await;
            drop(permit);
        });
    }

    /// [`publish`](Self::publish) about the object `regarding` refers to. The recorder
    /// shortens a note the API server would refuse.
    pub(crate) async fn publish_about(&self, regarding: &ObjectReference, event: Event) {
        let published = self.recorder.publish(&event, regarding);
        match tokio::time::timeout(EVENT_TIMEOUT, published).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => warn!(%error, reason = event.reason, "cannot publish an Event"),
            Err(_) => warn!(
                reason = event.reason,
                "cannot publish an Event: no answer within {EVENT_TIMEOUT:?}"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use k8s_openapi::api::core::v1::ConfigMap;

    use crate::events;
    use crate::testing::{Method, mock_context};

    /// Publishing an Event the API server never answers gives up, and the reconcile that
    /// publishes it goes on: an Event is not worth holding up reconciles for.
    #[tokio::test(start_paused = true)]
    async fn an_event_that_is_never_answered_does_not_hold_the_reconcile() {
        let (ctx, mut server) = mock_context();
        let mut obj = ConfigMap::default();
        obj.metadata.name = Some("w".into());
        obj.metadata.namespace = Some("default".into());
        let event = events::failure("Failed", "it failed".into());
        let publish = tokio::spawn(async move { ctx.publish(&obj, event).await });
        let (method, _, _hung) = server.hold().await;
        assert_eq!(method, Method::POST);
        let published = tokio::time::timeout(Duration::from_secs(3600), publish).await;
        published
            .expect("the publish to give up by itself")
            .expect("its task");
    }
}
