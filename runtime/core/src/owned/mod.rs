//! Objects a controller owns: the Deployment of a custom resource, its Service, its ConfigMap.
//! What controller-runtime's `controllerutil` (`SetControllerReference`, `CreateOrPatch`) does
//! for kubebuilder's controllers, with what a controller needs around it: one handle,
//! [`Owned`], from [`Context::owned`], that
//!
//! - reads the object from the controller's cache of the kinds it declares in
//!   [`Reconciler::owns`](crate::Reconciler::owns) ([`Owns`]), else from the API server;
//! - [applies](Owned::apply) the desired object by server-side apply, with a controller owner
//!   reference to its owner and the operator's `app.kubernetes.io/managed-by` label, and sends
//!   nothing when the object already is as desired ([`applied`]);
//! - adopts an orphan this operator made for an owner of that name (one left by `kubectl delete
//!   --cascade=orphan`), and refuses anyone else's object with [`Taken`], which says whose it is;
//! - writes only to the object as read (its `uid` and `resourceVersion` as preconditions), so
//!   that a stale cache costs a quiet retry ([`Stale`]), never a write to the wrong object;
//! - [hands fields over](Owned::release) to whoever else sets them (`spec.replicas` to an
//!   autoscaler), at the value they have;
//! - says what it did ([`Change`]) and publishes it as an Event about the owner;
//! - [deletes](Owned::delete) only the object the owner controls, as read, and leaves it when
//!   the owner is deleted with `--cascade=orphan`.
//!
//! # Example
//!
//! A controller that runs each `App` as a Deployment of the same name:
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use k8s_openapi::api::apps::v1::Deployment;
//! # use rbuilder_runtime::controller::Action;
//! # use rbuilder_runtime::owned;
//! # use rbuilder_runtime::{Context, Owns, Reconciler};
//! # use kube::CustomResource;
//! # use serde::{Deserialize, Serialize};
//! # #[derive(CustomResource, schemars::JsonSchema, Serialize, Deserialize, Clone, Debug)]
//! # #[kube(group = "example.com", version = "v1", kind = "App", namespaced)]
//! # pub struct AppSpec { image: String }
//! # #[derive(Debug, thiserror::Error)]
//! # enum Error { #[error("{0}")] Owned(#[from] owned::Error) }
//! # fn deployment(app: &App) -> Deployment { Deployment::default() }
//! # struct AppReconciler;
//! impl Reconciler for AppReconciler {
//!     # type Resource = App;
//!     # type Error = Error;
//!     # const NAME: &'static str = "app";
//!     # const FINALIZER: Option<&'static str> = Some("example.com/finalizer");
//!     // ...
//!     async fn apply(app: Arc<App>, ctx: Arc<Context>) -> Result<Action, Error> {
//!         // Named and placed as `app`, controlled by it, labelled as the operator's.
//!         let applied = ctx
//!             .owned::<Deployment>(&*app)
//!             // Left out of `deployment(&app)` when unset: whoever scales it owns it.
//!             .release(&["spec", "replicas"])
//!             .apply(deployment(&app))
//!             .await?;
//!         // `applied.change`: Created, Adopted, Updated or Unchanged (an Event says so);
//!         // `applied.object`: the Deployment as it is now, to make the status from.
//!         Ok(Action::await_change())
//!     }
//!
//!     async fn cleanup(app: Arc<App>, ctx: Arc<Context>) -> Result<Action, Error> {
//!         ctx.owned::<Deployment>(&*app).delete().await?;
//!         Ok(Action::await_change())
//!     }
//!
//!     fn owns() -> Owns<App> {
//!         // A change to one of its Deployments reconciles the App, the reads above come from
//!         // the cache the runtime keeps of them, and the manager is granted what they need.
//!         Owns::kind::<Deployment>()
//!     }
//! }
//! ```
//!
//! The RBAC rules, which `make manifests` derives from `owns`: `get`, `list`, `watch`,
//! `create`, `patch` and `delete` on the owned kind, and `update` on the owner's `finalizers`
//! subresource (the owner reference sets `blockOwnerDeletion`).
//!
//! # Where the owned object lives
//!
//! [`Context::owned`] names it as its owner, in the owner's namespace: a namespaced owner owns
//! objects in its own namespace, a cluster-scoped owner cluster-scoped objects, as Kubernetes'
//! garbage collector requires. A cluster-scoped owner's objects in a namespace:
//! [`Context::owned_in`]. Another name: [`Owned::named`].
//!
//! ```no_run
//! # use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
//! # use kube::ResourceExt;
//! # async fn f(ctx: &rbuilder_runtime::Context, config_map: &ConfigMap, namespace: &Namespace)
//! # -> Result<(), rbuilder_runtime::owned::Error> {
//! // The Secret `<name>-tls` beside the ConfigMap.
//! let secret = ctx.owned::<Secret>(config_map).named(format!("{}-tls", config_map.name_any()));
//! secret.apply(Secret::default()).await?;
//! // The ConfigMap of the cluster-scoped Namespace's name, in `team-a`.
//! let config_map = ctx.owned_in::<ConfigMap>(namespace, "team-a");
//! config_map.apply(ConfigMap::default()).await?;
//! # Ok(())
//! # }
//! ```
//!
//! A kind and owner that Kubernetes does not allow together (a cluster-scoped object owned by a
//! namespaced one) do not compile:
//!
//! ```compile_fail
//! # use k8s_openapi::api::core::v1::ConfigMap;
//! # use k8s_openapi::api::rbac::v1::ClusterRole;
//! # fn f(ctx: &rbuilder_runtime::Context, config_map: &ConfigMap) {
//! let role = ctx.owned::<ClusterRole>(config_map);
//! # }
//! ```

mod error;
#[doc(hidden)]
pub mod instances;
mod owns;
mod slim;
mod watch;

#[cfg(test)]
mod envtests;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::fmt::Debug;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{DeleteParams, ObjectMeta, Patch, PatchParams, Preconditions};
use kube::core::{ClusterResourceScope, DynamicObject, NamespaceResourceScope};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher;
use kube::{Api, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tracing::warn;

pub(crate) use error::is_stale;
pub use error::{Error, Stale, Taken, taken};
pub use owns::Owns;
pub(crate) use owns::api_resource;
pub(crate) use slim::{Slim, Wire};
pub use watch::ControllerExt;

use crate::applied;
use crate::context::Context;
use crate::events::{Event, EventType};
use crate::scope::Scope;

/// The label that marks what this operator made (its value: the operator's field manager,
/// [`Context::field_manager`]); [`ControllerExt::watch_owned`] watches only what has it.
pub const MANAGED_BY: &str = "app.kubernetes.io/managed-by";

/// When the controller driver retried a reconcile that failed with [`Stale`], quietly, however
/// often it recurred; it now retries with the object's backoff (a second first, then longer),
/// and reports it once it recurs.
#[deprecated(note = "a stale read is retried with the object's backoff; nothing reads this")]
pub const STALE_RETRY: Duration = Duration::from_secs(1);

/// What a kind needs for a controller to own its objects: a kind known when compiling
/// (k8s-openapi's, or one of `#[derive(CustomResource)]`), whose objects the runtime reads and
/// writes as JSON, keeps in a cache and hands between tasks. Every such kind has it: nothing
/// implements it by hand, it names the bounds once.
pub trait Ownable:
    Resource<DynamicType = (), Scope: Scope>
    + Clone
    + Debug
    + Serialize
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
}

impl<K> Ownable for K where
    K: Resource<DynamicType = (), Scope: Scope>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

/// What [`Owned::apply`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// The object did not exist: it was created.
    Created,
    /// An orphan this operator made for an owner of that name was taken over.
    Adopted,
    /// The object changed: its spec (its `metadata.generation` moved), or anything, for a kind
    /// without a generation.
    Updated,
    /// Nothing to change (no request sent), or nothing that deserves an Event (e.g. a label
    /// edited by hand, put back).
    Unchanged,
}

/// The result of [`Owned::apply`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Applied<K> {
    /// What the apply did; an Event about the owner said so, unless [`Change::Unchanged`].
    pub change: Change,
    /// The object as it is in the cluster now.
    pub object: Arc<K>,
}

/// What [`Owned::delete`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Deletion {
    /// It was deleted (what it owns goes in the background), or was already being deleted.
    Deleted,
    /// There was no object of that name.
    Absent,
    /// The object is not the owner's (another's, or without controller): left as it is.
    NotControlled,
    /// The owner is being deleted with `--cascade=orphan`: the object stays, and the garbage
    /// collector removes its owner reference.
    Orphaned,
}

/// An object of kind `K` that a controller owns: see the [module](self). Made by
/// [`Context::owned`] or [`Context::owned_in`].
#[must_use = "an Owned does nothing until applied, deleted or read"]
pub struct Owned<'a, K> {
    /// The context it was made from, without the controller's state, which it does not read.
    ctx: Context,
    context: PhantomData<&'a Context>,
    owner: Owner,
    name: String,
    namespace: Option<String>,
    /// The fields handed over when the desired object leaves them out, as paths.
    released: Vec<Vec<String>>,
    kind: PhantomData<fn() -> K>,
}

/// Logs, once per owner and owned kind, that `owner` owns `K`s its controller does not
/// declare in [`Reconciler::owns`](crate::Reconciler::owns). (A unit test's mocked context has
/// no caches either: it logs too, to a subscriber that tests rarely install.)
fn undeclared<K: Resource<DynamicType = ()>>(owner: &str) {
    static LOGGED: Mutex<BTreeSet<(String, String)>> = Mutex::new(BTreeSet::new());
    let kind = K::kind(&()).into_owned();
    let mut logged = LOGGED.lock().unwrap_or_else(PoisonError::into_inner);
    if logged.insert((owner.to_owned(), kind.clone())) {
        warn!(
            owner,
            %kind,
            "the controller owns {kind}s it does not declare: add `.and::<{kind}>()` (or \
             `Owns::kind::<{kind}>()`) to its `owns`, so that they are cached, watched and \
             granted (make manifests)"
        );
    }
}

/// What an [`Owned`] needs to know about its owner.
struct Owner {
    kind: String,
    name: String,
    uid: Option<String>,
    /// For Events about it.
    reference: ObjectReference,
    /// For the owned object: `None` if the owner has no name or uid.
    controller: Option<OwnerReference>,
    /// Being deleted with `--cascade=orphan`.
    orphaning: bool,
    /// Being deleted, in the snapshot the reconcile holds.
    deleting: bool,
    /// Where the API server serves the owner: read again before an adoption.
    url: String,
}

impl Owner {
    fn of<O: Resource<DynamicType = ()>>(owner: &O) -> Self {
        // `blockOwnerDeletion`: a foreground deletion of the owner waits for the object.
        let controller = owner
            .controller_owner_ref(&())
            .map(|reference| OwnerReference {
                block_owner_deletion: Some(true),
                ..reference
            });
        Self {
            kind: O::kind(&()).into_owned(),
            name: owner.name_any(),
            uid: owner.meta().uid.clone(),
            reference: owner.object_ref(&()),
            controller,
            // The API server adds this finalizer to an object deleted with
            // `propagationPolicy: Orphan` (`kubectl delete --cascade=orphan`).
            orphaning: owner.finalizers().iter().any(|f| f == "orphan"),
            deleting: owner.meta().deletion_timestamp.is_some(),
            url: format!(
                "{}/{}",
                O::url_path(&(), owner.meta().namespace.as_deref()),
                owner.name_any()
            ),
        }
    }
}

impl<S> Context<S> {
    /// The object of kind `K` that `owner` owns, named as `owner` and in its namespace (none
    /// for a cluster-scoped owner and kind). See [`owned`](crate::owned).
    pub fn owned<K>(
        &self,
        owner: &impl Resource<DynamicType = (), Scope = K::Scope>,
    ) -> Owned<'_, K>
    where
        K: Resource<DynamicType = ()>,
    {
        let owner = Owner::of(owner);
        Owned {
            ctx: self.stateless(),
            context: PhantomData,
            name: owner.name.clone(),
            namespace: owner.reference.namespace.clone(),
            owner,
            released: Vec::new(),
            kind: PhantomData,
        }
    }

    /// The object of kind `K` in `namespace` that the cluster-scoped `owner` owns, named as
    /// `owner`. See [`owned`](crate::owned).
    pub fn owned_in<K>(
        &self,
        owner: &impl Resource<DynamicType = (), Scope = ClusterResourceScope>,
        namespace: &str,
    ) -> Owned<'_, K>
    where
        K: Resource<DynamicType = (), Scope = NamespaceResourceScope>,
    {
        let owner = Owner::of(owner);
        Owned {
            ctx: self.stateless(),
            context: PhantomData,
            name: owner.name.clone(),
            namespace: Some(namespace.to_owned()),
            owner,
            released: Vec::new(),
            kind: PhantomData,
        }
    }

    /// Fills the cache of the owned kind `K` ([`Reconciler::owns`](crate::Reconciler::owns))
    /// with `objects`, as if its watch had listed them: for unit tests of reconcilers whose
    /// [`Owned`] handles read it. (A typed [`Cache`](crate::Cache) of your
    /// own: [`Cache::of`](crate::Cache::of).) Each object is kept as the watch keeps it: whole
    /// when it has no `managedFields`, as a test's objects rarely do, else only the fields this
    /// operator's applies own, the metadata and the status.
    pub fn cache_of<K>(&self, objects: impl IntoIterator<Item = K>)
    where
        K: Resource<DynamicType = ()> + Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        let (store, mut writer) = reflector::store();
        writer.apply_watcher_event(&watcher::Event::Init);
        for obj in objects {
            let slim = Slim::new(&obj, self.field_manager());
            writer.apply_watcher_event(&watcher::Event::InitApply(slim));
        }
        writer.apply_watcher_event(&watcher::Event::InitDone);
        self.caches.insert(store);
    }
}

impl<K: Ownable> Owned<'_, K> {
    /// This object under `name` instead of its owner's.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Hands the field at `path` (e.g. `&["spec", "replicas"]`) to whoever else sets it, when
    /// the desired object leaves it out: [`apply`](Self::apply) keeps its value (a Deployment
    /// without `replicas` would fall back to 1) under a field manager of its own,
    /// `<field manager>-released`, which the next to change it (an autoscaler, `kubectl
    /// scale`) takes it from; see [`Context::release_field`]. A desired object that sets the
    /// field takes it back.
    pub fn release(mut self, path: &[&str]) -> Self {
        self.released
            .push(path.iter().map(|key| (*key).to_owned()).collect());
        self
    }

    /// The object's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The object, from the controller's cache of `K`s when it holds it (a kind declared in
    /// [`Reconciler::owns`](crate::Reconciler::owns)), else from the API server; `None` if
    /// there is none. A kind the controller does not declare has no cache: each read is a GET,
    /// a change to its objects does not reconcile the owner, and the manager is granted no
    /// rule for it, which is logged once.
    ///
    /// The cached object holds what the controller reads of it: its metadata, its status, and
    /// the fields this operator's applies set (and those it [released](Self::release)), as its
    /// `managedFields` list them; not what the API server defaulted or others set. Read such a
    /// field from the API server (`ctx.api::<K>()`), or keep a [`Cache`](crate::Cache) of `K`,
    /// which holds whole objects.
    ///
    /// The cache holds only what this operator labelled as its own, so a read is sent for an
    /// object that does not exist, one that someone else made (which must be seen, to be
    /// refused), and one made too recently for the watch to have brought it: rare reads. A
    /// cached object may lag the cluster; [`apply`](Self::apply) and [`delete`](Self::delete)
    /// write only to the object as read, and a change the cache does not show yet brings
    /// another reconcile once it does.
    pub async fn get(&self) -> Result<Option<Arc<K>>, Error> {
        let mut key = ObjectRef::<Slim<K>>::new(&self.name);
        if let Some(namespace) = &self.namespace {
            key = key.within(namespace);
        }
        match self.ctx.caches.get::<Slim<K>>() {
            Some(cache) => {
                let cached = cache.get(&key).map(|slim| slim.object());
                match cached {
                    Some(Ok(cached)) => return Ok(Some(Arc::new(cached))),
                    // Not expected: the JSON kept is the object's own, less fields its type
                    // leaves optional. Read from the API server instead.
                    Some(Err(error)) => warn!(
                        kind = %K::kind(&()),
                        name = self.name,
                        %error,
                        "a cached object cannot be read back"
                    ),
                    None => {}
                }
            }
            None => undeclared::<K>(&self.owner.kind),
        }
        Ok(self.api().get_opt(&self.name).await?.map(Arc::new))
    }

    /// Server-side applies `desired` as this object, and says what it did.
    ///
    /// `desired` holds what the controller sets: its name and namespace may be left out (they
    /// are this handle's; others are refused); the owner reference and the
    /// [`MANAGED_BY`] label are added. An orphan is adopted if it has this operator's
    /// `managed-by` label and every label of `desired`: give `desired` labels that say which
    /// owner it is for (e.g. `app.kubernetes.io/instance`).
    ///
    /// - No object: created by an apply (not forced: one created meanwhile by someone else
    ///   makes it fail rather than be taken over). Event `Created`.
    /// - The owner's, or an orphan to adopt: unless it already holds `desired`, applied to that
    ///   very object as read, forced (the fields set here are put back to these values; those
    ///   that others set stay theirs). Event `Adopted`, or `Updated` if it changed.
    /// - Anyone else's: [`Error::Taken`], nothing sent.
    ///
    /// A write refused because the object changed since it was read: [`Error::Stale`].
    pub async fn apply(&self, desired: K) -> Result<Applied<K>, Error> {
        let mut desired = self.complete(desired)?;
        applied::stamp(&mut desired).map_err(kube::Error::SerdeError)?;
        let existing = self.get().await?;
        // What this code sets is there as it set it: most reconciles (a status change of the
        // object, a resync) end here, without a write.
        if let Some(current) = &existing
            && self.controls(current)
            && applied::unchanged(&**current, &desired)
        {
            return Ok(Applied {
                change: Change::Unchanged,
                object: Arc::clone(current),
            });
        }
        // Its writes' events wait for their answers, to be told apart (see `Echoes`).
        let echoes = self.ctx.caches.echoes::<Slim<K>>();
        let _writing = echoes
            .as_ref()
            .map(|echoes| echoes.writing(self.namespace.as_deref(), &self.name));
        let params = match existing.as_deref() {
            None => PatchParams::apply(self.ctx.field_manager()),
            Some(current) if self.controls(current) || self.may_adopt(current, &desired) => {
                if !self.controls(current) {
                    self.recheck_owner().await?;
                }
                // The uid: that very object, not one created in its place. The resourceVersion:
                // the object as read; if it changed since, the apply is refused (409).
                desired.meta_mut().uid = current.meta().uid.clone();
                desired.meta_mut().resource_version = current.meta().resource_version.clone();
                if let Some(version) = self.release_fields(current, &desired).await? {
                    // The release changed the object: apply to it as released.
                    let released = ObjectMeta {
                        uid: current.meta().uid.clone(),
                        resource_version: Some(version.clone()),
                        ..ObjectMeta::default()
                    };
                    if let Some(echoes) = &echoes {
                        echoes.wrote(current.meta().resource_version.as_deref(), &released);
                    }
                    desired.meta_mut().resource_version = Some(version);
                }
                self.ctx.apply_params()
            }
            Some(current) => return Err(self.taken(current).into()),
        };
        let applied = self
            .api()
            .patch(&self.name, &params, &Patch::Apply(&desired))
            .await
            .map_err(|error| match desired.meta().resource_version {
                Some(_) => self.stale_or(error),
                None => Error::Api(error),
            })?;
        if let Some(echoes) = &echoes {
            echoes.wrote(desired.meta().resource_version.as_deref(), applied.meta());
        }
        let change = match existing.as_deref() {
            None => Change::Created,
            Some(current) if !self.controls(current) => Change::Adopted,
            Some(current) if changed(current, &applied) => Change::Updated,
            Some(_) => Change::Unchanged,
        };
        let reason = match change {
            Change::Created => Some("Created"),
            Change::Adopted => Some("Adopted"),
            Change::Updated => Some("Updated"),
            Change::Unchanged => None,
        };
        if let Some(reason) = reason {
            self.publish(reason).await;
        }
        Ok(Applied {
            change,
            object: Arc::new(applied),
        })
    }

    /// Deletes this object if its owner controls it, unless the owner is being deleted with
    /// `--cascade=orphan`. Only the object as read (its `uid` and `resourceVersion` as
    /// preconditions): one that someone else has taken, or made in its place, since the read
    /// stays, and the refusal is [`Error::Stale`], so the retry reads it again. Event
    /// `Deleting`.
    ///
    /// Kubernetes' garbage collector would delete it too, after its owner is gone; deleting it
    /// in `cleanup` makes it go first.
    pub async fn delete(&self) -> Result<Deletion, Error> {
        if self.owner.orphaning {
            return Ok(Deletion::Orphaned);
        }
        let Some(current) = self.get().await? else {
            return Ok(Deletion::Absent);
        };
        if !self.controls(&current) {
            return Ok(Deletion::NotControlled);
        }
        self.publish("Deleting").await;
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: current.meta().uid.clone(),
                resource_version: current.meta().resource_version.clone(),
            }),
            ..DeleteParams::default()
        };
        match self.api().delete(&self.name, &params).await {
            Ok(_) => Ok(Deletion::Deleted),
            // Already gone: what the deletion was for.
            Err(kube::Error::Api(status)) if status.is_not_found() => Ok(Deletion::Deleted),
            Err(error) => Err(self.stale_or(error)),
        }
    }

    fn api(&self) -> Api<K> {
        K::Scope::api(self.ctx.client.clone(), self.namespace.as_deref())
    }

    /// `desired` named and placed as this object, with the owner reference and the label.
    fn complete(&self, mut desired: K) -> Result<K, Error> {
        let controller = self.owner.controller.clone().ok_or_else(|| {
            let owner = &self.owner;
            Error::Invalid(format!("{} {} has no uid yet", owner.kind, owner.name))
        })?;
        let meta = desired.meta_mut();
        let kind = K::kind(&());
        let differs = |field: &str, set: &Option<String>, here: Option<&String>| match set {
            Some(set) if Some(set) != here => Err(Error::Invalid(format!(
                "the desired {kind} has the {field} {set:?}, not {:?}",
                here.map_or("", String::as_str)
            ))),
            _ => Ok(()),
        };
        differs("name", &meta.name, Some(&self.name))?;
        differs("namespace", &meta.namespace, self.namespace.as_ref())?;
        meta.name = Some(self.name.clone());
        meta.namespace = self.namespace.clone();
        let references = meta.owner_references.get_or_insert_default();
        if references.iter().any(|r| r.controller == Some(true)) {
            return Err(Error::Invalid(format!(
                "the desired {kind} has a controller already: its owner reference is added"
            )));
        }
        references.push(controller);
        let manager = self.ctx.field_manager().to_owned();
        desired.labels_mut().insert(MANAGED_BY.to_owned(), manager);
        Ok(desired)
    }

    /// Whether the owner is the controller of `obj`.
    fn controls(&self, obj: &K) -> bool {
        let uid = self.owner.uid.as_ref();
        let references = obj.owner_references();
        references
            .iter()
            .any(|r| r.controller == Some(true) && Some(&r.uid) == uid)
    }

    /// Whether `obj` is an orphan this operator made for an owner of this name: without a
    /// controller (`kubectl delete --cascade=orphan` left it, and the garbage collector removed
    /// its owner reference), with every label of `desired` (its `managed-by` label among them).
    /// The owner adopts it, as a ReplicaSet adopts the Pods its selector matches, so that an
    /// owner deleted with `--cascade=orphan` and made again carries on with it.
    fn may_adopt(&self, obj: &K, desired: &K) -> bool {
        let labels = obj.labels();
        let references = obj.owner_references();
        !references.iter().any(|r| r.controller == Some(true))
            && desired
                .labels()
                .iter()
                .all(|(key, value)| labels.get(key) == Some(value))
    }

    fn taken(&self, obj: &K) -> Taken {
        let references = obj.owner_references();
        Taken {
            kind: K::kind(&()).into_owned(),
            name: self.name.clone(),
            namespace: self
                .namespace
                .clone()
                .filter(|_| self.owner.reference.namespace.is_none()),
            controller: references
                .iter()
                .find(|r| r.controller == Some(true))
                .cloned(),
            owner_kind: self.owner.kind.clone(),
        }
    }

    /// Releases the [released](Self::release) fields that `desired` leaves out and this
    /// operator's applies own in `current`; returns the object's new resourceVersion if that
    /// changed it.
    async fn release_fields(&self, current: &K, desired: &K) -> Result<Option<String>, Error> {
        let desired = serde_json::to_value(desired).map_err(kube::Error::SerdeError)?;
        let mut version = None;
        let mut current = current.clone();
        for path in &self.released {
            if desired.pointer(&format!("/{}", path.join("/"))).is_some() {
                continue;
            }
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            let released = self.ctx.release_field(&self.api(), &current, &path).await?;
            if let Some(released) = released {
                version = released.meta().resource_version.clone();
                current = released;
            }
        }
        Ok(version)
    }

    /// Before an adoption: the owner as the API server has it now, not as the reconcile's
    /// snapshot or a cache shows it. One being deleted, gone, or replaced by another of its
    /// name adopts nothing: the refusal is [`Error::Stale`] (the owner changed since it was
    /// read), and the retry finds its deletion and cleans up. So Kubernetes'
    /// `ControllerRefManager` rechecks before it adopts (`RecheckDeletionTimestamp`): else a
    /// reconcile queued before `kubectl delete --cascade=orphan` would take back the orphan the
    /// garbage collector had just let go, and its owner's deletion would delete it after all.
    async fn recheck_owner(&self) -> Result<(), Error> {
        let owner = &self.owner;
        let current = match owner.deleting {
            true => None,
            false => {
                let request = http::Request::get(&owner.url)
                    .body(Vec::new())
                    .map_err(kube::Error::HttpError)?;
                match self.ctx.client.request::<DynamicObject>(request).await {
                    Ok(current) => Some(current),
                    Err(kube::Error::Api(status)) if status.code == 404 => None,
                    Err(error) => return Err(Error::Api(error)),
                }
            }
        };
        let wants_it = current.is_some_and(|current| {
            current.metadata.uid == owner.uid && current.metadata.deletion_timestamp.is_none()
        });
        if wants_it {
            return Ok(());
        }
        let message = format!(
            "{} {} is being deleted or is gone: it adopts no {} (its orphan stays one)",
            owner.kind,
            owner.name,
            K::kind(&())
        );
        let status = kube::core::Status::failure(&message, "Conflict").with_code(409);
        Err(Error::Stale(Stale {
            kind: owner.kind.clone(),
            name: owner.name.clone(),
            error: kube::Error::Api(status.boxed()),
        }))
    }

    /// `error` as [`Error::Stale`] if it is the API server's 409 to a write with preconditions.
    fn stale_or(&self, error: kube::Error) -> Error {
        match &error {
            kube::Error::Api(status) if status.code == 409 => Error::Stale(Stale {
                kind: K::kind(&()).into_owned(),
                name: self.name.clone(),
                error,
            }),
            _ => Error::Api(error),
        }
    }

    /// Publishes a Normal Event about the owner: `<reason> <kind> <name>`.
    async fn publish(&self, reason: &str) {
        let event = Event {
            type_: EventType::Normal,
            reason: reason.into(),
            note: Some(format!("{reason} {} {}", K::kind(&()), self.name)),
            action: "Reconcile".into(),
            secondary: None,
        };
        self.ctx.publish_about(&self.owner.reference, event).await;
    }
}

/// Whether `applied`, the answer to an apply to `current`, shows a change worth an Event: a
/// new generation (a spec change; the status and metadata do not move it), or for a kind
/// without generations a new resourceVersion.
fn changed<K: Resource>(current: &K, applied: &K) -> bool {
    let (before, after) = (current.meta(), applied.meta());
    match (before.generation, after.generation) {
        (Some(before), Some(after)) => before != after,
        _ => before.resource_version != after.resource_version,
    }
}
