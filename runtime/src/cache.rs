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
        let synced = move || {
            let reader = reader.clone();
            // An error means the watch was dropped (the controller is stopping): nothing to
            // wait for any more.
            async move { reader.wait_until_ready().await.unwrap_or(()) }.boxed()
        };
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

/// A cache still without its first list after [`SYNC_TIMEOUT`].
#[derive(Debug, thiserror::Error)]
#[error("the controller's caches have not synced in {0:?}: see the log for the watch's error")]
pub struct NotSynced(Duration);
