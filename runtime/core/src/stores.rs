//! The stores behind a controller's caches: each kind's [`Store`], kept for the controller
//! ([`Caches`]), and the waits for their first lists that a reconcile takes before it reads
//! them; and the stream of a watch's objects that also sends those deleted while it was down
//! ([`touched_and_vanished`]). The typed handles a controller holds are in [`crate::cache`];
//! the watches that fill the stores, shared between controllers, in
//! [`crate::shared_watches`].

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::future::{self, BoxFuture, Shared};
use futures::stream::{self, Stream};
use futures::{FutureExt, StreamExt};
use kube::Resource;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher;
use tracing::debug;

use crate::echoes::Echoes;

/// How long a reconcile waits for its controller's caches to be filled by their first list,
/// as controller-runtime's `CacheSyncTimeout` (2 minutes); after that it fails and is retried,
/// and the log says why the watch cannot list (e.g. a missing RBAC rule).
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(2 * 60);

/// The caches of one controller: by kind, those the runtime keeps (of the owned kinds) and
/// those of `Context::cache`; and the waits for every cache's first list, typed handles'
/// ([`Cache`](crate::Cache)) included.
#[derive(Default)]
pub(crate) struct Caches(Mutex<Kept>);

#[derive(Default)]
struct Kept {
    /// The [`Store`] of each kind that has one.
    by_kind: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    /// Each resolves once its store holds the watch's first list.
    synced: Vec<SyncWait>,
    /// The [`Echoes`] of the watch that fills a kind's store, where the runtime notes the
    /// controller's writes of that kind (its owned kinds').
    echoes: HashMap<TypeId, Arc<Echoes>>,
    /// The group and kind of the controller's own kind, and the [`Echoes`] of its watch.
    own: Option<(String, String, Arc<Echoes>)>,
}

type SyncWait = Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

/// Resolves once a store holds its watch's first list; each waiter clones it. One per store,
/// shared by every reconcile of every controller that waits for it: kube-runtime's
/// `Store::wait_until_ready` wakes only the last of several futures waiting at once (its
/// one-shot channel keeps one waker), so the others slept until their timeout, 2 minutes (every
/// object but one after a restart, and a controller sharing another's watch).
pub(crate) type Ready = Shared<BoxFuture<'static, ()>>;

/// The [`Ready`] of `store`: make it once per store.
pub(crate) fn ready<K>(store: &Store<K>) -> Ready
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    let reader = store.clone();
    // An error means the watch was dropped (the controller is stopping): nothing to wait for
    // any more.
    async move { reader.wait_until_ready().await.unwrap_or(()) }
        .boxed()
        .shared()
}

impl Caches {
    fn lock(&self) -> MutexGuard<'_, Kept> {
        // A map of handles: a panic while it was held leaves it usable.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Keeps `store` as the cache of `K` (replacing an earlier one of `K`), a store of its own.
    pub(crate) fn insert<K>(&self, store: Store<K>)
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        let ready = ready(&store);
        self.insert_ready(store, &ready);
    }

    /// [`insert`](Self::insert) of a store that may be shared, whose `ready` is given.
    pub(crate) fn insert_ready<K>(&self, store: Store<K>, ready: &Ready)
    where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        self.wait_until(ready);
        self.lock()
            .by_kind
            .insert(TypeId::of::<K>(), Box::new(store));
    }

    /// Keeps `echoes` as those of the watch that fills the cache of `K`.
    pub(crate) fn insert_echoes<K: 'static>(&self, echoes: Arc<Echoes>) {
        self.lock().echoes.insert(TypeId::of::<K>(), echoes);
    }

    /// The [`Echoes`] of the watch of `K`, if the controller keeps a cache of `K` whose
    /// watch tells its writes apart.
    pub(crate) fn echoes<K: 'static>(&self) -> Option<Arc<Echoes>> {
        self.lock().echoes.get(&TypeId::of::<K>()).cloned()
    }

    /// Keeps `echoes` as those of the watch of the controller's own kind, `K`.
    pub(crate) fn insert_own_echoes<K: Resource<DynamicType = ()>>(&self, echoes: Arc<Echoes>) {
        let (group, kind) = (K::group(&()).into_owned(), K::kind(&()).into_owned());
        self.lock().own = Some((group, kind, echoes));
    }

    /// The [`Echoes`] of the watch of the controller's own kind, if that is `K`.
    pub(crate) fn own_echoes<K: Resource<DynamicType = ()>>(&self) -> Option<Arc<Echoes>> {
        let kept = self.lock();
        let (group, kind, echoes) = kept.own.as_ref()?;
        (*group == K::group(&()) && *kind == K::kind(&())).then(|| Arc::clone(echoes))
    }

    /// Has the controller wait for a store's first list, `ready`, before its reconciles.
    pub(crate) fn wait_until(&self, ready: &Ready) {
        let ready = ready.clone();
        let synced = move || ready.clone().boxed();
        self.lock().synced.push(Box::new(synced));
    }

    /// The cache of `K`, if there is one.
    pub(crate) fn get<K>(&self) -> Option<Store<K>>
    where
        K: Resource<DynamicType = ()> + Clone + 'static,
    {
        let kept = self.lock();
        let store = kept.by_kind.get(&TypeId::of::<K>())?;
        store.downcast_ref::<Store<K>>().cloned()
    }

    /// Resolves once every cache holds its watch's first list; `Err` after `timeout`.
    pub(crate) async fn synced(&self, timeout: Duration) -> Result<(), NotSynced> {
        let waits: Vec<_> = self.lock().synced.iter().map(|synced| synced()).collect();
        if waits.is_empty() {
            return Ok(());
        }
        tokio::time::timeout(timeout, future::join_all(waits))
            .await
            .map(drop)
            .map_err(|_| NotSynced(timeout))
    }
}

/// The objects of `events`, a watch reflected into `store`, as `touched_objects` gives them
/// (each one listed, applied or deleted), and, once the watch has listed again, each object
/// that was in the store before that list and is not in it after: one deleted while the watch
/// was down. kube's watcher lists again when its watch cannot resume (410 Gone, e.g. after
/// the API server restarted), and the reflector's store then silently drops what the list
/// lacks; client-go's informer sends those as deletions (`DeletedFinalStateUnknown`), and so
/// does this, with the object as last seen, so that a deleted child wakes its owner.
pub(crate) fn touched_and_vanished<K, S>(
    events: S,
    store: Store<K>,
) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    S: Stream<Item = Result<watcher::Event<K>, watcher::Error>> + Send + 'static,
{
    // The store's objects when a list starts (the reflector fills a buffer during the list and
    // swaps it in at its end), until the list is done.
    let mut before: Option<Vec<Arc<K>>> = None;
    events.flat_map(move |event| {
        let objects = match event {
            Err(error) => vec![Err(error)],
            Ok(
                watcher::Event::Apply(obj)
                | watcher::Event::Delete(obj)
                | watcher::Event::InitApply(obj),
            ) => vec![Ok(obj)],
            Ok(watcher::Event::Init) => {
                before = Some(store.state());
                Vec::new()
            }
            Ok(watcher::Event::InitDone) => {
                let vanished: Vec<_> = before
                    .take()
                    .into_iter()
                    .flatten()
                    .filter(|old| {
                        // Gone, or another object under its name (created after a deletion).
                        let now = store.get(&ObjectRef::from_obj(&**old));
                        now.is_none_or(|now| now.meta().uid != old.meta().uid)
                    })
                    .map(|old| Ok(K::clone(&old)))
                    .collect();
                if !vanished.is_empty() {
                    let kind = K::kind(&());
                    debug!(%kind, count = vanished.len(), "deleted while the watch was down");
                }
                vanished
            }
        };
        stream::iter(objects)
    })
}

/// A cache still without its first list after the cache sync timeout (2 minutes, as
/// controller-runtime's `CacheSyncTimeout`).
#[derive(Debug, thiserror::Error)]
#[error("the controller's caches have not synced in {0:?}: see the log for the watch's error")]
pub struct NotSynced(Duration);

#[cfg(test)]
pub(crate) mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use kube::runtime::reflector;

    use super::*;
    use crate::testing::within_timeout;

    /// A Deployment `name` in `default` with the uid `d-1` (the caches' tests' object).
    pub(crate) fn deployment(name: &str) -> Deployment {
        let mut deployment = Deployment::default();
        deployment.metadata.name = Some(name.into());
        deployment.metadata.namespace = Some("default".into());
        deployment.metadata.uid = Some("d-1".into());
        deployment
    }

    /// However many reconciles wait for a cache's first list at once (after a restart, one per
    /// object), each goes on as soon as it is there, not after [`SYNC_TIMEOUT`].
    #[tokio::test]
    async fn every_reconcile_waiting_for_the_first_list_goes_on_once_it_is_there() {
        let caches = Arc::new(Caches::default());
        let (store, mut writer) = reflector::store::<Deployment>();
        caches.insert(store);
        let waiting: Vec<_> = (0..3)
            .map(|_| {
                let caches = Arc::clone(&caches);
                tokio::spawn(async move { caches.synced(SYNC_TIMEOUT).await })
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
        let caches = Caches::default();
        let (store, _writer) = reflector::store::<Deployment>();
        caches.insert(store);
        let waited = caches.synced(Duration::from_millis(50)).await;
        assert!(waited.is_err(), "synced before its first list");
    }

    /// After a list that lacks an object the store had, the object is sent as deleted; one
    /// created again under its name (another uid) too, besides its successor.
    #[tokio::test]
    async fn an_object_missing_from_a_new_list_is_sent_as_deleted() {
        use kube::runtime::WatchStreamExt;
        use kube::runtime::watcher::Event;

        let mut recreated = deployment("b");
        recreated.metadata.uid = Some("d-2".into());
        let events = [
            Event::Init,
            Event::InitApply(deployment("a")),
            Event::InitApply(deployment("b")),
            Event::InitApply(deployment("c")),
            Event::InitDone,
            Event::Apply(deployment("a")),
            // The watch lists again: c is gone, b is another object.
            Event::Init,
            Event::InitApply(deployment("a")),
            Event::InitApply(recreated),
            Event::InitDone,
        ];
        let (store, writer) = reflector::store::<Deployment>();
        let events = futures::stream::iter(events.map(Ok)).reflect(writer);
        let sent: Vec<_> = touched_and_vanished(events, store)
            .map(|obj| {
                let obj = obj.expect("no error");
                (
                    obj.metadata.name.unwrap_or_default(),
                    obj.metadata.uid.unwrap_or_default(),
                )
            })
            .collect()
            .await;
        let sent: Vec<_> = sent.iter().map(|(n, u)| (n.as_str(), u.as_str())).collect();
        assert_eq!(
            &sent[..4],
            [("a", "d-1"), ("b", "d-1"), ("c", "d-1"), ("a", "d-1")]
        );
        assert_eq!(&sent[4..6], [("a", "d-1"), ("b", "d-2")]);
        let mut vanished = sent[6..].to_vec();
        vanished.sort_unstable();
        assert_eq!(vanished, [("b", "d-1"), ("c", "d-1")]);
    }
}
