//! Controllers: the [`Reconciler`] trait each controller of the project implements, and the
//! driver that runs it, the same for every controller:
//!
//! - it watches the kind (in the watched namespace, see [`Context::api`]) and keeps a cache of
//!   it without `managedFields`, which nothing reads and which is most of an object's size;
//! - it adds the reconciler's finalizer, then calls [`Reconciler::apply`] for every change (and
//!   whatever [`Reconciler::watches`] adds), and [`Reconciler::cleanup`] once the object is
//!   being deleted, then removes the finalizer;
//! - a write the reconcile made itself through the runtime (the finalizer,
//!   [`Owned::apply`](crate::owned::Owned::apply), [`Context::apply_status`]) does not bring
//!   another reconcile when the watch brings it back (see `echoes`): a change someone else
//!   makes does;
//! - each controller has a [`Context`] of its own, whose caches (of the kinds it
//!   [owns](Reconciler::owns), and each [`Cache`](crate::Cache) it watches) it waits for before
//!   reconciling (kube's `Controller` waits only for the cache of its own kind);
//! - it counts and times every reconcile (`/metrics`), and shows a failure on the object as a
//!   Warning Event and in the log;
//! - it retries a failure after a delay that doubles with each failure in a row, from
//!   1 s to 5 minutes, and no faster than 100 retries at once and 10 a second after that, for
//!   all the controller's objects together (controller-runtime's default rate limiters);
//! - it reconciles one object at a time unless the reconciler says otherwise
//!   ([`Reconciler::MAX_CONCURRENT_RECONCILES`]), taking objects in the order they became due
//!   and reading each from the cache when a worker takes it: an object changed several times
//!   while it waits is reconciled once, as it is then (controller-runtime's workqueue);
//! - what is only a deletion getting ahead of a reconcile (a finalizer refused to an object
//!   being deleted, an `apply` refused by its own namespace being deleted, an object found
//!   gone) is not reported as a failure; a failed cleanup always is;
//! - a write refused because an owned object changed since it was read ([`owned::Stale`]) is a
//!   failure, counted and retried with the object's backoff as controller-runtime retries a
//!   conflict, but its Warning Event waits for 3 of them in a row: one is
//!   the ordinary race of a cache with the cluster, several say the cache stopped following;
//! - each reconcile runs in a tracing span with the controller's name, the object's namespace
//!   and name and an id of the reconcile, which every log line of it carries.

use std::borrow::Cow;
use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt::{Debug, Write as _};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt, future};
use k8s_openapi::api::rbac::v1::PolicyRule;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::DynamicObject;
use kube::api::{ListParams, Patch, PatchParams};
use kube::core::ApiResource;
use kube::runtime::controller::Error as ControllerError;
use kube::runtime::finalizer::{self, finalizer};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Resource, ResourceExt};
use ring::rand::SecureRandom;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::{Instrument, debug, info, info_span, warn};

pub use kube::runtime::controller::{Action, Controller};

pub use crate::stores::NotSynced;

use crate::context::Context;
use crate::echoes::Echoes;
use crate::errors::{
    error_chain, is_finalizer_refused_by_deletion, names_as_not_found, terminating_namespace,
};
use crate::events;
use crate::metrics::Outcome;
use crate::namespaces;
use crate::owned::{self, Owns};
use crate::queue_metrics::Queued;
use crate::rate_limit::{self, SharedBucket, TokenBucket};
use crate::scope::Scope;
use crate::state::{MissingState, StateType, States};
use crate::stores;
use crate::work_queue::{Key, WorkQueue};

/// The first retry of a failed reconcile comes after this long.
pub(crate) const FIRST_RETRY: Duration = Duration::from_secs(1);
/// Retries of a reconcile that keeps failing come at least this often.
pub(crate) const LAST_RETRY: Duration = Duration::from_secs(5 * 60);

/// How many retries of a controller's failed reconciles may start at once, all its objects
/// together, before [`RETRY_QPS`] spaces them: controller-runtime's default rate limiter
/// (client-go's `DefaultTypedControllerRateLimiter`, a token bucket of 100 beside the per-object
/// backoff). When an outage makes every object fail at once, their retries then come 10 a
/// second, not all together each time their backoffs meet.
pub(crate) const RETRY_BURST: u32 = 100;

/// How many retries of a controller's failed reconciles start per second past [`RETRY_BURST`]
/// (controller-runtime's 10).
pub(crate) const RETRY_QPS: f64 = 10.0;

/// A controller: how objects of one kind are reconciled. Implemented by a unit struct in the
/// controller's module (`src/controller/<kind>.rs`) and registered with [`register`].
///
/// `S` is the state the controller holds of its own, `()` for none: what a kubebuilder
/// reconciler keeps in its struct's fields, and a kube-rs one in the context it gives
/// `Controller::run`. Each reconcile reaches it as `ctx.state()` ([`Context::state`]); the
/// controller is registered with [`register_with_state`], and `src/main.rs` gives the manager
/// the state ([`Manager::state`](crate::manager::Manager::state)):
///
/// ```
/// use std::sync::Arc;
///
/// use rbuilder_runtime::controller::Action;
/// use rbuilder_runtime::{Context, Reconciler, Registration, register_with_state};
/// # use k8s_openapi::api::core::v1::ConfigMap as Site;
///
/// /// What the controller is told at start.
/// pub struct Settings {
///     /// The domain the sites are served under.
///     pub domain: String,
/// }
///
/// pub struct SiteReconciler;
///
/// pub const CONTROLLER: Registration = register_with_state::<SiteReconciler, Settings>();
///
/// impl Reconciler<Settings> for SiteReconciler {
///     type Resource = Site;
///     type Error = kube::Error;
///     const NAME: &'static str = "site";
///     const FINALIZER: Option<&'static str> = None;
///
///     async fn apply(site: Arc<Site>, ctx: Arc<Context<Settings>>) -> Result<Action, Self::Error> {
///         let host = format!("{}.{}", kube::ResourceExt::name_any(&*site), ctx.state().domain);
///         # let _ = host;
///         Ok(Action::await_change())
///     }
/// }
/// ```
pub trait Reconciler<S: Send + Sync + 'static = ()>: 'static {
    /// The kind this controller reconciles.
    type Resource: Resource<DynamicType = (), Scope: Scope>
        + Clone
        + Debug
        + DeserializeOwned
        + Serialize
        + Send
        + Sync
        + 'static;

    /// Why a reconcile failed. An error that is a [`kube::Error`], or whose source chain holds
    /// one (e.g. an enum variant `#[error("{0}")] Kube(#[from] kube::Error)`), lets the runtime
    /// tell when a failure only means that a deletion got ahead of the reconcile.
    type Error: std::error::Error + Send + Sync + 'static;

    /// The controller's name in logs and in the `controller` label of the metrics.
    const NAME: &'static str;

    /// The finalizer held on every object, so that [`cleanup`](Self::cleanup) runs before it
    /// is deleted; `None` for none (then `cleanup` is never called).
    const FINALIZER: Option<&'static str>;

    /// How many objects may be reconciled at once: 1 unless set, as in controller-runtime
    /// (`MaxConcurrentReconciles`), which keeps one controller's requests to the API server
    /// in one line; more for reconciles that mostly wait (on another service, say). 0 for no
    /// limit (kube-runtime's default, which this runtime had before it took controller-runtime's
    /// 1): then every object that changes, or fails, at once is reconciled at once, and only
    /// the manager's client-side limit (`--kube-api-qps`) paces their requests. One object is
    /// never reconciled twice at once.
    const MAX_CONCURRENT_RECONCILES: u16 = 1;

    /// Brings the world in line with `obj` (its spec) and reports it in the status. Called for
    /// every change of the object or of what [`watches`](Self::watches) adds, and as the
    /// returned [`Action`] asks. An error is retried with a backoff.
    fn apply(
        obj: Arc<Self::Resource>,
        ctx: Arc<Context<S>>,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send;

    /// Releases what [`apply`](Self::apply) made, once `obj` is being deleted; its finalizer is
    /// removed when this succeeds. Objects in the cluster that carry an owner reference to
    /// `obj` are deleted by Kubernetes' garbage collector without help.
    fn cleanup(
        obj: Arc<Self::Resource>,
        ctx: Arc<Context<S>>,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send {
        let _ = (obj, ctx);
        async { Ok(Action::await_change()) }
    }

    /// The kinds of the objects `apply` makes with [`Context::owned`]: the runtime watches
    /// them (a change to one, or its deletion, reconciles its owner), keeps them in the cache
    /// `owned` reads, and grants the manager `get`, `list`, `watch`, `create`, `patch` and
    /// `delete` on them. None unless said; a Deployment and a Service:
    ///
    /// ```
    /// # use k8s_openapi::api::apps::v1::Deployment;
    /// # use k8s_openapi::api::core::v1::{ConfigMap as App, Service};
    /// # use rbuilder_runtime::{Context, Owns, Reconciler};
    /// # use rbuilder_runtime::controller::Action;
    /// # struct AppReconciler;
    /// impl Reconciler for AppReconciler {
    ///     # type Resource = App;
    ///     # type Error = kube::Error;
    ///     # const NAME: &'static str = "app";
    ///     # const FINALIZER: Option<&'static str> = None;
    ///     # async fn apply(_: std::sync::Arc<App>, _: std::sync::Arc<Context>) -> Result<Action, kube::Error> {
    ///     #     Ok(Action::await_change())
    ///     # }
    ///     // ...
    ///     fn owns() -> Owns<Self::Resource> {
    ///         Owns::kind::<Deployment>().and::<Service>()
    ///     }
    /// }
    /// # assert_eq!(AppReconciler::owns().len(), 2);
    /// ```
    fn owns() -> Owns<Self::Resource> {
        Owns::none()
    }

    /// The RBAC rules that `apply` and `cleanup` need beyond what the runtime grants from what
    /// this controller declares: `get`, `list` and `watch` on its kind (and `patch`, for its
    /// finalizer or, on a kind of the project's own, whatever it writes), `patch` on the
    /// status and `update` on the finalizers of a kind of the project's own, what
    /// [`owns`](Self::owns) needs, and the Events of every controller. A Secret `apply` reads,
    /// say, or `list` and `watch` on the kind of a [`Cache`](crate::Cache) that
    /// [`watches`](Self::watches) fills. `make manifests` grants them all to the manager in
    /// `config/rbac/role.yaml`; none unless said. The rules derived are only added to, never
    /// narrowed; the status is granted `patch` (what [`Context::apply_status`] sends), not
    /// `update`: a controller that replaces its status with a PUT adds that verb here.
    fn rbac_rules() -> Vec<PolicyRule> {
        Vec::new()
    }

    /// Adds what else triggers a reconcile besides the kinds it [owns](Self::owns): a
    /// [`Cache`](crate::Cache) of its state, whose watch both triggers reconciles and fills
    /// the cache `apply` reads (`controller.watches_stream(cache.watch_watched(ctx, config),
    /// mapper)`, or `owns_stream` for objects that carry an owner reference). Prefer it to
    /// kube's `controller.owns(...)` and `watches(...)`: after a watch that was down lists
    /// again, only it wakes the owners of the objects deleted meanwhile.
    fn watches(
        controller: Controller<Self::Resource>,
        ctx: &Context<S>,
    ) -> Controller<Self::Resource> {
        let _ = ctx;
        controller
    }

    /// The reason of the Warning Event that shows `error` on the object: give each kind of
    /// failure a reason of its own, which `kubectl get events --field-selector reason=...`
    /// can find. An owned object someone else holds ([`owned::Taken`] in the error's chain) is
    /// reported by the runtime with its own reason, which names the kind (`ServiceTaken`).
    fn failure_reason(error: &Self::Error) -> &'static str {
        let _ = error;
        events::RECONCILE_FAILED
    }
}

/// What the manager and the `manifests` binary need to know about one controller.
pub struct Registration {
    /// The controller's name: [`Reconciler::NAME`].
    pub name: &'static str,
    /// Runs the controller, with its state from the states given, until the token is
    /// cancelled and its reconciles have finished (see [`RunController`]).
    pub(crate) run: RunController,
    /// The type of the controller's state, for the message when it was not given.
    pub(crate) state: StateType,
    /// The kind it reconciles, for its RBAC rules.
    pub(crate) kind: fn() -> ApiResource,
    /// Whether it holds a finalizer on its objects ([`Reconciler::FINALIZER`]).
    pub(crate) finalizer: bool,
    /// The kinds it owns ([`Reconciler::owns`]).
    pub(crate) owns: fn() -> Vec<ApiResource>,
    /// [`Reconciler::rbac_rules`].
    pub rbac_rules: fn() -> Vec<PolicyRule>,
    /// [`Reconciler::MAX_CONCURRENT_RECONCILES`].
    pub max_concurrent_reconciles: u16,
}

/// How a [`Registration`] runs its controller: `Err` at once if the states lack the
/// controller's; else a future that fails if its kind cannot be listed within
/// [`START_TIMEOUT`] (e.g. the CRD is not installed).
pub(crate) type RunController =
    fn(
        Arc<Context>,
        &States,
        CancellationToken,
    ) -> Result<BoxFuture<'static, Result<(), kube::Error>>, MissingState>;

/// The registration of `R`, a controller without a state of its own, for the project's list
/// of controllers (`src/controller/mod.rs`, which `Operator::controllers` takes):
///
/// ```ignore
/// pub const CONTROLLER: Registration = register::<GuestbookReconciler>();
/// pub const CONTROLLERS: &[Registration] = &[guestbook::CONTROLLER];
/// ```
pub const fn register<R: Reconciler>() -> Registration {
    register_with_state::<R, ()>()
}

/// The registration of `R`, a controller that holds a state `S` of its own (see
/// [`Reconciler`]), which the manager must be given in `src/main.rs`
/// ([`Manager::state`](crate::manager::Manager::state)): without it the manager stops at start
/// and says so.
pub const fn register_with_state<R: Reconciler<S>, S: Send + Sync + 'static>() -> Registration {
    Registration {
        name: R::NAME,
        run: run_boxed::<R, S>,
        state: StateType::of::<S>(),
        kind: owned::api_resource::<R::Resource>,
        finalizer: R::FINALIZER.is_some(),
        owns: owned_kinds::<R, S>,
        rbac_rules: R::rbac_rules,
        max_concurrent_reconciles: R::MAX_CONCURRENT_RECONCILES,
    }
}

fn owned_kinds<R: Reconciler<S>, S: Send + Sync + 'static>() -> Vec<ApiResource> {
    R::owns().resources()
}

fn run_boxed<R: Reconciler<S>, S: Send + Sync + 'static>(
    ctx: Arc<Context>,
    states: &States,
    shutdown: CancellationToken,
) -> Result<BoxFuture<'static, Result<(), kube::Error>>, MissingState> {
    let state = states.get::<S>().ok_or_else(|| MissingState {
        controller: R::NAME,
        state: StateType::of::<S>(),
    })?;
    // A context of its own: the caches its `watches` makes are this controller's.
    let ctx = Arc::new(ctx.for_controller());
    let driver = Driver::for_reconciler::<R, S>(ctx, &shutdown);
    Ok(Box::pin(run::<R, S>(driver, state, shutdown)))
}

/// Runs `R` with `driver` and `state` until `shutdown` is cancelled.
async fn run<R: Reconciler<S>, S: Send + Sync + 'static>(
    driver: Arc<Driver>,
    state: Arc<S>,
    shutdown: CancellationToken,
) -> Result<(), kube::Error> {
    // What the reconciler gets: the controller's context, its caches included, with its state.
    let reconciler_ctx = Arc::new(driver.ctx.with_shared_state(state));
    let ctx = &reconciler_ctx;
    // One per watched namespace (WATCH_NAMESPACE may list several).
    let apis = ctx.watch_namespaces.apis::<R::Resource>(&ctx.client);
    for api in &apis {
        if !wait_until_listable(api, R::NAME, &shutdown).await? {
            return Ok(());
        }
    }
    let (cache, writer) = reflector::store();
    // The controller's writes of its own objects (the finalizer, the status) come back through
    // its watch; they do not reconcile it again (see `Echoes`).
    let echoes = Arc::new(Echoes::default());
    driver
        .ctx
        .caches
        .insert_own_echoes::<R::Resource>(echoes.clone());
    // A list or watch that fails later (a conversion webhook down a moment) is retried with a
    // growing delay, not in a tight loop: `for_stream` leaves that to its caller.
    let config = watcher::Config::default();
    let keep = namespaces::without_managed_fields;
    let watch = namespaces::reflected_as(apis, config, keep, writer, Some(echoes.clone()));
    let objects = echoes.without(watch.applied_objects());
    let controller = Controller::for_stream(objects, cache.clone());
    let controller = R::owns().watch(controller, &driver.ctx);
    let controller = R::watches(controller, ctx);
    info!(controller = R::NAME, "starting");
    // kube-runtime's controller only says which objects are due; the driver's workers take
    // them from the queue (see `work_queue`).
    let queue = Arc::new(WorkQueue::new(R::NAME, driver.ctx.metrics.queue.clone()));
    let triggers = controller
        .graceful_shutdown_on(shutdown.cancelled_owned())
        .run(
            |obj, queue| {
                queue.add(Key::of(&*obj));
                future::ready(Ok::<_, Infallible>(Action::await_change()))
            },
            |_, never, _| match *never {},
            queue.clone(),
        )
        .for_each(|result| {
            handle_trigger(&driver, R::NAME, result);
            async {}
        });
    let workers = work::<R, S>(driver.clone(), queue, cache, Arc::clone(ctx));
    tokio::join!(triggers, workers);
    Ok(())
}

/// Hands the keys of `queue` to the driver's workers, each reconciled on a task of its own,
/// until the controller stops; then waits for the reconciles under way (the keys still queued
/// are left, as controller-runtime's workers leave theirs).
async fn work<R: Reconciler<S>, S: Send + Sync + 'static>(
    driver: Arc<Driver>,
    queue: Arc<WorkQueue>,
    cache: Store<R::Resource>,
    ctx: Arc<Context<S>>,
) {
    let mut running = JoinSet::new();
    loop {
        let Some(worker) = driver.worker().await else {
            break;
        };
        let (key, queued) = tokio::select! {
            biased;
            () = driver.shutdown.cancelled() => break,
            next = queue.next() => next,
        };
        let (driver, queue, cache, ctx) =
            (driver.clone(), queue.clone(), cache.clone(), ctx.clone());
        running.spawn(async move {
            let then = reconcile::<R, S>(&key, queued, &driver, &cache, ctx).await;
            drop(worker);
            queue.done(key, then);
        });
        // Those ended, so that the set holds only what runs.
        while running.try_join_next().is_some() {}
    }
    while running.join_next().await.is_some() {}
}

/// How long a controller keeps trying to list its kind at start before the manager gives up:
/// controller-runtime's `CacheSyncTimeout` default (`pkg/config/controller.go`), during which
/// its informer retries the same list.
pub(crate) const START_TIMEOUT: Duration = Duration::from_secs(120);

/// The longest pause between two tries to list the kind at start (controller-runtime polls
/// for its informer every 10 s).
const START_RETRY_LIMIT: Duration = Duration::from_secs(10);

/// Waits until `api` can be listed; `false` if `shutdown` comes first. A failure is retried
/// (e.g. the conversion webhook that a list of objects stored in another version calls is
/// served by this very manager, through a Service that has no endpoint until its Pod is
/// Ready), and logged with what may cause it (a CRD not installed, a missing RBAC rule), for
/// [`START_TIMEOUT`]; then the last error is returned, which stops the manager with it.
async fn wait_until_listable<K>(
    api: &Api<K>,
    controller: &str,
    shutdown: &CancellationToken,
) -> Result<bool, kube::Error>
where
    K: Resource<DynamicType: Default> + Clone,
{
    // The kind only names the URL: the wait itself is compiled once, not for each kind.
    let resource = ApiResource::erase::<K>(&Default::default());
    let client = api.clone().into_client();
    let api = match api.namespace() {
        Some(namespace) => Api::<DynamicObject>::namespaced_with(client, namespace, &resource),
        None => Api::all_with(client, &resource),
    };
    wait_until_erased_listable(api, controller, shutdown).await
}

/// [`wait_until_listable`], of the kind's objects as [`DynamicObject`]s; boxed, so that its
/// body is compiled once, here, instead of in each crate whose kinds wait.
fn wait_until_erased_listable<'a>(
    api: Api<DynamicObject>,
    controller: &'a str,
    shutdown: &'a CancellationToken,
) -> BoxFuture<'a, Result<bool, kube::Error>> {
    Box::pin(wait_until_erased_listable_unboxed(
        api, controller, shutdown,
    ))
}

async fn wait_until_erased_listable_unboxed(
    api: Api<DynamicObject>,
    controller: &str,
    shutdown: &CancellationToken,
) -> Result<bool, kube::Error> {
    let deadline = tokio::time::Instant::now() + START_TIMEOUT;
    let mut pause = FIRST_RETRY;
    let one = ListParams::default().limit(1);
    loop {
        let listed = tokio::select! {
            biased;
            () = shutdown.cancelled() => return Ok(false),
            listed = api.list_metadata(&one) => listed,
        };
        let error = match listed {
            Ok(_) => return Ok(true),
            Err(error) => error,
        };
        if tokio::time::Instant::now() + pause > deadline {
            return Err(error);
        }
        let error = start_hint(&error);
        warn!(
            controller,
            error, "cannot list its kind yet; trying again in {pause:?}"
        );
        tokio::select! {
            () = tokio::time::sleep(pause) => {}
            () = shutdown.cancelled() => return Ok(false),
        }
        pause = (pause * 2).min(START_RETRY_LIMIT);
    }
}

/// `error`, from listing a controller's kind, with a hint for the usual causes.
pub(crate) fn start_hint(error: &kube::Error) -> String {
    match error {
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
    }
}

/// What the driver keeps besides the reconciler's [`Context`].
pub(crate) struct Driver {
    ctx: Arc<Context>,
    /// The failures in a row of the objects that are failing, by namespace and name, for the
    /// backoff.
    failures: Mutex<HashMap<String, Failures>>,
    /// The retries of all the controller's objects: [`RETRY_BURST`], [`RETRY_QPS`].
    retries: SharedBucket,
    /// [`Reconciler::MAX_CONCURRENT_RECONCILES`] workers (none: no limit); see
    /// [`worker`](Self::worker).
    workers: Option<Arc<Semaphore>>,
    /// Cancelled when the controller stops: a reconcile still waiting for a worker gives up.
    shutdown: CancellationToken,
}

/// The failures in a row of one object.
#[derive(Default)]
struct Failures {
    /// The object's uid: an object deleted and created again under its name is another object,
    /// whose count starts again.
    uid: Option<String>,
    count: u32,
}

impl Driver {
    /// A driver without a limit of workers, never stopped (for tests).
    #[cfg(test)]
    fn new(ctx: Arc<Context>) -> Arc<Self> {
        Arc::new(Self::with(ctx, None, CancellationToken::new()))
    }

    /// The driver of `R`, with its workers, until `shutdown`.
    fn for_reconciler<R: Reconciler<S>, S: Send + Sync + 'static>(
        ctx: Arc<Context>,
        shutdown: &CancellationToken,
    ) -> Arc<Self> {
        Self::with_workers(ctx, R::MAX_CONCURRENT_RECONCILES, shutdown)
    }

    /// A driver with `max` workers (0: no limit), until `shutdown`.
    fn with_workers(ctx: Arc<Context>, max: u16, shutdown: &CancellationToken) -> Arc<Self> {
        let workers = (max > 0).then(|| Arc::new(Semaphore::new(max.into())));
        Arc::new(Self::with(ctx, workers, shutdown.clone()))
    }

    fn with(
        ctx: Arc<Context>,
        workers: Option<Arc<Semaphore>>,
        shutdown: CancellationToken,
    ) -> Self {
        let retries = TokenBucket::new(RETRY_QPS, RETRY_BURST, tokio::time::Instant::now());
        Self {
            ctx,
            failures: Mutex::default(),
            retries: Arc::new(Mutex::new(retries)),
            workers,
            shutdown,
        }
    }

    /// Waits for a free worker (`Some(None)` without a limit); `None` if the controller stops
    /// first. The limit is here, not kube-runtime's (`controller::Config::concurrency`), which
    /// takes the next object from a set in no particular order: with the driver's queue,
    /// objects get a worker in the order they became due, and a failure's retry waits behind
    /// every object that was due before it.
    async fn worker(&self) -> Option<Option<OwnedSemaphorePermit>> {
        let Some(workers) = &self.workers else {
            return Some(None);
        };
        tokio::select! {
            // Never closed.
            permit = Arc::clone(workers).acquire_owned() => permit.ok().map(Some),
            () = self.shutdown.cancelled() => None,
        }
    }

    fn failures(&self) -> MutexGuard<'_, HashMap<String, Failures>> {
        // The map is only counters: a panic while it was held leaves it usable.
        self.failures.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many times in a row `obj` has failed so far (its earlier namesakes' not counted).
    fn failures_in_a_row(&self, obj: &impl Resource) -> u32 {
        let meta = obj.meta();
        let all = self.failures();
        all.get(&key(meta.namespace.as_deref(), &obj.name_any()))
            .filter(|failures| failures.uid == meta.uid)
            .map_or(0, |failures| failures.count)
    }

    /// Counts one more failure of `obj`; returns its failures in a row.
    fn count_failure(&self, obj: &impl Resource) -> u32 {
        let meta = obj.meta();
        let mut all = self.failures();
        let failures = all
            .entry(key(meta.namespace.as_deref(), &obj.name_any()))
            .or_default();
        // A new entry, or the count of an earlier object of this name, deleted since.
        if failures.uid != meta.uid {
            *failures = Failures {
                uid: meta.uid.clone(),
                count: 0,
            };
        }
        failures.count = failures.count.saturating_add(1);
        failures.count
    }

    /// Counts one more failure of `obj`; returns when to retry it (see [`error_policy`]).
    fn retry_after(&self, obj: &impl Resource) -> Duration {
        let backoff = retry_delay(self.count_failure(obj));
        backoff.max(rate_limit::reserve(&self.retries))
    }

    /// Forgets the failures of the object `name` in `namespace`: it succeeded, or it is gone.
    fn forget(&self, namespace: Option<&str>, name: &str) {
        self.failures().remove(&key(namespace, name));
    }
}

/// Why a reconcile failed. A later runtime may tell more cases apart (`NotSynced` came with
/// the caches), so a match on it needs a `_` arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Failure<E: std::error::Error + 'static> {
    /// `apply` failed.
    #[error(transparent)]
    Apply(E),
    /// `cleanup` failed; the object keeps its finalizer until it succeeds.
    #[error("cannot clean up before deletion: {0}")]
    Cleanup(#[source] E),
    /// Adding or removing the finalizer failed.
    #[error("cannot {action} the finalizer: {error}")]
    Finalizer {
        action: &'static str,
        #[source]
        error: kube::Error,
    },
    /// The object is not one the API server would send (no name).
    #[error("{0}")]
    Invalid(&'static str),
    /// A cache of the controller has not been filled yet (see [`Context::cache`]).
    #[error(transparent)]
    NotSynced(#[from] NotSynced),
    /// The reconciler panicked; the manager goes on, and retries.
    #[error("the reconciler panicked: {0}")]
    Panic(String),
}

impl<E: std::error::Error + 'static> Failure<E> {
    /// The API error behind this failure, if there is one.
    fn api_error(&self) -> Option<&kube::Error> {
        // From the reconciler's error itself: `Apply` is transparent, so its `source()` skips
        // it, and an `E` that is a `kube::Error` would not be seen.
        let mut source: Option<&(dyn std::error::Error + 'static)> = match self {
            Self::Apply(error) | Self::Cleanup(error) => Some(error),
            Self::Finalizer { error, .. } => Some(error),
            _ => None,
        };
        while let Some(error) = source {
            if let Some(error) = error.downcast_ref::<kube::Error>() {
                return Some(error);
            }
            source = error.source();
        }
        None
    }
}

/// The turn of the object `key` of `R`, which a worker took from the queue: it is read from
/// `cache` now, as controller-runtime reads its cache only when a worker takes a key, since an
/// object may wait for its worker for minutes at scale, and what changed meanwhile (an edit, a
/// deletion, an owner reference the garbage collector removed) must not be undone by a
/// reconcile of what it was. An object that `cache` no longer holds was deleted while it
/// waited: nothing to do, and its failures are forgotten.
///
/// Returns when the object is due again: after the delay its reconcile asked for, or the
/// backoff of its failures; `None` for its next change.
async fn reconcile<R: Reconciler<S>, S: Send + Sync + 'static>(
    key: &Key,
    queued: Queued,
    driver: &Arc<Driver>,
    cache: &Store<R::Resource>,
    ctx: Arc<Context<S>>,
) -> Option<Duration> {
    let (obj, result) = take_turn::<R, S>(key, queued, driver, cache, ctx).await?;
    let object = ObjectRef::from_obj(&*obj);
    match result {
        Ok(action) => {
            debug!(controller = R::NAME, %object, "reconciled");
            let then = requeue_after(&action);
            // Again after a delay: a retry, as controller-runtime counts a `RequeueAfter`.
            if then.is_some() {
                driver.ctx.metrics.queue.retry(R::NAME);
            }
            then
        }
        Err(failure) => {
            let error = error_chain(&failure);
            warn!(controller = R::NAME, %object, error, "reconcile failed");
            Some(retry_after_failure::<R, S>(&*obj, driver))
        }
    }
}

/// Reads `key` from `cache` and reconciles it, with everything the runtime does around it, in
/// a span that gives every log line of it (the reconciler's own too) the controller's name, the
/// object's namespace and name (`object`: a field `name` would clash with the span's own name
/// in JSON logs) and an id of this reconcile, as controller-runtime gives its logger. `None`
/// if the object is gone.
///
/// `ctx` is what the reconciler gets: the driver's context with the controller's state.
async fn take_turn<R: Reconciler<S>, S: Send + Sync + 'static>(
    key: &Key,
    queued: Queued,
    driver: &Arc<Driver>,
    cache: &Store<R::Resource>,
    ctx: Arc<Context<S>>,
) -> Option<(Arc<R::Resource>, Result<Action, Failure<R::Error>>)> {
    // Out of the queue, into the work under way (`workqueue_*`).
    let _in_progress = queued.start();
    let object = key.object_ref::<R::Resource>();
    let Some(obj) = cache.get(&object) else {
        debug!(controller = R::NAME, %object, "deleted while queued");
        driver.forget(key.namespace.as_deref(), &key.name);
        return None;
    };
    let span = info_span!(
        "reconcile",
        controller = R::NAME,
        namespace = obj.meta().namespace.as_deref(),
        object = %obj.name_any(),
        reconcile_id = %reconcile_id(),
    );
    let result = reconcile_in_span::<R, S>(obj.clone(), driver.clone(), ctx)
        .instrument(span)
        .await;
    Some((obj, result))
}

/// When `action` asks for the object to be reconciled again, `None` for its next change.
///
/// kube-runtime's `Action` keeps its delay to itself (its own scheduler reads it), so it is
/// read from the `Debug` form, `Action { requeue_after: Some(90s) }`, and checked: the
/// `Action` made of what was read must be `action`. Should a later kube-runtime write it
/// otherwise, the object comes again after [`UNREADABLE_REQUEUE`] rather than never (and the
/// runtime's tests of this function fail first).
fn requeue_after(action: &Action) -> Option<Duration> {
    if *action == Action::await_change() {
        return None;
    }
    let text = format!("{action:?}");
    let read = text
        .strip_prefix("Action { requeue_after: Some(")
        .and_then(|rest| rest.strip_suffix(") }"))
        .and_then(parse_duration)
        .filter(|delay| Action::requeue(*delay) == *action);
    if read.is_none() {
        warn!(
            action = text,
            "cannot read the delay of a requeue; using {UNREADABLE_REQUEUE:?}"
        );
    }
    Some(read.unwrap_or(UNREADABLE_REQUEUE))
}

/// The delay of a requeue whose `Action` could not be read: kube-runtime's advice for a
/// periodic reconcile is an hour; five minutes errs toward reconciling.
const UNREADABLE_REQUEUE: Duration = Duration::from_secs(5 * 60);

/// A `Duration` as its `Debug` form writes it: `90s`, `1.5s`, `250ms`, `1.000001ms`, `7µs`,
/// `3ns`, exactly (every digit is written).
fn parse_duration(text: &str) -> Option<Duration> {
    let (number, nanos_per_unit, decimals) = [
        ("ms", 1_000_000, 6),
        ("µs", 1_000, 3),
        ("ns", 1, 0),
        ("s", 1_000_000_000, 9),
    ]
    .into_iter()
    .find_map(|(unit, per, decimals)| Some((text.strip_suffix(unit)?, per, decimals)))?;
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty()
        || fraction.len() > decimals
        || !fraction.chars().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let whole: u128 = whole.parse().ok()?;
    let fraction: u128 = match fraction {
        "" => 0,
        digits => format!("{digits:0<decimals$}").parse().ok()?,
    };
    let nanos = whole.checked_mul(nanos_per_unit)?.checked_add(fraction)?;
    let secs = u64::try_from(nanos / 1_000_000_000).ok()?;
    Some(Duration::new(secs, (nanos % 1_000_000_000) as u32))
}

/// A random id (a UUID, version 4, as controller-runtime's `reconcileID`) for one reconcile.
fn reconcile_id() -> String {
    let mut bytes = [0u8; 16];
    // Never fails on the platforms ring supports; an id of zeros would only be less useful.
    let _ = ring::rand::SystemRandom::new().fill(&mut bytes);
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    // Written in place: one allocation per reconcile, not one per byte.
    let mut id = String::with_capacity(36);
    for (index, byte) in bytes.iter().enumerate() {
        if matches!(index, 4 | 6 | 8 | 10) {
            id.push('-');
        }
        let _ = write!(id, "{byte:02x}");
    }
    id
}

async fn reconcile_in_span<R: Reconciler<S>, S: Send + Sync + 'static>(
    obj: Arc<R::Resource>,
    driver: Arc<Driver>,
    reconciler_ctx: Arc<Context<S>>,
) -> Result<Action, Failure<R::Error>> {
    let started = Instant::now();
    let ctx = &driver.ctx;
    let _active = ctx.metrics.worker(R::NAME);
    let reconciled = async {
        // Before its first list, a cache would say that nothing exists.
        ctx.caches.synced(stores::SYNC_TIMEOUT).await?;
        match R::FINALIZER {
            Some(name) => with_finalizer::<R, S>(obj.clone(), &reconciler_ctx, name).await,
            None => R::apply(obj.clone(), reconciler_ctx.clone())
                .await
                .map_err(Failure::Apply),
        }
    };
    // A panic in a reconciler is its failure, not the manager's: caught, counted, retried.
    let result = match AssertUnwindSafe(reconciled).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => {
            ctx.metrics.panicked(R::NAME);
            Err(Failure::Panic(panic_message(&*panic)))
        }
    };
    // Whether the failure is a 404 naming the object while the object exists (a subresource
    // that its CRD does not serve): its Event says what to check.
    let mut not_served = false;
    let result = match result {
        Err(failure) if deletion_got_ahead(&failure, obj.meta().namespace.as_deref()) => {
            debug!(controller = R::NAME, object = %ObjectRef::from_obj(&*obj), "being deleted");
            Ok(Action::await_change())
        }
        Err(failure)
            if failure
                .api_error()
                .is_some_and(|error| names_as_not_found(error, &*obj)) =>
        {
            if is_gone(ctx, &*obj).await {
                debug!(controller = R::NAME, object = %ObjectRef::from_obj(&*obj), "gone");
                Ok(Action::await_change())
            } else {
                not_served = true;
                Err(failure)
            }
        }
        other => other,
    };

    let outcome = match &result {
        Ok(action) if *action == Action::await_change() => Outcome::Success,
        Ok(_) => Outcome::RequeueAfter,
        Err(_) => Outcome::Error,
    };
    ctx.metrics.observe(R::NAME, started.elapsed(), outcome);
    match &result {
        Ok(_) => driver.forget(obj.meta().namespace.as_deref(), &obj.name_any()),
        Err(failure) => {
            // An owned object someone else holds is named by its kind, whatever the
            // reconciler's own reasons: `DeploymentTaken`, `ServiceTaken`.
            let taken = match failure {
                Failure::Apply(error) | Failure::Cleanup(error) => owned::taken(error),
                _ => None,
            };
            let reason: Cow<'static, str> = match (failure, taken) {
                (_, Some(taken)) => taken.reason().into(),
                (Failure::Apply(error), None) => R::failure_reason(error).into(),
                (Failure::Cleanup(_), None) => events::CLEANUP_FAILED.into(),
                (Failure::Finalizer { .. } | Failure::Invalid(_), None) => {
                    events::FINALIZER_FAILED.into()
                }
                (Failure::NotSynced(_), None) => events::NOT_SYNCED.into(),
                (Failure::Panic(_), None) => events::RECONCILE_PANICKED.into(),
            };
            let mut note = error_chain(failure);
            if not_served {
                note.push_str(NOT_SERVED_HINT);
            }
            // This failure is counted after the reconcile (the error policy): one more.
            let in_a_row = driver.failures_in_a_row(&*obj) + 1;
            if owned::is_stale(failure) {
                note.push_str(&format!(
                    " ({in_a_row} times in a row: is the controller's cache still following \
                     the cluster? its watch may be failing)"
                ));
            }
            if !owned::is_stale(failure) || in_a_row >= STALE_EVENT_AFTER {
                // In the background: the worker is free for the next object at once.
                let regarding = obj.object_ref(&());
                ctx.publish_later(regarding, events::failure(&reason, note));
            } else {
                debug!(error = error_chain(failure), "stale read: retrying");
            }
        }
    }
    result
}

/// How many reconciles of an object in a row must fail on a stale read ([`owned::Stale`]) before
/// a Warning Event says so: the first is a race of the cache with the cluster that the next
/// reconcile, a second later, wins; three (about 1 + 2 + 4 s of retries) say the cache is not
/// catching up.
pub(crate) const STALE_EVENT_AFTER: u32 = 3;

/// Added to the note of a failure that is a 404 naming an object that exists.
const NOT_SERVED_HINT: &str = "; yet the object exists: is a subresource written (status?) \
    missing from its CRD? (make install)";

/// Whether `failure` only means that a deletion got ahead of the reconcile, which its
/// deletion's own reconcile takes over: nothing to retry or report. Only two cases:
///
/// - adding the finalizer refused because the object is being deleted (the cache did not show
///   the deletion yet): its deletion reconciles it again, with the cleanup;
/// - `apply` refused to create something because the object's own namespace (`namespace`) is
///   being deleted: the namespace deletes the object too, which brings its cleanup. Refused in
///   another namespace (a cluster-scoped owner's child, say), it is a failure like any other:
///   nothing deletes the object, and its reconcile has not done its work.
///
/// A failed cleanup is always a failure, whatever refused it: the finalizer holds the object,
/// and with it the namespace, until the cleanup succeeds, so it must be retried and shown.
/// (controller-runtime has no such exception: every error is retried and logged.)
fn deletion_got_ahead<E: std::error::Error + 'static>(
    failure: &Failure<E>,
    namespace: Option<&str>,
) -> bool {
    match failure {
        Failure::Finalizer { action, error } => {
            *action == "add" && is_finalizer_refused_by_deletion(error)
        }
        Failure::Apply(_) => failure
            .api_error()
            .and_then(terminating_namespace)
            .is_some_and(|terminating| Some(terminating.as_str()) == namespace),
        _ => false,
    }
}

/// Whether `obj` is gone (or replaced by another object of its name), read from the API
/// server: a 404 naming it does not say it alone (see [`names_as_not_found`]). A read that
/// fails tells nothing: then it is not taken for gone, and the failure is retried.
async fn is_gone<K>(ctx: &Context, obj: &K) -> bool
where
    K: Resource<DynamicType = (), Scope: Scope> + Clone + Debug + DeserializeOwned,
{
    match ctx.api_near::<K>(obj).get_opt(&obj.name_any()).await {
        Ok(None) => true,
        Ok(Some(current)) => current.meta().uid != obj.meta().uid,
        Err(_) => false,
    }
}

/// What a panic said, if it said it with a string (as `panic!` and `expect` do).
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(message), _) => (*message).to_owned(),
        (_, Some(message)) => message.clone(),
        _ => "(no message)".to_owned(),
    }
}

/// [`reconcile`] with the finalizer `name`: added first, removed after a successful cleanup.
async fn with_finalizer<R: Reconciler<S>, S: Send + Sync + 'static>(
    obj: Arc<R::Resource>,
    ctx: &Arc<Context<S>>,
    name: &str,
) -> Result<Action, Failure<R::Error>> {
    let api = ctx.api_near::<R::Resource>(&*obj);
    let echoes = ctx.caches.own_echoes::<R::Resource>();
    let obj = add_finalizer(&api, name, obj, echoes)
        .await
        .map_err(|error| Failure::Finalizer {
            action: "add",
            error,
        })?;
    let result = finalizer(&api, name, obj, |event| async {
        match event {
            finalizer::Event::Apply(obj) => R::apply(obj, ctx.clone()).await,
            finalizer::Event::Cleanup(obj) => R::cleanup(obj, ctx.clone()).await,
        }
    })
    .await;
    match result {
        Ok(action) => Ok(action),
        Err(finalizer::Error::ApplyFailed(error)) => Err(Failure::Apply(error)),
        Err(finalizer::Error::CleanupFailed(error)) => Err(Failure::Cleanup(error)),
        // Already gone: what removing the finalizer was for.
        Err(finalizer::Error::RemoveFinalizer(kube::Error::Api(status)))
            if status.is_not_found() =>
        {
            Ok(Action::await_change())
        }
        Err(finalizer::Error::RemoveFinalizer(error)) => Err(Failure::Finalizer {
            action: "remove",
            error,
        }),
        Err(finalizer::Error::AddFinalizer(error)) => Err(Failure::Finalizer {
            action: "add",
            error,
        }),
        Err(finalizer::Error::UnnamedObject) => Err(Failure::Invalid("the object has no name")),
        Err(finalizer::Error::InvalidFinalizer) => Err(Failure::Invalid("invalid finalizer name")),
    }
}

/// `obj` with the finalizer `name`, added unless it holds it or is being deleted: as the API
/// server answered the patch, noted as the controller's own write (its event brings no
/// reconcile). The reconcile goes on to `apply`, as controller-runtime's reconcilers do after
/// adding theirs (kube's `finalizer` would end it and wait for that event). The patch is
/// kube's: it is refused, not applied twice, if the finalizers changed since `obj` was read.
async fn add_finalizer<K>(
    api: &Api<K>,
    name: &str,
    obj: Arc<K>,
    echoes: Option<Arc<Echoes>>,
) -> Result<Arc<K>, kube::Error>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let Some(patch) = finalizer_patch(obj.meta(), name)? else {
        return Ok(obj);
    };
    let params = PatchParams::default();
    let _writing = echoes
        .as_ref()
        .map(|echoes| echoes.writing(obj.meta().namespace.as_deref(), &obj.name_any()));
    let added = api.patch(&obj.name_any(), &params, &patch).await?;
    if let Some(echoes) = echoes {
        echoes.wrote(obj.meta().resource_version.as_deref(), added.meta());
    }
    Ok(Arc::new(added))
}

/// The JSON patch that adds the finalizer `name` to the object of `meta`, after a test that its
/// finalizers are still those of `meta`; `None` if it holds it or is being deleted.
fn finalizer_patch(meta: &ObjectMeta, name: &str) -> Result<Option<Patch<()>>, kube::Error> {
    let held = meta.finalizers.as_deref().unwrap_or_default();
    if meta.deletion_timestamp.is_some() || held.iter().any(|held| held == name) {
        return Ok(None);
    }
    let patch = if held.is_empty() {
        serde_json::json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": [name]},
        ])
    } else {
        serde_json::json!([
            {"op": "test", "path": "/metadata/finalizers", "value": held},
            {"op": "add", "path": "/metadata/finalizers/-", "value": name},
        ])
    };
    let patch = serde_json::from_value(patch).map_err(kube::Error::SerdeError)?;
    Ok(Some(Patch::Json(patch)))
}

/// When to retry a failed reconcile: [`FIRST_RETRY`], doubled with each failure in a row of
/// the object, at most [`LAST_RETRY`]; later if the controller's retries are past
/// [`RETRY_BURST`] (the later of the two, as controller-runtime's `MaxOfRateLimiter`). A
/// change to the object still reconciles it at once.
///
/// Every failed object thus has a retry queued until it succeeds; a retry that finds it gone
/// ([`take_turn`]) forgets its failures, so no count outlives its object by more than
/// [`LAST_RETRY`].
fn retry_after_failure<R: Reconciler<S>, S: Send + Sync + 'static>(
    obj: &R::Resource,
    driver: &Driver,
) -> Duration {
    driver.ctx.metrics.queue.retry(R::NAME);
    driver.retry_after(obj)
}

/// The delay before retrying after `failures` failures in a row.
fn retry_delay(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(20);
    FIRST_RETRY.saturating_mul(1 << doublings).min(LAST_RETRY)
}

/// The key of the object `name` in `namespace` in the failure counts.
fn key(namespace: Option<&str>, name: &str) -> String {
    format!("{}/{name}", namespace.unwrap_or_default())
}

/// Logs what kube-runtime's controller reports besides the keys it queued: a queued object
/// found deleted before its turn (e.g. the retry of a failed one), whose failures are
/// forgotten, and a watch that failed.
fn handle_trigger<K>(
    driver: &Driver,
    controller: &str,
    result: Result<(ObjectRef<K>, Action), ControllerError<Infallible, watcher::Error>>,
) where
    K: Resource,
    K::DynamicType: Debug,
{
    match result {
        Ok(_) => {}
        Err(ControllerError::ObjectNotFound(object)) => {
            driver.forget(object.namespace.as_deref(), &object.name);
            debug!(controller, %object, "gone");
        }
        // The watch failed (e.g. RBAC): it is retried with a backoff.
        Err(error) => warn!(controller, error = error_chain(&error), "watch failed"),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use k8s_openapi::jiff::Timestamp;
    use serde_json::{Value, json};

    use super::*;
    use crate::context::EVENTS_IN_FLIGHT;
    use crate::rbac::policy_rule;
    use crate::testing::{ApiServer, Method, mock_context, status_error, within_timeout};

    /// A kind for the tests.
    #[derive(
        kube::CustomResource, schemars::JsonSchema, Serialize, serde::Deserialize, Clone, Debug,
    )]
    #[kube(group = "test.my.domain", version = "v1", kind = "Widget", namespaced)]
    struct WidgetSpec {
        size: i32,
    }

    const PATH: &str = "/apis/test.my.domain/v1/namespaces/default/widgets/w";
    const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/default/events";
    const FINALIZER: &str = "test.my.domain/finalizer";

    /// What the test reconcilers' `apply` and `cleanup` do.
    const SUCCEED: u8 = 0;
    const FAIL: u8 = 1;
    const FAIL_TERMINATING: u8 = 2;
    /// A 404 naming the widget itself, as for a status write that the CRD does not serve.
    const FAIL_NOT_FOUND: u8 = 3;
    /// Refused because another namespace than the widget's is being deleted.
    const FAIL_TERMINATING_ELSEWHERE: u8 = 4;
    /// An owned Service of the widget's name is someone else's (no request).
    const FAIL_TAKEN: u8 = 5;

    /// A reconciler whose `apply` (and `cleanup`) do what `MODE` says.
    struct Test<const MODE: u8>;

    #[derive(Debug, thiserror::Error)]
    enum TestError {
        #[error("{0}")]
        Kube(#[from] kube::Error),
        #[error("{0}")]
        Owned(#[from] owned::Error),
    }

    impl<const MODE: u8> Reconciler for Test<MODE> {
        type Resource = Widget;
        type Error = TestError;
        const NAME: &'static str = "widget";
        const FINALIZER: Option<&'static str> = Some(FINALIZER);

        async fn apply(obj: Arc<Widget>, ctx: Arc<Context>) -> Result<Action, TestError> {
            if MODE == FAIL_TAKEN {
                let taken = owned::Taken {
                    kind: "Service".into(),
                    name: obj.name_any(),
                    namespace: None,
                    controller: None,
                    owner_kind: "Widget".into(),
                };
                return Err(owned::Error::from(taken).into());
            }
            Self::act(&obj, &ctx).await?;
            Ok(Action::requeue(Duration::from_secs(60)))
        }

        async fn cleanup(obj: Arc<Widget>, ctx: Arc<Context>) -> Result<Action, TestError> {
            Self::act(&obj, &ctx).await?;
            Ok(Action::await_change())
        }

        fn rbac_rules() -> Vec<PolicyRule> {
            vec![policy_rule("test.my.domain", &["widgets"], &["get"])]
        }

        fn failure_reason(_: &TestError) -> &'static str {
            "WidgetFailed"
        }
    }

    impl<const MODE: u8> Test<MODE> {
        /// Reads the object's ConfigMap, which the tests' API server answers as `MODE` says.
        async fn act(obj: &Widget, ctx: &Context) -> Result<(), kube::Error> {
            let api = ctx.api_near::<k8s_openapi::api::core::v1::ConfigMap>(obj);
            api.get(&obj.name_any()).await?;
            Ok(())
        }
    }

    /// Answers `act`'s request as `MODE` says.
    async fn answer_act(server: &mut ApiServer, mode: u8) {
        let path = "/api/v1/namespaces/default/configmaps/w";
        let (status, body) = match mode {
            SUCCEED => (
                200,
                json!({"metadata": {"name": "w", "namespace": "default"}}),
            ),
            FAIL => (500, status_error(500, "InternalError")),
            FAIL_NOT_FOUND => {
                let mut body = status_error(404, "NotFound");
                body["details"] =
                    json!({"name": "w", "group": "test.my.domain", "kind": "widgets"});
                (404, body)
            }
            // The widget's own namespace, or another.
            FAIL_TERMINATING | FAIL_TERMINATING_ELSEWHERE => {
                let namespace = match mode {
                    FAIL_TERMINATING => "default",
                    _ => "elsewhere",
                };
                let mut body = status_error(403, "Forbidden");
                body["details"] = json!({"causes": [{
                    "reason": "NamespaceTerminating",
                    "message": format!("namespace {namespace} is being terminated"),
                }]});
                (403, body)
            }
            _ => unreachable!("no such mode: {mode}"),
        };
        server.expect(Method::GET, path, status, body).await;
    }

    fn widget(finalizers: &[&str], deleted: bool) -> Widget {
        let mut obj = Widget::new("w", WidgetSpec { size: 1 });
        obj.metadata.namespace = Some("default".into());
        obj.metadata.uid = Some("uid-1".into());
        obj.metadata.finalizers = Some(finalizers.iter().map(|f| f.to_string()).collect());
        if deleted {
            obj.metadata.deletion_timestamp = Some(Time(Timestamp::now()));
        }
        obj
    }

    /// The turn of `obj` ([`take_turn`]) of `R`, with a cache that holds `obj` as it is.
    fn reconcile_cached<R: Reconciler>(
        obj: Arc<R::Resource>,
        driver: Arc<Driver>,
    ) -> impl Future<Output = Result<Action, Failure<R::Error>>> + Send + 'static {
        let (cache, mut writer) = reflector::store();
        writer.apply_watcher_event(&watcher::Event::Apply((*obj).clone()));
        let ctx = Arc::clone(&driver.ctx);
        let queued = driver.ctx.metrics.queue.add(R::NAME);
        async move {
            let turn = take_turn::<R, ()>(&Key::of(&*obj), queued, &driver, &cache, ctx).await;
            turn.expect("the object is in the cache").1
        }
    }

    /// Runs the driver's `reconcile` of `R` on `obj` against `script`, which plays the API
    /// server; returns the result and the driver (for its failure counts and metrics).
    async fn reconcile_with<R, F>(
        obj: Widget,
        script: impl FnOnce(ApiServer) -> F,
    ) -> (Result<Action, Failure<TestError>>, Arc<Driver>)
    where
        R: Reconciler<Resource = Widget, Error = TestError>,
        F: Future<Output = ()> + Send + 'static,
    {
        let (ctx, server) = mock_context();
        let driver = Driver::new(ctx);
        let server = tokio::spawn(script(server));
        let result = within_timeout(reconcile_cached::<R>(Arc::new(obj), driver.clone())).await;
        server.await.expect("API server script");
        (result, driver)
    }

    fn metric(driver: &Driver, line: &str) -> bool {
        let registry = driver.ctx.metrics.registry();
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &registry).expect("encode");
        text.contains(line)
    }

    /// A failure's Event is published in the background: an API server that takes the Event
    /// and never answers holds up no worker (the reconcile waited for it up to EVENT_TIMEOUT,
    /// 10 s, with its worker held, and failures come in numbers when the API server is slow).
    #[tokio::test]
    async fn a_failure_event_that_hangs_holds_up_no_reconcile() {
        let (ctx, mut server) = mock_context();
        let driver = Driver::new(ctx);
        let obj = Arc::new(widget(&[FINALIZER], false));
        let started = Instant::now();
        let reconciled = tokio::spawn(reconcile_cached::<Test<FAIL>>(obj, driver.clone()));
        answer_act(&mut server, FAIL).await;
        let (method, path, held) = server.hold().await;
        assert_eq!((method, path.as_str()), (Method::POST, EVENTS));
        let result = within_timeout(reconciled).await.expect("task");
        assert!(result.is_err(), "{result:?}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the reconcile waited {:?} for its Event",
            started.elapsed()
        );
        drop(held);
    }

    /// Past [`EVENTS_IN_FLIGHT`] Events on their way, more are dropped, not queued without end.
    #[tokio::test]
    async fn events_past_the_budget_are_dropped() {
        let (ctx, mut server) = mock_context();
        // An object each: the recorder's spam filter would hold back more about one.
        for i in 0..EVENTS_IN_FLIGHT + 5 {
            let mut regarding = widget(&[], false).object_ref(&());
            regarding.name = Some(format!("w{i}"));
            ctx.publish_later(regarding, events::failure("Failed", "no".into()));
        }
        let mut held = Vec::new();
        for _ in 0..EVENTS_IN_FLIGHT {
            held.push(server.hold().await);
        }
        let more = server.try_answer(Duration::from_millis(300), |_, _, _| (201, Value::Null));
        assert!(more.await.is_none(), "an Event past the budget was sent");
    }

    /// The finalizer first, then `apply` in the same reconcile, on the object as the patch
    /// left it (as controller-runtime's reconcilers go on after adding theirs): not a second
    /// reconcile brought by the patch's own watch event.
    #[tokio::test]
    async fn a_new_object_gets_the_finalizer_then_its_apply() {
        let (result, driver) =
            reconcile_with::<Test<SUCCEED>, _>(widget(&[], false), |mut server| async move {
                let patch = server
                    .expect(Method::PATCH, PATH, 200, json!(widget(&[FINALIZER], false)))
                    .await;
                assert_eq!(
                    patch,
                    json!([
                        {"op": "test", "path": "/metadata/finalizers", "value": null},
                        {"op": "add", "path": "/metadata/finalizers", "value": [FINALIZER]},
                    ])
                );
                answer_act(&mut server, SUCCEED).await;
            })
            .await;
        assert_eq!(
            result.expect("reconcile"),
            Action::requeue(Duration::from_secs(60))
        );
        assert!(metric(
            &driver,
            "controller_runtime_reconcile_total{controller=\"widget\",result=\"requeue_after\"} 1"
        ));
    }

    /// Another finalizer held: the patch appends, and is refused if the list changed since.
    #[tokio::test]
    async fn the_finalizer_is_added_after_those_of_others() {
        let (result, _) = reconcile_with::<Test<SUCCEED>, _>(
            widget(&["other.example.com/keep"], false),
            |mut server| async move {
                let added = ["other.example.com/keep", FINALIZER];
                let patch = server
                    .expect(Method::PATCH, PATH, 200, json!(widget(&added, false)))
                    .await;
                assert_eq!(
                    patch,
                    json!([
                        {"op": "test", "path": "/metadata/finalizers", "value": ["other.example.com/keep"]},
                        {"op": "add", "path": "/metadata/finalizers/-", "value": FINALIZER},
                    ])
                );
                answer_act(&mut server, SUCCEED).await;
            },
        )
        .await;
        assert_eq!(
            result.expect("reconcile"),
            Action::requeue(Duration::from_secs(60))
        );
    }

    #[tokio::test]
    async fn apply_runs_once_the_finalizer_is_there() {
        let (result, driver) = reconcile_with::<Test<SUCCEED>, _>(
            widget(&[FINALIZER], false),
            |mut server| async move {
                answer_act(&mut server, SUCCEED).await;
            },
        )
        .await;
        assert_eq!(
            result.expect("reconcile"),
            Action::requeue(Duration::from_secs(60))
        );
        assert!(metric(
            &driver,
            "controller_runtime_reconcile_total{controller=\"widget\",result=\"requeue_after\"} 1"
        ));
    }

    #[tokio::test]
    async fn a_failure_is_an_event_with_its_reason_and_is_retried_with_a_backoff() {
        let obj = widget(&[FINALIZER], false);
        let (result, driver) =
            reconcile_with::<Test<FAIL>, _>(obj.clone(), |mut server| async move {
                answer_act(&mut server, FAIL).await;
                let event = server.echo(Method::POST, EVENTS).await;
                assert_eq!(event["type"], "Warning");
                assert_eq!(event["reason"], "WidgetFailed");
                assert!(
                    event["note"]
                        .as_str()
                        .expect("note")
                        .contains("mocked InternalError")
                );
            })
            .await;
        let failure = result.expect_err("the reconcile fails");
        assert!(metric(
            &driver,
            "controller_runtime_reconcile_errors_total{controller=\"widget\"} 1"
        ));

        assert!(matches!(failure, Failure::Apply(_)), "{failure}");
        let delays: Vec<Duration> = (0..3)
            .map(|_| retry_after_failure::<Test<FAIL>, ()>(&obj, &driver))
            .collect();
        let secs = Duration::from_secs;
        assert_eq!(delays, [secs(1), secs(2), secs(4)]);
        assert_eq!(retry_delay(100), LAST_RETRY);
    }

    /// An owned object someone else holds is reported with a reason naming its kind, whatever
    /// reason the reconciler gives its other failures.
    #[tokio::test]
    async fn someone_elses_owned_object_is_reported_by_its_kind() {
        let (result, _driver) = reconcile_with::<Test<FAIL_TAKEN>, _>(
            widget(&[FINALIZER], false),
            |mut server| async move {
                let event = server.echo(Method::POST, EVENTS).await;
                assert_eq!(event["reason"], "ServiceTaken");
                let note = event["note"].as_str().expect("note");
                assert!(
                    note.starts_with("Service w exists and has no controller"),
                    "{note}"
                );
            },
        )
        .await;
        result.expect_err("the reconcile fails");
    }

    /// After an outage every object fails at once: the per-object backoff alone would retry
    /// them all together a second later, and again each time their backoffs meet. The
    /// controller's retries start RETRY_BURST at once, then RETRY_QPS a second.
    #[tokio::test(start_paused = true)]
    async fn the_retries_of_many_failing_objects_are_spread() {
        let (ctx, _server) = mock_context();
        let driver = Driver::new(ctx);
        let delays: Vec<Duration> = (0..1000)
            .map(|n| {
                let mut obj = widget(&[FINALIZER], false);
                obj.metadata.name = Some(format!("w{n}"));
                obj.metadata.uid = Some(format!("uid-{n}"));
                driver.retry_after(&obj)
            })
            .collect();
        let within_a_second = delays.iter().filter(|d| **d <= FIRST_RETRY).count();
        assert!(
            within_a_second <= (f64::from(RETRY_BURST) + RETRY_QPS) as usize,
            "{within_a_second} of 1000 failed objects are retried within {FIRST_RETRY:?}"
        );
        // The last one waits for the 900 before it past the burst, at RETRY_QPS.
        let last = delays[999];
        assert!(
            (Duration::from_secs(89)..=Duration::from_secs(90)).contains(&last),
            "{last:?}"
        );
        // The per-object backoff still holds: a second failure of the first object, later.
        let mut first = widget(&[FINALIZER], false);
        first.metadata.name = Some("w0".into());
        first.metadata.uid = Some("uid-0".into());
        tokio::time::advance(Duration::from_secs(200)).await;
        assert_eq!(driver.retry_after(&first), 2 * FIRST_RETRY);
    }

    /// The driver's workers of `R` over a queue, with a cache that holds `objects`, on a task.
    fn spawn_work<R: Reconciler>(
        driver: &Arc<Driver>,
        objects: &[R::Resource],
    ) -> (Arc<WorkQueue>, tokio::task::JoinHandle<()>) {
        let (cache, mut writer) = reflector::store();
        for obj in objects {
            writer.apply_watcher_event(&watcher::Event::Apply(obj.clone()));
        }
        let queue = Arc::new(WorkQueue::new(R::NAME, driver.ctx.metrics.queue.clone()));
        let ctx = Arc::clone(&driver.ctx);
        let work = work::<R, ()>(driver.clone(), queue.clone(), cache, ctx);
        (queue, tokio::spawn(work))
    }

    /// An object still waiting for a worker when the controller stops is left, without a
    /// request: the manager does not work through a queue of objects on its way out.
    #[tokio::test]
    async fn a_reconcile_waiting_for_a_worker_gives_up_when_the_controller_stops() {
        let (ctx, mut server) = mock_context();
        let shutdown = CancellationToken::new();
        let driver = Driver::for_reconciler::<Test<SUCCEED>, ()>(ctx, &shutdown);
        let busy = driver.worker().await.expect("a worker");
        let obj = widget(&[FINALIZER], false);
        let (queue, work) = spawn_work::<Test<SUCCEED>>(&driver, std::slice::from_ref(&obj));
        queue.add(Key::of(&obj));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(queue.len(), 1, "reconciled without a worker");
        shutdown.cancel();
        within_timeout(work).await.expect("the workers stop");
        drop(busy);
        let request = server.try_answer(Duration::from_millis(100), |_, _, _| (500, Value::Null));
        assert!(request.await.is_none(), "a request was sent");
        // Not counted as a reconcile either.
        assert!(!metric(
            &driver,
            "controller_runtime_reconcile_total{controller=\"widget\",result=\"success\"} 1"
        ));
    }

    /// The value `/metrics` shows for `series` (its name and labels).
    fn metric_value(driver: &Driver, series: &str) -> f64 {
        let registry = driver.ctx.metrics.registry();
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &registry).expect("encode");
        let line = text.lines().find(|line| {
            line.strip_prefix(series)
                .is_some_and(|value| value.starts_with(' '))
        });
        let line = line.unwrap_or_else(|| panic!("no {series} in\n{text}"));
        let value = line.rsplit(' ').next().and_then(|value| value.parse().ok());
        value.expect("a number")
    }

    /// The driver's queue is measured as controller-runtime's workqueue metrics: an object
    /// waiting for the busy worker is in the queue, and how long it waited and how long its
    /// reconcile held the worker are timed; a requeue after a delay and a failure's retry are
    /// retries.
    #[tokio::test]
    async fn the_queue_in_front_of_the_workers_is_measured() {
        let (ctx, mut server) = mock_context();
        let shutdown = CancellationToken::new();
        let _stop = shutdown.clone().drop_guard();
        // As the manager starts each controller's series.
        ctx.metrics.init_controller("widget", 1);
        let driver = Driver::for_reconciler::<Test<SUCCEED>, ()>(ctx, &shutdown);
        let labels = r#"{name="widget",controller="widget"}"#;
        let depth = r#"workqueue_depth{name="widget",controller="widget",priority=""}"#;
        let busy = driver.worker().await.expect("a worker");
        let obj = widget(&[FINALIZER], false);
        let (queue, _work) = spawn_work::<Test<SUCCEED>>(&driver, std::slice::from_ref(&obj));
        queue.add(Key::of(&obj));
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(metric_value(&driver, depth), 1.0);
        assert_eq!(
            metric_value(&driver, &format!("workqueue_adds_total{labels}")),
            1.0
        );
        let queued = format!("workqueue_queue_duration_seconds_count{labels}");
        assert_eq!(metric_value(&driver, &queued), 0.0);

        drop(busy);
        answer_act(&mut server, SUCCEED).await;
        let worked = format!("workqueue_work_duration_seconds_count{labels}");
        within_timeout(async {
            while metric_value(&driver, &worked) < 1.0 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        })
        .await;
        assert_eq!(metric_value(&driver, depth), 0.0);
        assert_eq!(metric_value(&driver, &queued), 1.0);
        let waited = metric_value(
            &driver,
            &format!("workqueue_queue_duration_seconds_sum{labels}"),
        );
        assert!(waited >= 0.1, "waited {waited} s");
        let unfinished = format!("workqueue_unfinished_work_seconds{labels}");
        assert_eq!(metric_value(&driver, &unfinished), 0.0);
        // The requeue after 60 s the reconcile asked for.
        let retries = format!("workqueue_retries_total{labels}");
        assert_eq!(metric_value(&driver, &retries), 1.0);
        // A failure's retry.
        retry_after_failure::<Test<SUCCEED>, ()>(&obj, &driver);
        assert_eq!(metric_value(&driver, &retries), 2.0);
    }

    /// The delay a reconcile asks for is read from kube-runtime's `Action` exactly, whatever
    /// its unit.
    #[test]
    fn the_delay_of_a_requeue_is_read_exactly() {
        let delays = [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::from_micros(7),
            Duration::from_micros(1500),
            Duration::from_millis(250),
            Duration::from_millis(1500),
            Duration::from_secs(90),
            Duration::new(3600, 1),
            Duration::MAX,
        ];
        for delay in delays {
            assert_eq!(
                requeue_after(&Action::requeue(delay)),
                Some(delay),
                "{delay:?}"
            );
        }
        assert_eq!(requeue_after(&Action::await_change()), None);
        assert_eq!(parse_duration("1.5 s"), None);
        assert_eq!(parse_duration("s"), None);
    }

    /// One object at a time unless the reconciler says otherwise, as in controller-runtime.
    #[test]
    fn a_controller_reconciles_one_object_at_a_time_by_default() {
        assert_eq!(register::<Test<SUCCEED>>().max_concurrent_reconciles, 1);
    }

    #[tokio::test]
    async fn a_success_resets_the_backoff() {
        let (ctx, mut server) = mock_context();
        let driver = Driver::new(ctx);
        let obj = Arc::new(widget(&[FINALIZER], false));
        retry_after_failure::<Test<SUCCEED>, ()>(&obj, &driver);
        retry_after_failure::<Test<SUCCEED>, ()>(&obj, &driver);
        let reconciled = tokio::spawn(reconcile_cached::<Test<SUCCEED>>(
            obj.clone(),
            driver.clone(),
        ));
        answer_act(&mut server, SUCCEED).await;
        within_timeout(reconciled)
            .await
            .expect("task")
            .expect("reconcile");
        let delay = retry_after_failure::<Test<SUCCEED>, ()>(&obj, &driver);
        assert_eq!(delay, FIRST_RETRY);
    }

    #[tokio::test]
    async fn an_object_created_again_under_its_name_starts_from_the_first_retry() {
        let (ctx, _server) = mock_context();
        let driver = Driver::new(ctx);
        let old = widget(&[FINALIZER], false);
        for _ in 0..3 {
            retry_after_failure::<Test<FAIL>, ()>(&old, &driver);
        }
        let mut new = widget(&[FINALIZER], false);
        new.metadata.uid = Some("uid-2".into());
        let delay = retry_after_failure::<Test<FAIL>, ()>(&new, &driver);
        assert_eq!(delay, FIRST_RETRY);
    }

    /// Every failed object has a retry queued: when it finds the object gone, the object's
    /// failures are forgotten.
    #[tokio::test]
    async fn the_failures_of_an_object_found_gone_are_forgotten() {
        let (ctx, _server) = mock_context();
        let driver = Driver::new(ctx);
        let obj = widget(&[FINALIZER], false);
        retry_after_failure::<Test<FAIL>, ()>(&obj, &driver);
        assert_eq!(driver.failures().len(), 1);
        let gone = ControllerError::ObjectNotFound(Box::new(ObjectRef::from_obj(&obj).erase()));
        handle_trigger::<Widget>(&driver, "widget", Err(gone));
        assert!(driver.failures().is_empty());
    }

    #[tokio::test]
    async fn deletion_runs_cleanup_then_removes_the_finalizer() {
        let deleted = widget(&[FINALIZER], true);
        let stored = json!(widget(&[], true));
        let (result, _) = reconcile_with::<Test<SUCCEED>, _>(deleted, |mut server| async move {
            answer_act(&mut server, SUCCEED).await;
            let patch = server.expect(Method::PATCH, PATH, 200, stored).await;
            assert_eq!(
                patch[1],
                json!({"op": "remove", "path": "/metadata/finalizers/0"})
            );
        })
        .await;
        result.expect("reconcile");
    }

    #[tokio::test]
    async fn a_failed_cleanup_keeps_the_finalizer_and_says_so() {
        let (result, _) =
            reconcile_with::<Test<FAIL>, _>(widget(&[FINALIZER], true), |mut server| async move {
                answer_act(&mut server, FAIL).await;
                let event = server.echo(Method::POST, EVENTS).await;
                assert_eq!(event["reason"], "CleanupFailed");
            })
            .await;
        assert!(matches!(result, Err(Failure::Cleanup(_))), "{result:?}");
    }

    /// After cleanup, the object may be gone before its finalizer is removed (e.g. another
    /// reconcile removed it): that is the success the removal was for.
    #[tokio::test]
    async fn a_finalizer_removal_that_finds_the_object_gone_succeeds() {
        let (result, _) = reconcile_with::<Test<SUCCEED>, _>(
            widget(&[FINALIZER], true),
            |mut server| async move {
                answer_act(&mut server, SUCCEED).await;
                server
                    .expect(Method::PATCH, PATH, 404, status_error(404, "NotFound"))
                    .await;
            },
        )
        .await;
        assert_eq!(result.expect("reconcile"), Action::await_change());
    }

    /// The cache may not show the deletion yet: the API server refuses a new finalizer on an
    /// object being deleted (422), which is no failure.
    #[tokio::test]
    async fn a_finalizer_refused_because_of_a_deletion_is_no_failure() {
        let (result, driver) = reconcile_with::<Test<SUCCEED>, _>(widget(&[], false), |mut server| async move {
            let mut refused = status_error(422, "Invalid");
            refused["message"] = Value::from(
                "Widget \"w\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted",
            );
            server.expect(Method::PATCH, PATH, 422, refused).await;
            // No Event: the next request the script sees would fail the test.
        })
        .await;
        assert_eq!(result.expect("reconcile"), Action::await_change());
        assert!(metric(
            &driver,
            "controller_runtime_reconcile_total{controller=\"widget\",result=\"success\"} 1"
        ));
    }

    #[tokio::test]
    async fn a_terminating_namespace_is_no_failure() {
        let (result, _) = reconcile_with::<Test<FAIL_TERMINATING>, _>(
            widget(&[FINALIZER], false),
            |mut server| async move {
                answer_act(&mut server, FAIL_TERMINATING).await;
            },
        )
        .await;
        assert_eq!(result.expect("reconcile"), Action::await_change());
    }

    /// An apply refused because another namespace than the object's is being deleted is a
    /// failure: nothing will delete the object, and its work is not done. Retried and shown.
    #[tokio::test]
    async fn a_terminating_namespace_elsewhere_is_a_failure() {
        let (result, driver) = reconcile_with::<Test<FAIL_TERMINATING_ELSEWHERE>, _>(
            widget(&[FINALIZER], false),
            |mut server| async move {
                answer_act(&mut server, FAIL_TERMINATING_ELSEWHERE).await;
                let event = server.echo(Method::POST, EVENTS).await;
                assert_eq!(event["reason"], "WidgetFailed");
            },
        )
        .await;
        assert!(result.is_err(), "{result:?}");
        assert!(metric(
            &driver,
            "controller_runtime_reconcile_errors_total{controller=\"widget\"} 1"
        ));
    }

    /// A cleanup refused because the namespace is being deleted is a failure: the finalizer
    /// stays until it succeeds, so it is retried and shown.
    #[tokio::test]
    async fn a_cleanup_refused_in_a_terminating_namespace_is_a_failure() {
        let (result, driver) = reconcile_with::<Test<FAIL_TERMINATING>, _>(
            widget(&[FINALIZER], true),
            |mut server| async move {
                answer_act(&mut server, FAIL_TERMINATING).await;
                let event = server.echo(Method::POST, EVENTS).await;
                assert_eq!(event["reason"], "CleanupFailed");
            },
        )
        .await;
        assert!(matches!(result, Err(Failure::Cleanup(_))), "{result:?}");
        assert!(metric(
            &driver,
            "controller_runtime_reconcile_errors_total{controller=\"widget\"} 1"
        ));
    }

    /// A 404 naming the object, for an object that is gone: nothing to do.
    #[tokio::test]
    async fn a_404_naming_an_object_that_is_gone_is_no_failure() {
        let (result, _) = reconcile_with::<Test<FAIL_NOT_FOUND>, _>(
            widget(&[FINALIZER], false),
            |mut server| async move {
                answer_act(&mut server, FAIL_NOT_FOUND).await;
                server
                    .expect(Method::GET, PATH, 404, status_error(404, "NotFound"))
                    .await;
            },
        )
        .await;
        assert_eq!(result.expect("reconcile"), Action::await_change());
    }

    /// A 404 naming the object, for an object that is there (a subresource that the kind does
    /// not serve): a failure, whose Event says what to check.
    #[tokio::test]
    async fn a_404_naming_an_object_that_exists_is_a_failure() {
        let (result, _) = reconcile_with::<Test<FAIL_NOT_FOUND>, _>(
            widget(&[FINALIZER], false),
            |mut server| async move {
                answer_act(&mut server, FAIL_NOT_FOUND).await;
                let exists = json!(widget(&[FINALIZER], false));
                server.expect(Method::GET, PATH, 200, exists).await;
                let event = server.echo(Method::POST, EVENTS).await;
                let note = event["note"].as_str().expect("a note");
                assert!(note.contains("yet the object exists"), "{note}");
            },
        )
        .await;
        assert!(matches!(result, Err(Failure::Apply(_))), "{result:?}");
    }

    /// A kind that cannot be listed at start (its CRD not installed) is tried again for
    /// START_TIMEOUT, then its error stops the manager with a hint.
    #[tokio::test(start_paused = true)]
    async fn a_kind_that_cannot_be_listed_is_tried_again_then_given_up() {
        let (ctx, mut server) = mock_context();
        let api = ctx.api::<Widget>();
        let script = tokio::spawn(async move {
            let mut lists = 0;
            let not_found = |_: &Method, path: &str, _: &Value| {
                assert_eq!(path, "/apis/test.my.domain/v1/widgets");
                (404, status_error(404, "NotFound"))
            };
            while server.try_answer(START_TIMEOUT, not_found).await.is_some() {
                lists += 1;
            }
            lists
        });
        let started = tokio::time::Instant::now();
        let listed = wait_until_listable(&api, "widget", &CancellationToken::new()).await;
        let error = listed.expect_err("given up");
        let waited = started.elapsed();
        assert!(waited <= START_TIMEOUT, "{waited:?}");
        assert!(waited >= START_TIMEOUT - START_RETRY_LIMIT, "{waited:?}");
        assert!(
            start_hint(&error).contains("is its CRD installed"),
            "{error}"
        );
        drop(api);
        drop(ctx);
        // 1, 2, 4 and 8 s, then every 10 s.
        assert!(script.await.expect("API server script") >= 14);
    }

    /// A kind listed once it can be (its conversion webhook reachable now): the controller
    /// starts; a shutdown meanwhile stops it without an error.
    #[tokio::test(start_paused = true)]
    async fn a_kind_listed_later_starts_the_controller() {
        let (ctx, mut server) = mock_context();
        let api = ctx.api::<Widget>();
        let script = tokio::spawn(async move {
            let unreachable =
                |_: &Method, _: &str, _: &Value| (500, status_error(500, "InternalError"));
            server.answer(unreachable).await;
            let empty = json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": []});
            let listed = |_: &Method, _: &str, _: &Value| (200, empty);
            let next = server.try_answer(START_TIMEOUT, listed).await;
            assert!(next.is_some(), "no second list");
        });
        let shutdown = CancellationToken::new();
        let listed = wait_until_listable(&api, "widget", &shutdown).await;
        assert!(listed.expect("listed"));
        script.await.expect("API server script");

        let (ctx, _server) = mock_context();
        let api = ctx.api::<Widget>();
        shutdown.cancel();
        let stopped = wait_until_listable(&api, "widget", &shutdown).await;
        assert!(!stopped.expect("no error"), "started after the shutdown");
    }

    /// A reconciler whose `apply` panics.
    struct Panics;

    impl Reconciler for Panics {
        type Resource = Widget;
        type Error = TestError;
        const NAME: &'static str = "widget";
        const FINALIZER: Option<&'static str> = None;

        async fn apply(_obj: Arc<Widget>, _ctx: Arc<Context>) -> Result<Action, TestError> {
            panic!("bug in apply");
        }

        fn rbac_rules() -> Vec<PolicyRule> {
            Vec::new()
        }
    }

    #[tokio::test]
    async fn a_panic_is_a_counted_failure_not_a_crash() {
        let (result, driver) =
            reconcile_with::<Panics, _>(widget(&[], false), |mut server| async move {
                let event = server.echo(Method::POST, EVENTS).await;
                assert_eq!(event["reason"], "ReconcilePanicked");
                assert!(
                    event["note"]
                        .as_str()
                        .expect("note")
                        .contains("bug in apply")
                );
            })
            .await;
        assert!(matches!(result, Err(Failure::Panic(_))), "{result:?}");
        assert!(metric(
            &driver,
            "controller_runtime_reconcile_panics_total{controller=\"widget\"} 1"
        ));
        assert!(metric(
            &driver,
            "controller_runtime_active_workers{controller=\"widget\"} 0"
        ));
    }

    /// A reconciler that applies the widget's ConfigMap, and logs.
    struct AppliesConfigMap;

    impl Reconciler for AppliesConfigMap {
        type Resource = Widget;
        type Error = TestError;
        const NAME: &'static str = "widget";
        const FINALIZER: Option<&'static str> = None;

        async fn apply(obj: Arc<Widget>, ctx: Arc<Context>) -> Result<Action, TestError> {
            tracing::info!("applying the ConfigMap");
            let config_map = ConfigMap::default();
            ctx.owned::<ConfigMap>(&*obj).apply(config_map).await?;
            Ok(Action::await_change())
        }

        fn rbac_rules() -> Vec<PolicyRule> {
            Vec::new()
        }
    }

    /// An owned object changed since the cache showed it: the apply is refused (409). That is a
    /// failure, counted and retried with the object's backoff (a second first), as
    /// controller-runtime retries a conflict; a Warning Event says so only once it recurs,
    /// [`STALE_EVENT_AFTER`] times in a row.
    #[tokio::test]
    async fn a_stale_read_is_a_failure_reported_once_it_recurs() {
        let (ctx, mut server) = mock_context();
        let mut cached = ConfigMap::default();
        cached.metadata.name = Some("w".into());
        cached.metadata.namespace = Some("default".into());
        cached.metadata.uid = Some("c-1".into());
        cached.metadata.resource_version = Some("7".into());
        let owner = widget(&[], false).controller_owner_ref(&());
        cached.metadata.owner_references = owner.map(|owner| vec![owner]);
        ctx.cache_of([cached]);
        let driver = Driver::new(ctx);
        let obj = Arc::new(widget(&[], false));
        let path = "/api/v1/namespaces/default/configmaps/w";
        for attempt in 1..=STALE_EVENT_AFTER {
            let reconciled = tokio::spawn(reconcile_cached::<AppliesConfigMap>(
                obj.clone(),
                driver.clone(),
            ));
            let conflict = status_error(409, "Conflict");
            let applied = server.expect(Method::PATCH, path, 409, conflict).await;
            assert_eq!(applied["metadata"]["resourceVersion"], "7");
            if attempt == STALE_EVENT_AFTER {
                let event = server.echo(Method::POST, EVENTS).await;
                assert_eq!(event["type"], "Warning");
                let note = event["note"].as_str().unwrap_or_default();
                assert!(note.contains("changed since it was read"), "{note}");
                assert!(note.contains("3 times in a row"), "{note}");
            }
            let result = within_timeout(reconciled).await.expect("task");
            assert!(result.is_err(), "{result:?}");
            if attempt < STALE_EVENT_AFTER {
                // No Event yet: nothing else was sent.
                let sent =
                    server.try_answer(Duration::from_millis(100), |_, _, _| (500, Value::Null));
                assert!(sent.await.is_none(), "a request after the refused apply");
            }
            // The error policy: the object's backoff grows with each failure.
            assert_eq!(driver.retry_after(&*obj), retry_delay(attempt));
        }
        assert!(metric(
            &driver,
            "controller_runtime_reconcile_errors_total{controller=\"widget\"} 3"
        ));
    }

    /// Log lines as the manager writes them with `--log-format json`, kept in memory.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Lines {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            let mut lines = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            lines.extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// What the reconciler logs carries the controller's name, the object's namespace and name,
    /// and the id of the reconcile.
    #[tokio::test]
    async fn a_reconcilers_log_lines_say_which_reconcile_they_are_from() {
        let lines = Lines::default();
        let writer = lines.clone();
        let logs = tracing_subscriber::fmt()
            .json()
            .with_writer(move || writer.clone())
            .finish();
        let _logging = tracing::subscriber::set_default(logs);

        let (ctx, mut server) = mock_context();
        ctx.cache_of(Vec::<ConfigMap>::new());
        let driver = Driver::new(ctx);
        let obj = Arc::new(widget(&[], false));
        for _ in 0..2 {
            let reconciled = reconcile_cached::<AppliesConfigMap>(obj.clone(), driver.clone());
            let script = async {
                let path = "/api/v1/namespaces/default/configmaps/w";
                let not_found = status_error(404, "NotFound");
                server.expect(Method::GET, path, 404, not_found).await;
                server.echo(Method::PATCH, path).await;
                // The Event Created: the first one, then its series.
                let event = |_: &Method, path: &str, _: &Value| {
                    assert!(path.starts_with(EVENTS), "{path}");
                    (200, json!({}))
                };
                server.answer(event).await;
            };
            let (result, ()) = within_timeout(async { tokio::join!(reconciled, script) }).await;
            result.expect("reconciled");
        }

        let lines = lines
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let lines = String::from_utf8(lines).expect("UTF-8");
        let ours: Vec<Value> = lines
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line"))
            .filter(|line| line["fields"]["message"] == "applying the ConfigMap")
            .collect();
        assert_eq!(ours.len(), 2, "{lines}");
        for line in &ours {
            let span = &line["span"];
            assert_eq!(span["name"], "reconcile", "{line}");
            assert_eq!(span["controller"], "widget");
            assert_eq!(span["namespace"], "default");
            assert_eq!(span["object"], "w");
            let id = span["reconcile_id"].as_str().expect("a reconcile id");
            assert_eq!(id.len(), 36, "{id}");
            assert_eq!(&id[14..15], "4", "a UUID of version 4: {id}");
        }
        let ids: Vec<_> = ours
            .iter()
            .map(|line| &line["span"]["reconcile_id"])
            .collect();
        assert_ne!(ids[0], ids[1], "each reconcile has its own id");
    }

    #[test]
    fn a_registration_carries_the_reconcilers_name_and_rules() {
        const REGISTRATION: Registration = register::<Test<SUCCEED>>();
        assert_eq!(REGISTRATION.name, "widget");
        assert_eq!((REGISTRATION.rbac_rules)().len(), 1);
    }
}

/// Against a real kube-apiserver and etcd (envtest).
#[cfg(test)]
mod envtests {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::CustomResourceExt;
    use kube::api::DeleteParams;
    use kube::core::crd::MergeError;

    use super::*;
    use crate::Operator;
    use crate::envtest::{Environment, gone, step};
    use crate::rbac::policy_rule;

    /// A kind whose reconciles always fail.
    #[derive(
        kube::CustomResource, schemars::JsonSchema, Serialize, serde::Deserialize, Clone, Debug,
    )]
    #[kube(group = "test.my.domain", version = "v1", kind = "Flake", namespaced)]
    struct FlakeSpec {
        size: i32,
    }

    /// Every reconcile of [`AlwaysFails`]: the object's uid, and when.
    static RECONCILES: Mutex<Vec<(String, Instant)>> = Mutex::new(Vec::new());

    /// When the object `uid` was reconciled.
    fn reconciles(uid: &str) -> Vec<Instant> {
        let all = RECONCILES.lock().unwrap_or_else(PoisonError::into_inner);
        all.iter()
            .filter(|(seen, _)| seen == uid)
            .map(|&(_, at)| at)
            .collect()
    }

    /// The time between each reconcile and the next.
    fn gaps(reconciles: &[Instant]) -> Vec<Duration> {
        reconciles.windows(2).map(|w| w[1] - w[0]).collect()
    }

    #[derive(Debug, thiserror::Error)]
    #[error("this flake always fails")]
    struct Flaky;

    struct AlwaysFails;

    impl Reconciler for AlwaysFails {
        type Resource = Flake;
        type Error = Flaky;
        const NAME: &'static str = "flakes";
        // None: a deleted flake is gone at once.
        const FINALIZER: Option<&'static str> = None;

        async fn apply(obj: Arc<Flake>, _ctx: Arc<Context>) -> Result<Action, Flaky> {
            let mut all = RECONCILES.lock().unwrap_or_else(PoisonError::into_inner);
            all.push((obj.uid().unwrap_or_default(), Instant::now()));
            Err(Flaky)
        }

        fn rbac_rules() -> Vec<PolicyRule> {
            vec![policy_rule(
                "test.my.domain",
                &["flakes"],
                &["get", "list", "watch"],
            )]
        }
    }

    const ALWAYS_FAILS: Registration = register::<AlwaysFails>();

    fn crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
        Ok(vec![Flake::crd()])
    }

    static FLAKES: Operator = Operator::new("flakes")
        .controllers(&[ALWAYS_FAILS])
        .crds(crds);

    /// The ConfigMap `ledger` as it was before it changed: what a cache that stopped following
    /// the cluster would still show.
    static STALE_COPY: Mutex<Option<k8s_openapi::api::core::v1::ConfigMap>> = Mutex::new(None);

    /// Writes `ledger` as [`STALE_COPY`] has it, on every reconcile: refused (409) each time,
    /// as a write made from a cache that stopped updating is.
    struct StaleWriter;

    impl Reconciler for StaleWriter {
        type Resource = Flake;
        type Error = owned::Error;
        const NAME: &'static str = "stale-writer";
        const FINALIZER: Option<&'static str> = None;

        async fn apply(obj: Arc<Flake>, ctx: Arc<Context>) -> Result<Action, owned::Error> {
            RECONCILES
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((obj.uid().unwrap_or_default(), Instant::now()));
            let copy = STALE_COPY
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            let copy = copy.ok_or_else(|| owned::Error::Invalid("no copy yet".into()))?;
            let configs: Api<k8s_openapi::api::core::v1::ConfigMap> =
                Api::namespaced(ctx.client.clone(), "default");
            match configs.replace("ledger", &Default::default(), &copy).await {
                Ok(_) => Ok(Action::await_change()),
                Err(error @ kube::Error::Api(_)) => {
                    Err(owned::Stale::new("ConfigMap", "ledger", error).into())
                }
                Err(error) => Err(error.into()),
            }
        }

        fn rbac_rules() -> Vec<PolicyRule> {
            vec![
                policy_rule("test.my.domain", &["flakes"], &["get", "list", "watch"]),
                policy_rule("", &["configmaps"], &["update"]),
            ]
        }
    }

    const STALE_WRITER: Registration = register::<StaleWriter>();

    static STALE_WRITERS: Operator = Operator::new("stale-writers")
        .controllers(&[STALE_WRITER])
        .crds(crds);

    /// A write refused again and again because the object it was made from changed since (a
    /// cache that stopped following the cluster) is retried with a growing backoff, as
    /// controller-runtime retries a conflict, and shown in a Warning Event once it recurs. (It
    /// was retried every second for good, uncounted and unseen.)
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn a_stale_write_that_recurs_backs_off_and_is_shown() {
        let env = Environment::start(&STALE_WRITERS).await;
        let configs: Api<k8s_openapi::api::core::v1::ConfigMap> = env.api();
        let ledger = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "ledger"}, "data": {"total": "1"},
        }))
        .expect("a ConfigMap");
        let copy = env.apply(&configs, &ledger).await;

        step("the ledger changes after a copy of it was taken");
        let total = serde_json::json!({"data": {"total": "2"}});
        let patched = configs
            .patch(
                "ledger",
                &Default::default(),
                &kube::api::Patch::Merge(&total),
            )
            .await;
        patched.expect("the ledger changes");
        *STALE_COPY.lock().unwrap_or_else(PoisonError::into_inner) = Some(copy);

        step("a flake whose reconciles write the ledger from the copy");
        env.run(&STALE_WRITER).await;
        let flakes: Api<Flake> = env.api();
        let flake = env
            .apply(&flakes, &Flake::new("stale", FlakeSpec { size: 1 }))
            .await;
        let uid = flake.uid().expect("a uid");
        let events: Api<k8s_openapi::api::events::v1::Event> = env.api();
        let note = env
            .wait_for("a Warning Event about the flake", async || {
                let list = events.list(&Default::default()).await;
                let list = list.map_err(|error| error.to_string())?;
                list.items
                    .into_iter()
                    .filter(|event| {
                        event.regarding.as_ref().and_then(|r| r.uid.as_deref()) == Some(&uid)
                    })
                    .filter(|event| event.type_.as_deref() == Some("Warning"))
                    .find_map(|event| event.note)
                    .ok_or_else(|| "no Warning Event".to_owned())
            })
            .await;
        assert!(note.contains("changed since it was read"), "{note}");
        assert!(note.contains("3 times in a row"), "{note}");

        step("retried after 1, 2 and 4 s, not every second");
        let gaps = env
            .wait_for("four reconciles", async || match reconciles(&uid) {
                seen if seen.len() >= 4 => Ok(gaps(&seen)),
                seen => Err(format!("{} reconciles", seen.len())),
            })
            .await;
        let slack = Duration::from_millis(300);
        for (gap, backoff) in gaps.iter().zip([1, 2, 4]) {
            let backoff = Duration::from_secs(backoff);
            assert!(
                *gap + slack >= backoff,
                "retried after {gap:?}, not {backoff:?}: {gaps:?}"
            );
        }
    }

    /// A failing object deleted and created again under its name is a new object: its first
    /// retry comes after [`FIRST_RETRY`], not after the backoff its predecessor had reached.
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn a_recreated_object_starts_from_the_first_retry() {
        let env = Environment::start(&FLAKES).await;
        env.run(&ALWAYS_FAILS).await;
        let flakes: Api<Flake> = env.api();
        let flake = Flake::new("flake", FlakeSpec { size: 1 });

        step("a flake fails four times in a row: retried after 1, 2 and 4 s");
        let old = env.apply(&flakes, &flake).await;
        let old = old.uid().expect("a uid");
        env.wait_for("four failed reconciles", async || {
            match reconciles(&old).len() {
                4.. => Ok(()),
                n => Err(format!("{n} reconciles")),
            }
        })
        .await;

        step("delete it, and create it again under its name");
        let deleted = flakes.delete("flake", &DeleteParams::default()).await;
        deleted.expect("the flake is deleted");
        env.wait_for("the flake to be gone", async || {
            gone(&flakes, "flake").await
        })
        .await;
        let new = env.apply(&flakes, &flake).await;
        let new = new.uid().expect("a uid");
        assert_ne!(old, new);
        let first = env
            .wait_for("the new flake's first reconcile", async || {
                let first = reconciles(&new).first().copied();
                first.ok_or_else(|| "none yet".to_owned())
            })
            .await;

        step("the new flake is retried after FIRST_RETRY");
        // Its predecessor's next retry would have come after 8 s; with its count, the new
        // flake's would come after 16 s.
        let window = 4 * FIRST_RETRY;
        tokio::time::sleep_until((first + window).into()).await;
        let retried = reconciles(&new);
        assert!(
            retried.len() >= 2,
            "the new flake was reconciled {} time(s) in {window:?}; the old one's gaps: {:?}",
            retried.len(),
            gaps(&reconciles(&old)),
        );
    }

    /// Every reconcile of [`SlowlyFails`]: the object's name, in order.
    static SLOW_RECONCILES: Mutex<Vec<String>> = Mutex::new(Vec::new());

    /// A reconciler that takes its time, then fails, one object at a time.
    struct SlowlyFails;

    impl Reconciler for SlowlyFails {
        type Resource = Flake;
        type Error = Flaky;
        const NAME: &'static str = "slow-flakes";
        const FINALIZER: Option<&'static str> = None;
        const MAX_CONCURRENT_RECONCILES: u16 = 1;

        async fn apply(obj: Arc<Flake>, _ctx: Arc<Context>) -> Result<Action, Flaky> {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let mut all = SLOW_RECONCILES
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            all.push(obj.name_any());
            Err(Flaky)
        }

        fn rbac_rules() -> Vec<PolicyRule> {
            AlwaysFails::rbac_rules()
        }
    }

    const SLOWLY_FAILS: Registration = register::<SlowlyFails>();

    static SLOW_FLAKES: Operator = Operator::new("slow-flakes")
        .controllers(&[SLOWLY_FAILS])
        .crds(crds);

    /// With one worker and many objects failing at once (an outage), an object is retried only
    /// once every object that became due before its retry was reconciled: objects are taken in
    /// the order they became due, as from controller-runtime's queue, and the retries of a few
    /// never starve the others.
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn failing_objects_take_turns() {
        const COUNT: usize = 60;
        let env = Environment::start(&SLOW_FLAKES).await;
        let flakes: Api<Flake> = env.api();
        step(format!("{COUNT} flakes, before the controller starts"));
        for n in 0..COUNT {
            env.apply(
                &flakes,
                &Flake::new(&format!("flake-{n:02}"), FlakeSpec { size: 1 }),
            )
            .await;
        }
        env.run(&SLOWLY_FAILS).await;
        step("each is reconciled once (50 ms each) before any is retried (1 s after it failed)");
        let reconciles = env
            .wait_for("every flake's first reconcile", async || {
                let all = SLOW_RECONCILES
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let seen: std::collections::HashSet<_> = all.iter().collect();
                match seen.len() {
                    COUNT => Ok(all.clone()),
                    n => Err(format!("{n} flakes reconciled")),
                }
            })
            .await;
        let mut seen = std::collections::HashSet::new();
        let retried = reconciles.iter().position(|name| !seen.insert(name));
        assert!(
            retried.is_none_or(|at| at >= COUNT),
            "{:?} was retried as reconcile {} of {}: before every flake's first",
            retried.map(|at| &reconciles[at]),
            retried.unwrap_or_default() + 1,
            reconciles.len(),
        );
    }

    /// What [`OneAtATime`] saw of each flake it reconciled: its name and size, in order.
    static SEEN_IN_TURN: Mutex<Vec<(String, i32)>> = Mutex::new(Vec::new());

    /// The flakes [`OneAtATime`] reconciled, with the size each had then.
    fn seen_in_turn() -> Vec<(String, i32)> {
        SEEN_IN_TURN
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// One worker, held for three seconds by the flake `first`: the others wait for it.
    struct OneAtATime;

    impl Reconciler for OneAtATime {
        type Resource = Flake;
        type Error = Flaky;
        const NAME: &'static str = "one-at-a-time";
        const FINALIZER: Option<&'static str> = None;
        const MAX_CONCURRENT_RECONCILES: u16 = 1;

        async fn apply(obj: Arc<Flake>, _ctx: Arc<Context>) -> Result<Action, Flaky> {
            SEEN_IN_TURN
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((obj.name_any(), obj.spec.size));
            if obj.name_any() == "first" {
                tokio::time::sleep(Duration::from_secs(3)).await;
            }
            Ok(Action::await_change())
        }

        fn rbac_rules() -> Vec<PolicyRule> {
            AlwaysFails::rbac_rules()
        }
    }

    const ONE_AT_A_TIME: Registration = register::<OneAtATime>();

    static IN_TURN: Operator = Operator::new("one-at-a-time")
        .controllers(&[ONE_AT_A_TIME])
        .crds(crds);

    /// An object that waits for a worker is reconciled as it is when the worker takes it, as
    /// controller-runtime reads its cache then: not as it was when it became due, which an
    /// edit or a deletion meanwhile made stale (a reconcile of a deleted object's snapshot
    /// recreates what its deletion removed); and once, however often it changed meanwhile.
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn a_queued_object_is_reconciled_as_it_is_when_its_turn_comes() {
        let env = Environment::start(&IN_TURN).await;
        let flakes: Api<Flake> = env.api();
        env.run(&ONE_AT_A_TIME).await;
        env.apply(&flakes, &Flake::new("first", FlakeSpec { size: 1 }))
            .await;
        env.wait_for("the reconcile of `first` to start", async || {
            let seen = seen_in_turn();
            match seen.iter().any(|(name, _)| name == "first") {
                true => Ok(()),
                false => Err(format!("reconciled: {seen:?}")),
            }
        })
        .await;
        step("while `first` holds the worker, `edited` and `deleted` are created and queue");
        for name in ["edited", "deleted"] {
            env.apply(&flakes, &Flake::new(name, FlakeSpec { size: 1 }))
                .await;
        }
        // Long enough for the watch to bring both and the controller to queue them.
        tokio::time::sleep(Duration::from_millis(500)).await;
        step("while they wait, `edited` is edited and `deleted` deleted");
        env.apply(&flakes, &Flake::new("edited", FlakeSpec { size: 2 }))
            .await;
        flakes
            .delete("deleted", &DeleteParams::default())
            .await
            .expect("delete `deleted`");
        env.wait_for("`edited` to be reconciled", async || {
            let seen = seen_in_turn();
            match seen.iter().any(|(name, _)| name == "edited") {
                true => Ok(()),
                false => Err(format!("reconciled: {seen:?}")),
            }
        })
        .await;
        // Time for a reconcile of `deleted`, were one coming.
        tokio::time::sleep(Duration::from_secs(1)).await;
        let seen = seen_in_turn();
        let edited = seen.iter().find(|(name, _)| name == "edited");
        assert_eq!(
            edited.map(|(_, size)| *size),
            Some(2),
            "`edited` was reconciled as it was before its edit: {seen:?}"
        );
        assert!(
            !seen.iter().any(|(name, _)| name == "deleted"),
            "`deleted` was reconciled after its deletion: {seen:?}"
        );
        // Its creation and its edit came while it waited: one turn covers both.
        let turns = seen.iter().filter(|(name, _)| name == "edited").count();
        assert_eq!(turns, 1, "`edited` was reconciled {turns} times: {seen:?}");
    }

    /// The failure count of a failing object is dropped once the object is gone, so that the
    /// counts do not grow with every object that ever failed.
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn the_failures_of_a_deleted_object_are_forgotten() {
        let env = Environment::start(&FLAKES).await;
        // Run as `env.run` runs it, but with a driver the test can look into (and as the
        // admin: what the manager may do is not what this test is about).
        let ctx = Context::new(
            env.client(),
            FLAKES.field_manager(),
            namespaces::Namespaces::all(),
        );
        let shutdown = CancellationToken::new();
        let driver = Driver::for_reconciler::<AlwaysFails, ()>(Arc::new(ctx), &shutdown);
        let _stop = shutdown.clone().drop_guard();
        tokio::spawn(run::<AlwaysFails, ()>(
            driver.clone(),
            Arc::new(()),
            shutdown,
        ));
        let flakes: Api<Flake> = env.api();

        step("a flake fails, and its failures are counted");
        let doomed = Flake::new("doomed", FlakeSpec { size: 1 });
        let doomed = env.apply(&flakes, &doomed).await;
        let uid = doomed.uid().expect("a uid");
        env.wait_for("a failed reconcile", async || {
            match (reconciles(&uid).len(), driver.failures().len()) {
                (1.., 1) => Ok(()),
                (reconciles, counts) => Err(format!("{reconciles} reconciles, {counts} counts")),
            }
        })
        .await;

        step("delete it: its count goes too");
        let deleted = flakes.delete("doomed", &DeleteParams::default()).await;
        deleted.expect("the flake is deleted");
        env.wait_for("no failure count", async || match driver.failures().len() {
            0 => Ok(()),
            counts => Err(format!("{counts} counts")),
        })
        .await;
    }
}

/// What only looks like a deletion getting ahead, against a real kube-apiserver (envtest).
#[cfg(test)]
mod deletion_envtests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use k8s_openapi::api::events::v1::Event as KubeEvent;
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::CustomResourceExt;
    use kube::api::{DeleteParams, PostParams};
    use kube::core::crd::MergeError;
    use serde_json::json;

    use super::*;
    use crate::Operator;
    use crate::envtest::{Environment, fetch, step};
    use crate::rbac::policy_rule;

    /// A kind with a status in its type.
    #[derive(
        kube::CustomResource, schemars::JsonSchema, Serialize, serde::Deserialize, Clone, Debug,
    )]
    #[kube(
        group = "deletion.rbuilder.io",
        version = "v1",
        kind = "Gauge",
        namespaced,
        status = "GaugeStatus"
    )]
    struct GaugeSpec {
        size: i32,
    }

    #[derive(schemars::JsonSchema, Serialize, serde::Deserialize, Clone, Debug, Default)]
    struct GaugeStatus {
        reading: i32,
    }

    const FINALIZER: &str = "deletion.rbuilder.io/finalizer";

    /// The rules of both reconcilers below.
    fn gauge_rules() -> Vec<PolicyRule> {
        vec![
            policy_rule(
                "deletion.rbuilder.io",
                &["gauges"],
                &["get", "list", "watch", "patch"],
            ),
            policy_rule("deletion.rbuilder.io", &["gauges/status"], &["patch"]),
            policy_rule("", &["configmaps"], &["create"]),
        ]
    }

    /// A reconciler's error, as rbuilder scaffolds it.
    #[derive(Debug, thiserror::Error)]
    enum GaugeError {
        #[error("{0}")]
        Kube(#[from] kube::Error),
    }

    /// Writes the size into the status.
    struct Reader;

    impl Reconciler for Reader {
        type Resource = Gauge;
        type Error = GaugeError;
        const NAME: &'static str = "reader";
        const FINALIZER: Option<&'static str> = Some(FINALIZER);

        async fn apply(obj: Arc<Gauge>, ctx: Arc<Context>) -> Result<Action, GaugeError> {
            let status = GaugeStatus {
                reading: obj.spec.size,
            };
            ctx.apply_status(&*obj, &status).await?;
            Ok(Action::await_change())
        }

        fn rbac_rules() -> Vec<PolicyRule> {
            gauge_rules()
        }
    }

    const READER: Registration = register::<Reader>();

    /// Gauge's CRD as it was installed before the status was added to the type: without the
    /// status subresource.
    fn crds_without_status() -> Result<Vec<CustomResourceDefinition>, MergeError> {
        let mut crd = Gauge::crd();
        for version in &mut crd.spec.versions {
            version.subresources = None;
        }
        Ok(vec![crd])
    }

    static STATUS_NOT_SERVED: Operator = Operator::new("readers")
        .controllers(&[READER])
        .crds(crds_without_status);

    /// The notes of the Warning Events about `name` in `events`.
    async fn warnings(events: &Api<KubeEvent>, name: &str) -> Result<Vec<String>, String> {
        let list = events.list(&ListParams::default()).await;
        let list = list.map_err(|error| error.to_string())?;
        let notes = list.items.into_iter().filter(|event| {
            event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name)
                && event.type_.as_deref() == Some("Warning")
        });
        Ok(notes.filter_map(|event| event.note).collect())
    }

    /// The API server refuses a status write to a CRD that does not serve the status
    /// subresource (installed before the status was added; `make install` not run since) with
    /// a 404 that names the object, as if it were gone. The object is there: that is a failure,
    /// shown in a Warning Event and retried, as controller-runtime returns it.
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn a_status_write_refused_with_404_is_a_failure_while_the_object_exists() {
        let env = Environment::start(&STATUS_NOT_SERVED).await;
        env.run(&READER).await;
        let gauges: Api<Gauge> = env.api();
        env.apply(&gauges, &Gauge::new("g", GaugeSpec { size: 3 }))
            .await;

        step("the finalizer is added");
        env.wait_for("the finalizer", async || {
            let gauge = fetch(&gauges, "g").await?;
            match gauge.finalizers() {
                [finalizer] if finalizer == FINALIZER => Ok(()),
                other => Err(format!("finalizers {other:?}")),
            }
        })
        .await;

        step("the refused status write is a Warning Event");
        let events: Api<KubeEvent> = env.api();
        let notes = env
            .wait_for(
                "a Warning Event about the gauge",
                async || match warnings(&events, "g").await? {
                    notes if notes.is_empty() => Err("no Warning Event".to_owned()),
                    notes => Ok(notes),
                },
            )
            .await;
        assert!(
            notes
                .iter()
                .any(|note| note.contains("\"g\" not found")
                    && note.contains("yet the object exists")),
            "{notes:?}"
        );

        step("and it is retried");
        let reconciles = env.reconciles(&READER);
        env.wait_for("two more reconciles", async || {
            match env.reconciles(&READER) {
                done if done >= reconciles + 2 => Ok(()),
                done => Err(format!("{done} reconciles")),
            }
        })
        .await;
        let gauge = fetch(&gauges, "g").await.expect("the gauge");
        assert!(gauge.status.is_none(), "{:?}", gauge.status);
    }

    /// How many times [`Archiver`] has cleaned up.
    static CLEANUPS: AtomicUsize = AtomicUsize::new(0);

    /// Cleans up by writing an archive ConfigMap next to the gauge: a cleanup that must create
    /// something.
    struct Archiver;

    impl Reconciler for Archiver {
        type Resource = Gauge;
        type Error = kube::Error;
        const NAME: &'static str = "archiver";
        const FINALIZER: Option<&'static str> = Some(FINALIZER);

        async fn apply(_obj: Arc<Gauge>, _ctx: Arc<Context>) -> Result<Action, kube::Error> {
            Ok(Action::await_change())
        }

        async fn cleanup(obj: Arc<Gauge>, ctx: Arc<Context>) -> Result<Action, kube::Error> {
            CLEANUPS.fetch_add(1, Ordering::Relaxed);
            let archive: ConfigMap = serde_json::from_value(json!({
                "metadata": {"name": format!("{}-archive", obj.name_any())},
                "data": {"size": obj.spec.size.to_string()},
            }))
            .map_err(kube::Error::SerdeError)?;
            let configs = ctx.api_near::<ConfigMap>(&*obj);
            configs.create(&PostParams::default(), &archive).await?;
            Ok(Action::await_change())
        }

        fn rbac_rules() -> Vec<PolicyRule> {
            gauge_rules()
        }
    }

    const ARCHIVER: Registration = register::<Archiver>();

    fn crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
        Ok(vec![Gauge::crd()])
    }

    static ARCHIVERS: Operator = Operator::new("archivers")
        .controllers(&[ARCHIVER])
        .crds(crds);

    /// A cleanup refused because its namespace is being deleted (403 NamespaceTerminating)
    /// has not happened: it is a failure, retried, and the object keeps its finalizer. (The
    /// namespace stays Terminating here: envtest runs no namespace controller, which is what
    /// would finalize it.)
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn a_cleanup_refused_in_a_terminating_namespace_is_retried() {
        let env = Environment::start(&ARCHIVERS).await;
        env.run(&ARCHIVER).await;
        let namespaces: Api<Namespace> = Api::all(env.client());
        let doomed: Namespace =
            serde_json::from_value(json!({"metadata": {"name": "doomed"}})).expect("a namespace");
        let created = namespaces.create(&PostParams::default(), &doomed).await;
        created.expect("the namespace");
        let gauges: Api<Gauge> = Api::namespaced(env.client(), "doomed");
        env.apply(&gauges, &Gauge::new("g", GaugeSpec { size: 3 }))
            .await;
        env.wait_for("the finalizer", async || {
            let gauge = fetch(&gauges, "g").await?;
            match gauge.finalizers() {
                [finalizer] if finalizer == FINALIZER => Ok(()),
                other => Err(format!("finalizers {other:?}")),
            }
        })
        .await;

        step("delete the namespace: it is Terminating, and refuses new objects");
        let deleted = namespaces.delete("doomed", &DeleteParams::default()).await;
        deleted.expect("the namespace's deletion");
        env.wait_for("the namespace to be Terminating", async || {
            let namespace = fetch(&namespaces, "doomed").await?;
            let phase = namespace.status.and_then(|status| status.phase);
            match phase.as_deref() {
                Some("Terminating") => Ok(()),
                other => Err(format!("phase {other:?}")),
            }
        })
        .await;

        step("delete the gauge: its cleanup is refused, and retried");
        let deleted = gauges.delete("g", &DeleteParams::default()).await;
        deleted.expect("the gauge's deletion");
        env.wait_for("three cleanups", async || {
            match CLEANUPS.load(Ordering::Relaxed) {
                done @ 3.. => Ok(done),
                done => Err(format!("{done} cleanup(s)")),
            }
        })
        .await;
        let gauge = fetch(&gauges, "g").await.expect("the gauge");
        assert_eq!(gauge.finalizers(), [FINALIZER]);
    }

    /// A kind of the whole cluster whose objects each write a ConfigMap into the namespace
    /// `closing`, as an operator of the cluster writes into its users' namespaces.
    #[derive(
        kube::CustomResource, schemars::JsonSchema, Serialize, serde::Deserialize, Clone, Debug,
    )]
    #[kube(group = "deletion.rbuilder.io", version = "v1", kind = "Dispatch")]
    struct DispatchSpec {
        size: i32,
    }

    /// Writes each dispatch's ConfigMap into `closing`.
    struct Dispatcher;

    impl Reconciler for Dispatcher {
        type Resource = Dispatch;
        type Error = kube::Error;
        const NAME: &'static str = "dispatcher";
        const FINALIZER: Option<&'static str> = None;

        async fn apply(obj: Arc<Dispatch>, ctx: Arc<Context>) -> Result<Action, kube::Error> {
            let config: ConfigMap = serde_json::from_value(json!({
                "metadata": {"name": obj.name_any()},
                "data": {"size": obj.spec.size.to_string()},
            }))
            .map_err(kube::Error::SerdeError)?;
            let configs: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), "closing");
            configs.create(&PostParams::default(), &config).await?;
            Ok(Action::await_change())
        }

        fn rbac_rules() -> Vec<PolicyRule> {
            vec![
                policy_rule(
                    "deletion.rbuilder.io",
                    &["dispatches"],
                    &["get", "list", "watch"],
                ),
                policy_rule("", &["configmaps"], &["create"]),
            ]
        }
    }

    const DISPATCHER: Registration = register::<Dispatcher>();

    fn dispatch_crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
        Ok(vec![Dispatch::crd()])
    }

    static DISPATCHERS: Operator = Operator::new("dispatchers")
        .controllers(&[DISPATCHER])
        .crds(dispatch_crds);

    /// An object of the whole cluster whose apply is refused because another namespace is
    /// being deleted has not done its work, and nothing will delete it: the refusal is a
    /// failure, shown in a Warning Event and retried. (It was taken for its own namespace's
    /// deletion getting ahead of it, and dropped: one reconcile, no Event.)
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn an_apply_refused_in_another_terminating_namespace_is_retried_and_shown() {
        let env = Environment::start(&DISPATCHERS).await;
        env.run(&DISPATCHER).await;
        let namespaces: Api<Namespace> = Api::all(env.client());
        let closing: Namespace =
            serde_json::from_value(json!({"metadata": {"name": "closing"}})).expect("namespace");
        let created = namespaces.create(&PostParams::default(), &closing).await;
        created.expect("the namespace");

        step("delete the namespace: it stays Terminating (envtest has no namespace controller)");
        let deleted = namespaces.delete("closing", &DeleteParams::default()).await;
        deleted.expect("the namespace's deletion");
        env.wait_for("the namespace to be Terminating", async || {
            let namespace = fetch(&namespaces, "closing").await?;
            let phase = namespace.status.and_then(|status| status.phase);
            match phase.as_deref() {
                Some("Terminating") => Ok(()),
                other => Err(format!("phase {other:?}")),
            }
        })
        .await;

        step("a dispatch of the cluster: its ConfigMap in `closing` is refused");
        let dispatches: Api<Dispatch> = Api::all(env.client());
        env.apply(&dispatches, &Dispatch::new("d", DispatchSpec { size: 1 }))
            .await;
        let events: Api<KubeEvent> = Api::all(env.client());
        let notes = env
            .wait_for(
                "a Warning Event about the dispatch",
                async || match warnings(&events, "d").await? {
                    notes if notes.is_empty() => Err("no Warning Event".to_owned()),
                    notes => Ok(notes),
                },
            )
            .await;
        assert!(
            notes.iter().any(|note| note.contains("being terminated")),
            "{notes:?}"
        );
        env.wait_for("three reconciles", async || {
            match env.reconciles(&DISPATCHER) {
                done @ 3.. => Ok(done),
                done => Err(format!("{done} reconcile(s)")),
            }
        })
        .await;
    }
}
