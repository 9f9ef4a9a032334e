//! A controller's own writes coming back through its watches ("echoes"), told apart so that
//! they do not reconcile it again.
//!
//! A reconcile that adds its finalizer, applies an owned object or writes the status knows
//! what it wrote: the API server answers with the object as written. kube-runtime's
//! `Controller`, like controller-runtime, reconciles again when the watch brings that very
//! version back, and that reconcile finds nothing to do. At 10,000 DemoMicroServices, half of
//! each object's eight reconciles were such echoes (bench/README.md): work for nothing.
//! So the runtime notes each write it makes for a controller (the object's uid and the
//! resourceVersion the API server gave the write) in the [`Echoes`] of the watch that will
//! bring it back, and the controller does not take that event as a cue to reconcile; its
//! cache takes it as ever.
//!
//! Only a change the watch follows (kube's `watcher::Event::Apply`) can be an echo: such
//! events bring every version of an object, in order, so a change someone else made between
//! the reconcile's read and its write is an event of its own, which triggers. A list (the
//! first, or a new one after the watch could not resume) brings only each object's latest
//! version, which may hide another's change: a listed object is never an echo, and its notes
//! go. The watch often brings a write back before the reconcile has its answer (the event and
//! the answer travel apart): so an object's event that comes while a write of it is under way
//! waits for that write's answer (at most [`WRITE_WAIT`], in a stream that lets other objects'
//! events pass) before it is told apart. Every doubt costs a reconcile too many, never one too
//! few.
//!
//! Controller-runtime has no such rule: a reconciler that reads its own status to decide what
//! to do next (which Kubernetes' API conventions advise against: status is observed, not
//! remembered) asks for its next turn with `Action::requeue`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures::{Stream, StreamExt, future};
use kube::Resource;
use kube::api::ObjectMeta;
use kube::runtime::watcher;
use tokio::sync::watch;

/// The writes whose events a watch has yet to bring (or has brought), by object uid, and the
/// writes under way, by object name. One per watch: the writes note, the watch marks, its
/// controllers' trigger streams consume.
#[derive(Default)]
pub(crate) struct Echoes {
    notes: Mutex<HashMap<String, Vec<Write>>>,
    /// How many writes of each object are under way: its namespace and name (a new object's
    /// uid is known only from the answer).
    writing: Mutex<HashMap<Name, watch::Sender<usize>>>,
}

type Name = (Option<String>, String);

/// The longest an object's event waits for the answers to the writes of it under way: an
/// answer slower than this (the API server's own limit is a minute) lets it pass as a change.
pub(crate) const WRITE_WAIT: Duration = Duration::from_secs(5);

/// How many events a trigger stream holds at once while writes of their objects are under way.
const HELD_AT_ONCE: usize = 256;

/// One version of an object: one this controller wrote, or one the watch brought while a
/// write of the object was under way (which may be that write's, answered later).
struct Write {
    resource_version: String,
    /// Whether a write's answer gave this version.
    written: bool,
    /// Whether the watch has brought this version as a change it followed.
    followed: bool,
}

/// The most writes kept per object whose events have not come: an object written more times
/// than this within one round trip of its watch is reconciled for the oldest ones. A bound on
/// what writes whose events never come leave (a write answered after a list brought it).
const MAX_PER_OBJECT: usize = 8;

/// Adds `write` to an object's `noted` versions, dropping the oldest past [`MAX_PER_OBJECT`].
fn push(noted: &mut Vec<Write>, write: Write) {
    if noted.len() == MAX_PER_OBJECT {
        noted.remove(0);
    }
    noted.push(write);
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain data: a panic while it was held leaves it usable.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A write under way of one object, from before its request until its answer is noted.
pub(crate) struct Writing {
    echoes: Arc<Echoes>,
    name: Name,
}

impl Drop for Writing {
    fn drop(&mut self) {
        let mut writing = lock(&self.echoes.writing);
        if let Some(count) = writing.get(&self.name) {
            count.send_modify(|count| *count = count.saturating_sub(1));
            if *count.borrow() == 0 && count.receiver_count() == 0 {
                writing.remove(&self.name);
            }
        }
    }
}

impl Echoes {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Vec<Write>>> {
        lock(&self.notes)
    }

    /// A write of the object `name` in `namespace` begins: its events wait for its answer
    /// until the returned guard is dropped, after [`wrote`](Self::wrote).
    pub(crate) fn writing(self: &Arc<Self>, namespace: Option<&str>, name: &str) -> Writing {
        let name = (namespace.map(str::to_owned), name.to_owned());
        lock(&self.writing)
            .entry(name.clone())
            .or_insert_with(|| watch::Sender::new(0))
            .send_modify(|count| *count += 1);
        Writing {
            echoes: Arc::clone(self),
            name,
        }
    }

    /// [`is_echo`](Self::is_echo), once the writes of `meta`'s object under way have been
    /// answered (at most [`WRITE_WAIT`]).
    async fn is_echo_when_written(&self, meta: &ObjectMeta) -> bool {
        let Some(name) = meta.name.clone() else {
            return false;
        };
        let name = (meta.namespace.clone(), name);
        let waiting = lock(&self.writing).get(&name).map(watch::Sender::subscribe);
        if let Some(mut count) = waiting {
            let _ = tokio::time::timeout(WRITE_WAIT, count.wait_for(|count| *count == 0)).await;
            drop(count);
            let mut writing = lock(&self.writing);
            let idle = writing
                .get(&name)
                .is_some_and(|count| *count.borrow() == 0 && count.receiver_count() == 0);
            if idle {
                writing.remove(&name);
            }
        }
        self.is_echo(meta)
    }

    /// `changes`, a controller's trigger stream of a watch's objects, without the echoes of
    /// the writes noted here. An object a write of which is under way is held until that
    /// write's answer; the others pass at once.
    pub(crate) fn without<K, E>(
        self: Arc<Self>,
        changes: impl Stream<Item = Result<K, E>> + Send + 'static,
    ) -> impl Stream<Item = Result<K, E>> + Send + 'static
    where
        K: Resource + Send + Sync + 'static,
        E: Send + 'static,
    {
        changes
            .map(move |change| {
                let echoes = Arc::clone(&self);
                async move {
                    match change {
                        Ok(obj) if echoes.is_echo_when_written(obj.meta()).await => None,
                        change => Some(change),
                    }
                }
            })
            .buffer_unordered(HELD_AT_ONCE)
            .filter_map(future::ready)
    }

    /// Notes a write answered with `written`, of an object read at `read` (its
    /// resourceVersion then, `None` for a new object). A write that changed nothing (the API
    /// server gives it the version read) brings no event: not noted.
    pub(crate) fn wrote(&self, read: Option<&str>, written: &ObjectMeta) {
        let (Some(uid), Some(version)) = (&written.uid, &written.resource_version) else {
            return;
        };
        if read == Some(version.as_str()) {
            return;
        }
        let mut writes = self.lock();
        let noted = writes.entry(uid.clone()).or_default();
        match noted.iter_mut().find(|w| w.resource_version == *version) {
            // The watch brought it before the answer came.
            Some(seen) => seen.written = true,
            None => push(
                noted,
                Write {
                    resource_version: version.clone(),
                    written: true,
                    followed: false,
                },
            ),
        }
    }

    /// Takes `event`, as the watch brings it, before its cache and its controllers do: a change
    /// it followed marks the write it is, or is kept if a write of its object is under way
    /// (its answer may come later); a listed or deleted object's notes go.
    pub(crate) fn watched<K: Resource>(&self, event: &watcher::Event<K>) {
        match event {
            watcher::Event::Apply(obj) => {
                let meta = obj.meta();
                let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) else {
                    return;
                };
                let mut writes = self.lock();
                if let Some(noted) = writes.get_mut(uid)
                    && let Some(write) = noted.iter_mut().find(|w| w.resource_version == *version)
                {
                    write.followed = true;
                    return;
                }
                if self.is_being_written(meta) {
                    let noted = writes.entry(uid.clone()).or_default();
                    let seen = Write {
                        resource_version: version.clone(),
                        written: false,
                        followed: true,
                    };
                    push(noted, seen);
                }
            }
            watcher::Event::InitApply(obj) | watcher::Event::Delete(obj) => {
                if let Some(uid) = &obj.meta().uid {
                    self.lock().remove(uid);
                }
            }
            watcher::Event::Init | watcher::Event::InitDone => {}
        }
    }

    /// Whether `meta`, an object a controller's trigger stream is at, is the echo of a write
    /// noted here: then its note goes. A note of that very version that the watch did not
    /// bring as a change it followed goes too: no later event has that version.
    fn is_echo(&self, meta: &ObjectMeta) -> bool {
        let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) else {
            return false;
        };
        let mut writes = self.lock();
        let Some(noted) = writes.get_mut(uid) else {
            return false;
        };
        let Some(at) = noted.iter().position(|w| w.resource_version == *version) else {
            return false;
        };
        let write = noted.remove(at);
        if noted.is_empty() {
            writes.remove(uid);
        }
        write.written && write.followed
    }

    /// Whether a write of `meta`'s object is under way.
    fn is_being_written(&self, meta: &ObjectMeta) -> bool {
        let Some(name) = &meta.name else {
            return false;
        };
        let writing = lock(&self.writing);
        let count = writing.get(&(meta.namespace.clone(), name.clone()));
        count.is_some_and(|count| *count.borrow() > 0)
    }

    /// How many objects have notes (for the tests: what is left behind).
    #[cfg(test)]
    pub(crate) fn objects(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod envtests;

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    fn config_map(uid: &str, version: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some("settings".into()),
                uid: Some(uid.into()),
                resource_version: Some(version.into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn a_write_the_watch_follows_is_an_echo_once() {
        let echoes = Echoes::default();
        let written = config_map("u-1", "12");
        echoes.wrote(Some("11"), &written.metadata);
        echoes.watched(&watcher::Event::Apply(written.clone()));
        assert!(echoes.is_echo(&written.metadata));
        // The same event seen again (another controller's trigger stream) is not.
        assert!(!echoes.is_echo(&written.metadata));
        assert_eq!(echoes.objects(), 0);
    }

    #[test]
    fn another_version_of_the_object_is_not_an_echo() {
        let echoes = Echoes::default();
        echoes.wrote(Some("11"), &config_map("u-1", "12").metadata);
        // Someone else's change after the write, and one of another object.
        for other in [config_map("u-1", "13"), config_map("u-2", "12")] {
            echoes.watched(&watcher::Event::Apply(other.clone()));
            assert!(!echoes.is_echo(&other.metadata));
        }
        // The write's own event still is.
        let written = config_map("u-1", "12");
        echoes.watched(&watcher::Event::Apply(written.clone()));
        assert!(echoes.is_echo(&written.metadata));
    }

    #[test]
    fn a_listed_object_is_never_an_echo() {
        let echoes = Echoes::default();
        let written = config_map("u-1", "12");
        echoes.wrote(Some("11"), &written.metadata);
        // A list may skip someone else's change before the write: the list's object triggers.
        echoes.watched(&watcher::Event::InitApply(written.clone()));
        assert!(!echoes.is_echo(&written.metadata));
        assert_eq!(echoes.objects(), 0);
    }

    #[test]
    fn a_write_answered_after_its_event_is_an_echo() {
        let echoes = Arc::new(Echoes::default());
        let written = config_map("u-1", "12");
        let writing = echoes.writing(None, "settings");
        echoes.watched(&watcher::Event::Apply(written.clone()));
        echoes.wrote(Some("11"), &written.metadata);
        drop(writing);
        assert!(echoes.is_echo(&written.metadata));
        assert_eq!(echoes.objects(), 0);
    }

    #[test]
    fn a_change_seen_during_a_write_that_is_not_its_answer_is_not_an_echo() {
        let echoes = Arc::new(Echoes::default());
        let writing = echoes.writing(None, "settings");
        // Someone else's change, then the write's own.
        let other = config_map("u-1", "12");
        echoes.watched(&watcher::Event::Apply(other.clone()));
        let written = config_map("u-1", "13");
        echoes.watched(&watcher::Event::Apply(written.clone()));
        echoes.wrote(Some("11"), &written.metadata);
        drop(writing);
        assert!(!echoes.is_echo(&other.metadata));
        assert!(echoes.is_echo(&written.metadata));
        assert_eq!(echoes.objects(), 0);
    }

    #[test]
    fn a_change_seen_with_no_write_under_way_leaves_no_note() {
        let echoes = Echoes::default();
        echoes.watched(&watcher::Event::Apply(config_map("u-1", "12")));
        assert_eq!(echoes.objects(), 0);
    }

    /// An event that comes while its object's write is under way waits for the answer, in a
    /// stream where other objects' events pass at once.
    #[tokio::test]
    async fn the_trigger_stream_holds_an_event_until_its_write_is_answered() {
        let echoes = Arc::new(Echoes::default());
        let (sender, receiver) = futures::channel::mpsc::unbounded::<Result<ConfigMap, ()>>();
        let mut triggers = Arc::clone(&echoes).without(receiver);
        let writing = echoes.writing(None, "settings");
        let written = config_map("u-1", "12");
        echoes.watched(&watcher::Event::Apply(written.clone()));
        sender.unbounded_send(Ok(written.clone())).expect("sent");
        let mut other = config_map("u-2", "13");
        other.metadata.name = Some("other".into());
        sender.unbounded_send(Ok(other)).expect("sent");
        let passed = triggers
            .next()
            .await
            .expect("a trigger")
            .expect("an object");
        assert_eq!(passed.metadata.name.as_deref(), Some("other"));
        echoes.wrote(Some("11"), &written.metadata);
        drop(writing);
        drop(sender);
        assert!(triggers.next().await.is_none(), "the echo was passed on");
    }

    #[test]
    fn a_write_that_changed_nothing_is_not_noted() {
        let echoes = Echoes::default();
        echoes.wrote(Some("12"), &config_map("u-1", "12").metadata);
        assert_eq!(echoes.objects(), 0);
    }

    #[test]
    fn a_deleted_object_leaves_no_note() {
        let echoes = Echoes::default();
        echoes.wrote(None, &config_map("u-1", "12").metadata);
        echoes.watched(&watcher::Event::Delete(config_map("u-1", "14")));
        assert_eq!(echoes.objects(), 0);
    }

    #[test]
    fn the_notes_of_one_object_are_bounded() {
        let echoes = Echoes::default();
        for version in 0..(MAX_PER_OBJECT + 5) {
            echoes.wrote(None, &config_map("u-1", &version.to_string()).metadata);
        }
        let oldest = config_map("u-1", "0");
        echoes.watched(&watcher::Event::Apply(oldest.clone()));
        assert!(!echoes.is_echo(&oldest.metadata), "the oldest notes went");
        let newest = config_map("u-1", &(MAX_PER_OBJECT + 4).to_string());
        echoes.watched(&watcher::Event::Apply(newest.clone()));
        assert!(echoes.is_echo(&newest.metadata));
    }
}
