//! The two scopes of Kubernetes kinds, namespaced and cluster-scoped, as a trait that code
//! generic over a kind builds its [`Api`] with. At the bottom of the runtime: the namespaces'
//! watches, the caches, the context and the owned handles all address objects through it.

use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use kube::{Api, Client, Resource};

/// The two scopes of Kubernetes kinds, and how to address their objects: lets code that is
/// generic over a kind build the right [`Api`] for it.
pub trait Scope {
    /// Whether objects of this scope are in a namespace.
    const NAMESPACED: bool;

    /// An [`Api`] over `namespace` (all namespaces if `None`); cluster-scoped kinds ignore it.
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default;
}

impl Scope for NamespaceResourceScope {
    const NAMESPACED: bool = true;

    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default,
    {
        match namespace {
            Some(namespace) => Api::namespaced(client, namespace),
            None => Api::all(client),
        }
    }
}

impl Scope for ClusterResourceScope {
    const NAMESPACED: bool = false;

    fn api<K>(client: Client, _namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self>,
        K::DynamicType: Default,
    {
        Api::all(client)
    }
}
