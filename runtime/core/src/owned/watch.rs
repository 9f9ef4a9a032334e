//! The watch of a controller's owned objects: it triggers the owner's reconciles and keeps the
//! cache that [`Owned::get`](super::Owned::get) reads.

use std::fmt::Debug;
use std::marker::PhantomData;
use std::sync::Arc;

use futures::{Stream, TryStreamExt};
use kube::Resource;
use kube::core::PartialObjectMeta;
use kube::runtime::controller::Controller;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use serde::de::DeserializeOwned;

use super::{MANAGED_BY, Ownable, Slim, Wire};
use crate::context::{Context, Scope};

/// What a controller adds to kube's [`Controller`] for the objects it owns.
pub trait ControllerExt {
    /// Watches the `K`s this operator made (those with its [`MANAGED_BY`] label, not every
    /// `K` in the cluster), reconciles the controller owner of each one that changes or goes
    /// (an object deleted or edited by hand is put back at once), and keeps them in the cache
    /// that [`Context::owned`] reads them from (see [`Context::cache_watched`]). In
    /// [`Reconciler::watches`](crate::Reconciler::watches):
    /// `controller.watch_owned::<Deployment>(ctx)`.
    ///
    /// As controller-runtime's `Owns`, it follows only the controller owner reference, of any
    /// version of the owner's kind (kube's `Controller::owns` follows every owner reference of
    /// that very version). The rules it needs: `list` and `watch` on `K`.
    ///
    /// Declare the kind in [`Reconciler::owns`](crate::Reconciler::owns) instead, which
    /// watches it the same way and grants the manager its rules too.
    #[must_use]
    #[deprecated(
        since = "0.2.0",
        note = "declare the kind in `Reconciler::owns` (`Owns::kind::<K>()`), which also grants \
                its RBAC rules, and remove this call"
    )]
    fn watch_owned<K>(self, ctx: &Context<impl Send + Sync + 'static>) -> Self
    where
        K: Ownable;
}

impl<O> ControllerExt for Controller<O>
where
    O: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    O::Scope: Scope,
{
    fn watch_owned<K>(self, ctx: &Context<impl Send + Sync + 'static>) -> Self
    where
        K: Ownable,
    {
        owned_by::<K, O>(self, &ctx.stateless())
    }
}

/// `controller` watching the `K`s this operator made, triggered by their controller owner:
/// what [`Owns`](super::Owns) does for each kind it holds.
pub(super) fn owned_by<K, O>(controller: Controller<O>, ctx: &Context) -> Controller<O>
where
    K: Ownable,
    O: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    O::Scope: Scope,
{
    let managed = format!("{MANAGED_BY}={}", ctx.field_manager());
    let config = watcher::Config::default().labels(&managed);
    controller.watches_stream(owned_cache::<K>(ctx, config), controller_of::<_, O>)
}

/// The cache of an owned kind, which [`Owned`](super::Owned) reads: the `K`s in the watched
/// namespaces, each as [`Slim`] keeps it, and the stream of their changes as metadata (the
/// owner references), which is what the watch's triggers read, less the echoes of the
/// controller's own applies ([`Echoes`](crate::echoes::Echoes): `Owned::apply` notes them).
/// Shared by every controller of the manager that owns `K` (see
/// [`SharedWatches`](crate::shared_watches::SharedWatches)).
pub(super) fn owned_cache<K>(
    ctx: &Context,
    config: watcher::Config,
) -> impl Stream<Item = Result<PartialObjectMeta<K>, watcher::Error>> + Send + 'static
where
    K: Ownable,
{
    let apis = ctx.watch_namespaces.apis(&ctx.client);
    let field_manager = ctx.field_manager().to_owned();
    // Read as JSON, not as `K`: see `Slim`.
    let keep = move |wire: Wire<K>| Slim::kept(wire, &field_manager);
    let (store, ready, echoes, changes) = ctx.watches.watch(apis, config, keep);
    ctx.caches.insert_ready(store, &ready);
    ctx.caches.insert_echoes::<Slim<K>>(Arc::clone(&echoes));
    echoes
        .without(changes)
        .map_ok(|slim: Slim<K>| PartialObjectMeta {
            types: None,
            metadata: slim.meta().clone(),
            _phantom: PhantomData,
        })
}

/// The controller owner of `obj`, if it is an `O`: in `obj`'s namespace if `O` is namespaced
/// (an owner reference names no namespace), in none if `O` is cluster-scoped. Any version of
/// `O`'s group and kind: the reference keeps the version it was made with.
pub(super) fn controller_of<K, O>(obj: K) -> Option<ObjectRef<O>>
where
    K: Resource,
    O: Resource<DynamicType = ()>,
    O::Scope: Scope,
{
    let meta = obj.meta();
    let group = |api_version: &str| match api_version.split_once('/') {
        Some((group, _)) => group.to_owned(),
        None => String::new(),
    };
    let owner = meta.owner_references.iter().flatten().find(|r| {
        r.controller == Some(true)
            && r.kind == O::kind(&())
            && group(&r.api_version) == O::group(&())
    })?;
    let reference = ObjectRef::new(&owner.name);
    if O::Scope::NAMESPACED {
        Some(reference.within(meta.namespace.as_deref()?))
    } else {
        Some(reference)
    }
}
