//! The queue in front of a controller's workers, as controller-runtime's workqueue keeps it: a
//! line of object keys in the order they became due, each in it at most once, and a key is
//! never handed to two workers at once.
//!
//! kube-runtime's controller only tells the queue that a key is due (a change of the object,
//! of an object it owns or watches); the driver's workers take keys from it and read the object
//! from the cache then. So an object changed again and again while it waits for a worker is
//! reconciled once, as it is when its turn comes; one changed during its reconcile is due again
//! once that reconcile ends, behind the keys that were waiting. (With kube-runtime's own queue,
//! an object waiting for a worker counts as being reconciled, and every change meanwhile brought
//! one more reconcile after it; and the next key is taken from a set in no particular order,
//! so that a few failing objects could starve the others.)
//!
//! Not generic: the controller's kind is known only to the driver that reads the cache.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use kube::runtime::reflector::ObjectRef;
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::queue_metrics::{QueueMetrics, Queued};

/// An object of the controller's kind: its namespace (none for a cluster-scoped kind) and name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Key {
    pub(crate) namespace: Option<String>,
    pub(crate) name: String,
}

impl Key {
    /// The key of `obj`.
    pub(crate) fn of(obj: &impl kube::Resource) -> Self {
        let meta = obj.meta();
        Self {
            namespace: meta.namespace.clone(),
            name: meta.name.clone().unwrap_or_default(),
        }
    }

    /// The reference to the object in a cache of its kind.
    pub(crate) fn object_ref<K: kube::Resource<DynamicType = ()>>(&self) -> ObjectRef<K> {
        let object = ObjectRef::new(&self.name);
        match &self.namespace {
            Some(namespace) => object.within(namespace),
            None => object,
        }
    }
}

/// The queue of one controller.
pub(crate) struct WorkQueue {
    controller: &'static str,
    metrics: QueueMetrics,
    state: Mutex<State>,
    /// Told when a key may have become due: a key added, or a delay shortened.
    changed: Notify,
}

#[derive(Default)]
struct State {
    /// The keys due, in the order they became due, each with its time in the queue
    /// (`workqueue_depth`, `workqueue_queue_duration_seconds`).
    due: VecDeque<(Key, Queued)>,
    /// The keys in `due`.
    queued: HashSet<Key>,
    /// The keys a worker has taken and not [`done`](WorkQueue::done) yet.
    taken: HashSet<Key>,
    /// Taken keys that became due again meanwhile, with their time in the queue from then (as
    /// client-go counts them): due once their reconcile ends.
    again: HashMap<Key, Queued>,
    /// The keys asked to come back after a delay, with when; `timers` holds the same, in order.
    later: HashMap<Key, Instant>,
    timers: BTreeSet<(Instant, Key)>,
}

impl WorkQueue {
    pub(crate) fn new(controller: &'static str, metrics: QueueMetrics) -> Self {
        Self {
            controller,
            metrics,
            state: Mutex::default(),
            changed: Notify::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Only sets of keys: a panic while it was held leaves them usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `key` is due now. A delay it was asked to come back after is dropped: this turn comes
    /// first, and what its reconcile returns says when the next one is (as kube-runtime's
    /// scheduler keeps one time per key).
    pub(crate) fn add(&self, key: Key) {
        let mut state = self.state();
        state.cancel_later(&key);
        if self.enqueue(&mut state, key) {
            self.changed.notify_one();
        }
    }

    /// `key` is due after `delay`, unless it is due sooner: an earlier time it was asked for
    /// stands, and a key already due or coming again waits no longer.
    pub(crate) fn add_after(&self, key: Key, delay: Duration) {
        let mut state = self.state();
        if state.queued.contains(&key) || state.again.contains_key(&key) {
            return;
        }
        let at = Instant::now() + delay;
        if state.later.get(&key).is_some_and(|earlier| *earlier <= at) {
            return;
        }
        state.cancel_later(&key);
        state.timers.insert((at, key.clone()));
        state.later.insert(key, at);
        self.changed.notify_one();
    }

    /// Puts `key` in line if it is not there yet, or marks it due again if a worker has it;
    /// whether it joined the line.
    fn enqueue(&self, state: &mut State, key: Key) -> bool {
        if state.taken.contains(&key) {
            let (metrics, controller) = (&self.metrics, self.controller);
            state
                .again
                .entry(key)
                .or_insert_with(|| metrics.add(controller));
            return false;
        }
        if !state.queued.insert(key.clone()) {
            return false;
        }
        let queued = self.metrics.add(self.controller);
        state.due.push_back((key, queued));
        true
    }

    /// Waits for the next key due, and hands it to the caller's worker, with its time in the
    /// queue (to [start](Queued::start)); the caller calls [`done`](Self::done) once its
    /// reconcile ends. Meant for one caller at a time: the driver's loop that gives out workers.
    pub(crate) async fn next(&self) -> (Key, Queued) {
        loop {
            let changed = self.changed.notified();
            let wake_at = {
                let mut state = self.state();
                let now = Instant::now();
                while let Some((at, key)) = state.timers.first().cloned()
                    && at <= now
                {
                    state.cancel_later(&key);
                    self.enqueue(&mut state, key);
                }
                if let Some((key, queued)) = state.due.pop_front() {
                    state.queued.remove(&key);
                    state.taken.insert(key.clone());
                    return (key, queued);
                }
                state.timers.first().map(|(at, _)| *at)
            };
            match wake_at {
                Some(at) => {
                    tokio::select! {
                        () = changed => {}
                        () = tokio::time::sleep_until(at) => {}
                    }
                }
                None => changed.await,
            }
        }
    }

    /// The reconcile of `key` ended; it comes back after `then` if it asked to (a requeue, a
    /// failure's retry), or at once if it became due while it was reconciled.
    pub(crate) fn done(&self, key: Key, then: Option<Duration>) {
        let mut state = self.state();
        state.taken.remove(&key);
        if let Some(queued) = state.again.remove(&key) {
            state.queued.insert(key.clone());
            state.due.push_back((key, queued));
            self.changed.notify_one();
            return;
        }
        drop(state);
        if let Some(delay) = then {
            self.add_after(key, delay);
        }
    }

    /// How many keys wait for a worker.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.state().due.len()
    }
}

impl State {
    fn cancel_later(&mut self, key: &Key) {
        if let Some(at) = self.later.remove(key) {
            self.timers.remove(&(at, key.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> Key {
        Key {
            namespace: Some("default".into()),
            name: name.into(),
        }
    }

    fn queue() -> WorkQueue {
        WorkQueue::new("test", QueueMetrics::default())
    }

    /// The next key due, if one is due now.
    async fn next_now(queue: &WorkQueue) -> Option<Key> {
        tokio::time::timeout(Duration::from_millis(1), queue.next())
            .await
            .ok()
            .map(|(key, _)| key)
    }

    #[tokio::test(start_paused = true)]
    async fn keys_come_in_the_order_they_became_due_each_once() {
        let queue = queue();
        for name in ["a", "b", "a", "c", "b"] {
            queue.add(key(name));
        }
        assert_eq!(queue.len(), 3);
        for name in ["a", "b", "c"] {
            assert_eq!(next_now(&queue).await, Some(key(name)));
        }
        assert_eq!(next_now(&queue).await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_key_due_while_taken_comes_again_once_done_behind_the_others() {
        let queue = queue();
        queue.add(key("a"));
        assert_eq!(next_now(&queue).await, Some(key("a")));
        queue.add(key("a"));
        queue.add(key("a"));
        queue.add(key("b"));
        // Not handed out twice at once.
        assert_eq!(next_now(&queue).await, Some(key("b")));
        assert_eq!(next_now(&queue).await, None);
        queue.done(key("a"), Some(Duration::from_secs(60)));
        assert_eq!(next_now(&queue).await, Some(key("a")));
        queue.done(key("a"), None);
        // The requeue asked for by the reconcile that a change overtook is gone.
        tokio::time::advance(Duration::from_secs(61)).await;
        assert_eq!(next_now(&queue).await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_key_done_comes_back_after_the_delay_it_asked_for() {
        let queue = queue();
        queue.add(key("a"));
        assert_eq!(next_now(&queue).await, Some(key("a")));
        queue.done(key("a"), Some(Duration::from_secs(10)));
        tokio::time::advance(Duration::from_secs(9)).await;
        assert_eq!(next_now(&queue).await, None);
        let next = tokio::spawn(async move { queue.next().await.0 });
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(next.await.expect("the key"), key("a"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_change_overtakes_a_delay_and_the_earlier_delay_stands() {
        let queue = queue();
        queue.add_after(key("a"), Duration::from_secs(10));
        queue.add_after(key("a"), Duration::from_secs(20));
        tokio::time::advance(Duration::from_secs(10)).await;
        assert_eq!(next_now(&queue).await, Some(key("a")));
        queue.done(key("a"), None);

        queue.add_after(key("b"), Duration::from_secs(10));
        queue.add(key("b"));
        assert_eq!(next_now(&queue).await, Some(key("b")));
        queue.done(key("b"), None);
        tokio::time::advance(Duration::from_secs(11)).await;
        assert_eq!(
            next_now(&queue).await,
            None,
            "the delay outlived the change"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_worker_wakes_for_a_key_added() {
        let queue = std::sync::Arc::new(queue());
        let waiting = tokio::spawn({
            let queue = queue.clone();
            async move { queue.next().await.0 }
        });
        tokio::task::yield_now().await;
        queue.add(key("a"));
        let taken = tokio::time::timeout(Duration::from_secs(1), waiting).await;
        assert_eq!(taken.expect("woken").expect("the key"), key("a"));
    }
}
