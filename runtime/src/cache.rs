//! Caches of the other kinds a controller watches (e.g. the Deployments it owns), so that its
//! reconciles read them from memory instead of sending a GET each time, as controller-runtime's
//! informer cache does for kubebuilder's controllers.
//!
//! Each cache is kept by a reflector on the very watch that triggers the controller's
//! reconciles ([`Context::cache`](crate::Context::cache)): one watch per kind, not one for the
//! triggers and another for the cache. Its objects are without `managedFields`, which most of
//! an object's size is and which reconciles rarely read
//! ([`release_field`](crate::Context::release_field) reads them fresh when it needs them).
//!
//! A cache is per controller (each gets its own [`Context`](crate::Context)), and holds one
//! watch per kind.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::FutureExt;
use futures::future::{self, BoxFuture};
use kube::Resource;
use kube::runtime::reflector::Store;

/// How long a reconcile waits for its controller's caches to be filled by their first list,
/// as controller-runtime's `CacheSyncTimeout` (2 minutes); after that it fails and is retried,
/// and the log says why the watch cannot list (e.g. a missing RBAC rule).
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(2 * 60);

/// The caches of one controller, by kind.
#[derive(Default)]
pub(crate) struct Caches(Mutex<HashMap<TypeId, Cache>>);

/// One kind's cache.
struct Cache {
    /// The [`Store`] of the kind.
    store: Box<dyn Any + Send + Sync>,
    /// Resolves once the store holds the watch's first list.
    synced: Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>,
}

impl Caches {
    fn lock(&self) -> MutexGuard<'_, HashMap<TypeId, Cache>> {
        // A map of handles: a panic while it was held leaves it usable.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `store` as the cache of `K` (replacing an earlier one of `K`).
    pub(crate) fn insert<K>(&self, store: Store<K>)
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        let reader = store.clone();
        // One wait, shared by every reconcile that waits: kube-runtime's
        // `Store::wait_until_ready` wakes only the last of several futures waiting at once (its
        // one-shot channel keeps one waker), so the others slept until their timeout, 2 minutes
        // (every object but one after a restart). A shared future wakes them all.
        // An error means the watch was dropped (the controller is stopping): nothing to wait
        // for any more.
        let ready = async move { reader.wait_until_ready().await.unwrap_or(()) }
            .boxed()
            .shared();
        let synced = move || ready.clone().boxed();
        let cache = Cache {
            store: Box::new(store),
            synced: Box::new(synced),
        };
        self.lock().insert(TypeId::of::<K>(), cache);
    }

    /// The cache of `K`, if there is one.
    pub(crate) fn get<K>(&self) -> Option<Store<K>>
    where
        K: Resource<DynamicType = ()> + Clone + 'static,
    {
        let caches = self.lock();
        let cache = caches.get(&TypeId::of::<K>())?;
        cache.store.downcast_ref::<Store<K>>().cloned()
    }

    /// Resolves once every cache holds its watch's first list; `Err` after `timeout`.
    pub(crate) async fn synced(&self, timeout: Duration) -> Result<(), NotSynced> {
        let waits: Vec<_> = self.lock().values().map(|cache| (cache.synced)()).collect();
        if waits.is_empty() {
            return Ok(());
        }
        tokio::time::timeout(timeout, future::join_all(waits))
            .await
            .map(drop)
            .map_err(|_| NotSynced(timeout))
    }
}

/// A cache still without its first list after the cache sync timeout (2 minutes, as
/// controller-runtime's `CacheSyncTimeout`).
#[derive(Debug, thiserror::Error)]
#[error("the controller's caches have not synced in {0:?}: see the log for the watch's error")]
pub struct NotSynced(Duration);

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{FieldsV1, ManagedFieldsEntry};
    use kube::Api;
    use kube::runtime::reflector::{self, ObjectRef};
    use kube::runtime::watcher;
    use serde_json::json;

    use super::*;
    use crate::testing::{Method, mock_context, within_timeout};

    fn deployment(name: &str) -> Deployment {
        let mut deployment = Deployment::default();
        deployment.metadata.name = Some(name.into());
        deployment.metadata.namespace = Some("default".into());
        deployment.metadata.uid = Some("d-1".into());
        deployment
    }

    #[tokio::test]
    async fn a_controller_reads_its_cache_by_kind() {
        let (ctx, _server) = mock_context();
        assert!(ctx.cached::<Deployment>().is_none());
        ctx.cache_of([deployment("a")]);
        let cache = ctx.cached::<Deployment>().expect("a cache of Deployments");
        let key = ObjectRef::new("a").within("default");
        assert!(cache.get(&key).is_some());
        // Only the kinds it caches.
        assert!(ctx.cached::<ConfigMap>().is_none());
        within_timeout(ctx.caches.synced(SYNC_TIMEOUT))
            .await
            .expect("a filled cache is synced");
    }

    /// Each controller has caches of its own.
    #[tokio::test]
    async fn a_controllers_context_starts_without_caches() {
        let (ctx, _server) = mock_context();
        ctx.cache_of([deployment("a")]);
        assert!(ctx.for_controller().cached::<Deployment>().is_none());
    }

    /// However many reconciles wait for a cache's first list at once (after a restart, one per
    /// object), each goes on as soon as it is there, not after [`SYNC_TIMEOUT`].
    #[tokio::test]
    async fn every_reconcile_waiting_for_the_first_list_goes_on_once_it_is_there() {
        let (ctx, _server) = mock_context();
        let (store, mut writer) = reflector::store::<Deployment>();
        ctx.caches.insert(store);
        let waiting: Vec<_> = (0..3)
            .map(|_| {
                let ctx = ctx.clone();
                tokio::spawn(async move { ctx.caches.synced(SYNC_TIMEOUT).await })
            })
            .collect();
        // Each of them waits before the list comes.
        tokio::time::sleep(Duration::from_millis(50)).await;
        writer.apply_watcher_event(&watcher::Event::InitDone);
        for wait in waiting {
            let synced = within_timeout(wait).await.expect("the waiting task");
            synced.expect("synced once the first list is there");
        }
    }

    /// Until its first list, a cache would say that nothing exists: reconciles wait for it, and
    /// fail (to be retried) if it takes too long.
    #[tokio::test]
    async fn a_cache_before_its_first_list_is_not_synced() {
        let (ctx, _server) = mock_context();
        let (store, _writer) = reflector::store::<Deployment>();
        ctx.caches.insert(store);
        let waited = ctx.caches.synced(Duration::from_millis(50)).await;
        assert!(waited.is_err(), "synced before its first list");
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
