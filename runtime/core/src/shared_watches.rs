//! One watch, and one cache, per kind, label selector and namespaces, shared by every controller
//! of the manager that watches them: two controllers that own Deployments open one watch of
//! Deployments and keep one copy of each, as controller-runtime's informers are shared per
//! kind. Without it, each controller would list, watch and hold the same objects again.
//!
//! The watch runs in a task of its own from the first controller that asks for it, and sends
//! each object it sees (a deletion too, and one missed while the watch was down: see
//! [`touched_and_vanished`]) to every controller that watches it; it stops once no controller
//! listens any more (they stopped), and the next one to ask starts it again.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::{Stream, StreamExt};
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher;
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tracing::{debug, warn};

use crate::echoes::Echoes;
use crate::errors::error_chain;
use crate::namespaces;
use crate::stores::{self, Ready, touched_and_vanished};

/// How often a watch that sees no change looks for controllers that stopped listening.
const PRUNE_EVERY: Duration = Duration::from_secs(5);

/// The watches of a manager, by what they watch.
#[derive(Default)]
pub struct SharedWatches(Mutex<HashMap<Key, Box<dyn Any + Send + Sync>>>);

/// What a watch watches: the kind, the watcher's configuration (its label selector, say) and
/// the namespaces (none: all of them).
#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    kind: TypeId,
    config: String,
    namespaces: Vec<Option<String>>,
}

/// One shared watch of `K`s.
struct Watch<K: Resource<DynamicType = ()> + 'static> {
    store: Store<K>,
    ready: Ready,
    /// The writes of its controllers that it brings back (see [`Echoes`]).
    echoes: Arc<Echoes>,
    listeners: Listeners<K>,
}

type Listeners<K> = Arc<Mutex<Vec<UnboundedSender<K>>>>;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Maps of handles: a panic while one was held leaves it usable.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl SharedWatches {
    /// The cache of the `K`s that `apis` list with `config`, each kept as `keep` makes it
    /// (an `S`: the object without `managedFields`, see [`namespaces::reflected`], or an owned
    /// object's [`Slim`](crate::owned::Slim) form), when it has listed them, the [`Echoes`]
    /// that its controllers note their writes in, and a stream of every change of them for one
    /// more controller: the watch of these, started if no controller has it yet.
    pub(crate) fn watch<K, S, F>(
        self: &Arc<Self>,
        apis: Vec<Api<K>>,
        config: watcher::Config,
        keep: F,
    ) -> (
        Store<S>,
        Ready,
        Arc<Echoes>,
        impl Stream<Item = Result<S, watcher::Error>> + Send + 'static + use<K, S, F>,
    )
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        S: Resource<DynamicType = ()> + Clone + Debug + Send + Sync + 'static,
        F: Fn(K) -> S + Clone + Send + Sync + 'static,
    {
        let key = Key {
            kind: TypeId::of::<S>(),
            config: format!("{config:?}"),
            namespaces: apis
                .iter()
                .map(|api| api.namespace().map(str::to_owned))
                .collect(),
        };
        let (sender, receiver) = unbounded_channel();
        let mut watches = lock(&self.0);
        let shared = watches
            .get(&key)
            .and_then(|watch| watch.downcast_ref::<Watch<S>>());
        let (store, ready, echoes) = match shared {
            Some(watch) => {
                lock(&watch.listeners).push(sender);
                debug!(kind = %K::kind(&()), "a watch shared with another controller");
                (
                    watch.store.clone(),
                    watch.ready.clone(),
                    watch.echoes.clone(),
                )
            }
            None => {
                let (store, writer) = reflector::store();
                let listeners = Arc::new(Mutex::new(vec![sender]));
                let echoes = Arc::new(Echoes::default());
                let events =
                    namespaces::reflected_as(apis, config, keep, writer, Some(echoes.clone()));
                let changes = touched_and_vanished(events, store.clone());
                let ready = stores::ready(&store);
                let watch = Watch {
                    store: store.clone(),
                    ready: ready.clone(),
                    echoes: echoes.clone(),
                    listeners: Arc::clone(&listeners),
                };
                watches.insert(key.clone(), Box::new(watch));
                tokio::spawn(Arc::clone(self).run(key, changes, listeners));
                (store, ready, echoes)
            }
        };
        (store, ready, echoes, changes_of(receiver))
    }

    /// Sends each change to the controllers listening, until none listens.
    async fn run<K>(
        self: Arc<Self>,
        key: Key,
        changes: impl Stream<Item = Result<K, watcher::Error>> + Send + 'static,
        listeners: Listeners<K>,
    ) where
        K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    {
        let mut changes = std::pin::pin!(changes);
        let mut prune = tokio::time::interval(PRUNE_EVERY);
        loop {
            tokio::select! {
                change = changes.next() => match change {
                    Some(Ok(obj)) => lock(&listeners).retain(|listener| listener.send(obj.clone()).is_ok()),
                    // The watcher tries again with a backoff (`namespaces::reflected`).
                    Some(Err(error)) => {
                        warn!(kind = %K::kind(&()), error = error_chain(&error), "watch failed");
                    }
                    None => return,
                },
                _ = prune.tick() => lock(&listeners).retain(|listener| !listener.is_closed()),
            }
            // Stopped under the watches' lock, so that a controller asking for it meanwhile
            // gets a new watch rather than this one.
            let mut watches = lock(&self.0);
            if lock(&listeners).is_empty() {
                watches.remove(&key);
                debug!(kind = %K::kind(&()), "a watch no controller listens to stopped");
                return;
            }
        }
    }
}

/// The changes a controller listens to, as a watch's stream.
fn changes_of<K: Send + 'static>(
    mut receiver: UnboundedReceiver<K>,
) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static {
    futures::stream::poll_fn(move |cx| receiver.poll_recv(cx)).map(Ok)
}
