//! The kinds a controller owns, as it declares them ([`Reconciler::owns`](crate::Reconciler::owns)):
//! from that one declaration the runtime watches them (a change reconciles the owner), keeps
//! them in the cache that [`Owned`](super::Owned) reads, and grants the manager what
//! [`Owned`](super::Owned) needs on them (`make manifests`).

use std::fmt::Debug;

use kube::Resource;
use kube::core::ApiResource;
use kube::runtime::controller::Controller;
use serde::de::DeserializeOwned;

use super::{Ownable, watch};
use crate::context::{Context, Scope};

/// The kinds whose objects a controller of `O`s makes with [`Context::owned`] (or
/// [`Context::owned_in`]): what controller-runtime's `Owns(&appsv1.Deployment{})` says in
/// `SetupWithManager`, and kube's `Controller::owns`, with the RBAC rules besides.
///
/// ```
/// # use k8s_openapi::api::apps::v1::Deployment;
/// # use k8s_openapi::api::core::v1::{ConfigMap, Service};
/// # use rbuilder_runtime::owned::Owns;
/// // In `impl Reconciler`, for a controller of ConfigMaps (say):
/// fn owns() -> Owns<ConfigMap> {
///     Owns::kind::<Deployment>().and::<Service>()
/// }
/// # assert_eq!(owns().len(), 2);
/// # assert_eq!(Owns::<ConfigMap>::kind::<Service>().and::<Service>().len(), 1);
/// ```
#[must_use]
pub struct Owns<O: Resource<DynamicType = ()> + Clone + Debug + 'static> {
    kinds: Vec<OwnedKind<O>>,
}

/// One owned kind: its name for the RBAC rules, and how to watch it.
struct OwnedKind<O: Resource<DynamicType = ()> + Clone + Debug + 'static> {
    resource: fn() -> ApiResource,
    watch: fn(Controller<O>, &Context) -> Controller<O>,
}

impl<O> Owns<O>
where
    O: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    O::Scope: Scope,
{
    /// No kind: a controller that owns nothing, or whose owned objects are made by something
    /// else (a Deployment's ReplicaSets). What `owns` returns unless the controller says.
    ///
    /// ```
    /// use k8s_openapi::api::apps::v1::Deployment;
    /// use rbuilder_runtime::Owns;
    ///
    /// assert!(Owns::<Deployment>::none().is_empty());
    /// ```
    pub fn none() -> Self {
        Self { kinds: Vec::new() }
    }

    /// The kind `K` alone.
    pub fn kind<K>() -> Self
    where
        K: Ownable,
    {
        Self::none().and::<K>()
    }

    /// These kinds and `K`.
    pub fn and<K>(mut self) -> Self
    where
        K: Ownable,
    {
        // A kind said twice is watched once.
        if !self.resources().contains(&api_resource::<K>()) {
            self.kinds.push(OwnedKind {
                resource: api_resource::<K>,
                watch: watch::owned_by::<K, O>,
            });
        }
        self
    }

    /// How many kinds.
    pub fn len(&self) -> usize {
        self.kinds.len()
    }

    /// Whether there is no kind.
    pub fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }

    /// `controller` watching each kind (see
    /// [`ControllerExt::watch_owned`](super::ControllerExt)).
    pub(crate) fn watch(self, controller: Controller<O>, ctx: &Context) -> Controller<O> {
        self.kinds
            .into_iter()
            .fold(controller, |controller, kind| (kind.watch)(controller, ctx))
    }

    /// The kinds, for their RBAC rules.
    pub(crate) fn resources(&self) -> Vec<ApiResource> {
        self.kinds.iter().map(|kind| (kind.resource)()).collect()
    }
}

impl<O> Default for Owns<O>
where
    O: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    O::Scope: Scope,
{
    fn default() -> Self {
        Self::none()
    }
}

/// `K`'s group, version, kind and plural.
pub(crate) fn api_resource<K: Resource<DynamicType = ()>>() -> ApiResource {
    ApiResource::erase::<K>(&())
}
