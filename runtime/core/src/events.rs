//! Events (`events.k8s.io/v1`) about reconciled objects, as `kubectl describe` shows them.
//!
//! [`Recorder`] publishes them as client-go's `tools/record` recorder (controller-runtime's)
//! correlates them (`tools/record/events_cache.go`):
//!
//! - a repeat of an Event (the same type, reason, action, note and object, within
//!   [`SERIES_TTL`]) is counted in the `series` of the first one, and an Event whose note changed
//!   (a failure that was a 500 and is now a 403) is a new Event;
//! - past [`MAX_NOTES`] different notes, Events are combined, as client-go's `EventAggregator`
//!   combines similar Events after 10: each shows its note as `(combined from similar events):
//!   <note>`, and its series counts every Event combined so far. client-go changes the message
//!   of its one combined Event; `events.k8s.io/v1` refuses a change of the note (the API
//!   server's `ValidateEventUpdate`), so a new note is a new combined Event, which carries the
//!   count on: the newest Event always shows the newest note;
//! - an object gets at most [`SPAM_BURST`] Events of a type at once, then one every
//!   [`SPAM_REFILL`] (client-go's `EventSourceObjectSpamFilter`, 25 and 5 minutes); the others
//!   are dropped, so that many failing objects do not flood the API server with Events.
//!
//!
//! What it remembers of its Events is bounded as client-go's caches are: at most
//! [`MAX_REMEMBERED`] entries each, those unused longest going first, so that a manager with
//! 10,000 objects that each got an Event (`Created`) does not keep 10,000 of each for the
//! [`SERIES_TTL`], nor look through them all at each Event.
//!
//! kube-runtime's `Recorder` leaves the note out of what makes a repeat, and an Event's note
//! cannot be changed: every repeat would show the first note.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as KubeEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::json;
use tracing::debug;

use crate::rate_limit::TokenBucket;

pub use kube::runtime::events::{Event, EventType};

/// How long a repeat counts in the series of the first Event (client-go's and kube-runtime's
/// 6 minutes); after that it starts a new Event.
pub const SERIES_TTL: SignedDuration = SignedDuration::from_mins(6);

/// How many Events with different notes, of one type, reason and action about one object, are
/// published within [`SERIES_TTL`] before they are combined. A message that changes with every
/// failure (a request id, a time) would otherwise make each failure an Event of its own.
pub const MAX_NOTES: usize = 10;

/// The prefix of a combined Event's note: client-go's.
const COMBINED: &str = "(combined from similar events): ";

/// How many entries each of the recorder's memories holds at most (the series of Events, the
/// combined Events, the spam filter's buckets): client-go's `maxLruCacheEntries`. Past it, the
/// entry used longest ago is forgotten: a repeat of its Event then starts a new Event, and its
/// object's spam filter starts full again, as in client-go.
pub const MAX_REMEMBERED: usize = 4096;

/// How many Events of one type about one object are published at once (client-go's spam
/// filter's burst).
pub const SPAM_BURST: u32 = 25;

/// Past [`SPAM_BURST`], one more Event of a type about an object every this long (client-go's
/// spam filter refills its bucket at 1/300 per second).
pub const SPAM_REFILL: Duration = Duration::from_secs(5 * 60);

/// Publishes Events about objects as one reporting controller.
pub(crate) struct Recorder {
    client: Client,
    /// `reportingController`: the operator's field manager.
    controller: String,
    /// `reportingInstance`: the pod's name (HOSTNAME in a pod), else the controller.
    instance: String,
    state: Mutex<State>,
}

/// What the recorder remembers of the Events it published, [`MAX_REMEMBERED`] entries of each
/// at most.
#[derive(Default)]
struct State {
    /// The Events published, by their key without the note (what Events alike but for their
    /// note share), then by note: a repeat, and how many notes the alike have had.
    published: HashMap<Key, HashMap<Option<String>, Published>>,
    /// The newest combined Event of Events alike but for their note (their key without the
    /// note), and the note it combined last.
    combined: HashMap<Key, (Option<String>, Published)>,
    /// The spam filter's bucket of each object and type, and when it was last used.
    spam: HashMap<SpamKey, (TokenBucket, tokio::time::Instant)>,
    /// When the entries past [`SERIES_TTL`] and the full buckets were last dropped.
    swept: Option<tokio::time::Instant>,
}

/// What makes an Event a repeat of another.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    type_: &'static str,
    reason: String,
    action: String,
    note: Option<String>,
    /// The object's uid, kind, namespace and name.
    regarding: ObjectKey,
    related: Option<(Option<String>, Option<String>)>,
}

/// An object's uid, kind, namespace and name.
type ObjectKey = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// What the spam filter counts Events by: the object and the type (client-go's `getSpamKey`,
/// whose source is this recorder's).
type SpamKey = (ObjectKey, &'static str);

/// An Event as published: its name, and its series so far.
#[derive(Clone, Debug)]
struct Published {
    name: String,
    namespace: String,
    count: i32,
    last: Timestamp,
}

/// What to do with an Event.
enum Plan {
    /// Count it in the series of `Published` (a repeat).
    Repeat(Published),
    /// Publish a new Event with this note, whose series counts `count` Events so far.
    New { note: Option<String>, count: i32 },
}

/// Where the recorder remembers a published Event.
enum Slot {
    /// An Event of its own, by its key.
    Plain(Key),
    /// The combined Event of its key without the note; the note it combined.
    Combined(Key, Option<String>),
}

impl Recorder {
    pub(crate) fn new(client: Client, controller: String) -> Self {
        let instance = std::env::var("HOSTNAME").unwrap_or_else(|_| controller.clone());
        Self {
            client,
            controller,
            instance,
            state: Mutex::default(),
        }
    }

    /// Publishes `event` about `regarding`: a new Event, or the next of its series; nothing if
    /// the object had too many Events of its type lately (the spam filter).
    pub(crate) async fn publish(
        &self,
        event: &Event,
        regarding: &ObjectReference,
    ) -> Result<(), kube::Error> {
        let now = Timestamp::now();
        let key = Key::of(event, regarding);
        let Some((slot, plan)) = self.state().plan(&key, now) else {
            debug!(
                reason = event.reason,
                "too many Events about the object: dropped"
            );
            return Ok(());
        };
        let (note, count) = match plan {
            Plan::Repeat(mut series) => {
                series.count += 1;
                series.last = now;
                match self.count_repeat(&series).await {
                    Ok(()) => {
                        self.state().record(slot, series);
                        return Ok(());
                    }
                    // Deleted meanwhile (Events expire): a new Event starts the series again.
                    Err(kube::Error::Api(status)) if status.is_not_found() => (slot.note(&key), 1),
                    Err(error) => return Err(error),
                }
            }
            Plan::New { note, count } => (note, count),
        };
        let new = self.new_event(event, note, count, regarding, now);
        let namespace = new.metadata.namespace.clone().unwrap_or_default();
        let api: Api<KubeEvent> = Api::namespaced(self.client.clone(), &namespace);
        api.create(&PostParams::default(), &new).await?;
        let published = Published {
            name: new.metadata.name.unwrap_or_default(),
            namespace,
            count,
            last: now,
        };
        self.state().record(slot, published);
        Ok(())
    }

    /// Counts one more Event in `series` (as it is after this one).
    async fn count_repeat(&self, series: &Published) -> Result<(), kube::Error> {
        let api: Api<KubeEvent> = Api::namespaced(self.client.clone(), &series.namespace);
        let patch = json!({"series": {
            "count": series.count,
            "lastObservedTime": MicroTime(series.last),
        }});
        api.patch(&series.name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map(drop)
    }

    fn new_event(
        &self,
        event: &Event,
        note: Option<String>,
        count: i32,
        regarding: &ObjectReference,
        now: Timestamp,
    ) -> KubeEvent {
        // The object's namespace; a cluster-scoped object's Events go to `default`.
        let namespace = regarding
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        let name = regarding.name.as_deref().unwrap_or(&self.controller);
        let note = note.map(|mut note| {
            shorten_note(&mut note);
            note
        });
        // A series counts 2 Events or more (the API server refuses less).
        let series = (count > 1).then_some(EventSeries {
            count,
            last_observed_time: MicroTime(now),
        });
        KubeEvent {
            metadata: ObjectMeta {
                name: Some(format!("{name}.{:x}", now.as_nanosecond())),
                namespace: Some(namespace),
                ..ObjectMeta::default()
            },
            event_time: Some(MicroTime(now)),
            type_: Some(type_name(event.type_).to_owned()),
            reason: Some(event.reason.clone()),
            action: Some(event.action.clone()),
            note,
            series,
            regarding: Some(regarding.clone()),
            related: event.secondary.clone(),
            reporting_controller: Some(self.controller.clone()),
            reporting_instance: Some(self.instance.clone()),
            ..KubeEvent::default()
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Only a cache: a panic while it was held leaves it usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    /// What to do with the Event of `key` at `now`, and where to remember it; `None` if the
    /// spam filter drops it.
    fn plan(&mut self, key: &Key, now: Timestamp) -> Option<(Slot, Plan)> {
        let instant = tokio::time::Instant::now();
        self.sweep(now, instant);
        let spam_key = (key.regarding.clone(), key.type_);
        if !self.spam.contains_key(&spam_key) {
            forget_oldest(&mut self.spam, |(_, used)| *used);
        }
        let refill = 1.0 / SPAM_REFILL.as_secs_f64();
        let (bucket, used) = self
            .spam
            .entry(spam_key)
            .or_insert_with(|| (TokenBucket::new(refill, SPAM_BURST, instant), instant));
        *used = instant;
        if !bucket.try_take(instant) {
            return None;
        }

        let similar = key.without_note();
        if let Some((note, series)) = self.combined.get(&similar) {
            let plan = if *note == key.note {
                Plan::Repeat(series.clone())
            } else {
                Plan::New {
                    note: combined_note(key.note.as_deref()),
                    count: series.count + 1,
                }
            };
            return Some((Slot::Combined(similar, key.note.clone()), plan));
        }
        let notes = self.published.get(&similar);
        if let Some(series) = notes.and_then(|notes| notes.get(&key.note)) {
            return Some((Slot::Plain(key.clone()), Plan::Repeat(series.clone())));
        }
        if notes.map_or(0, HashMap::len) >= MAX_NOTES {
            let plan = Plan::New {
                note: combined_note(key.note.as_deref()),
                count: 1,
            };
            return Some((Slot::Combined(similar, key.note.clone()), plan));
        }
        let plan = Plan::New {
            note: key.note.clone(),
            count: 1,
        };
        Some((Slot::Plain(key.clone()), plan))
    }

    /// Remembers `published` in `slot`.
    fn record(&mut self, slot: Slot, published: Published) {
        match slot {
            Slot::Plain(mut key) => {
                let note = key.note.take();
                if !self.published.contains_key(&key) {
                    forget_oldest(&mut self.published, newest_of);
                }
                self.published
                    .entry(key)
                    .or_default()
                    .insert(note, published);
            }
            Slot::Combined(similar, note) => {
                if !self.combined.contains_key(&similar) {
                    forget_oldest(&mut self.combined, |(_, series)| series.last);
                }
                self.combined.insert(similar, (note, published));
            }
        }
    }

    /// Drops the series older than [`SERIES_TTL`] and the spam filter's full buckets (a full
    /// bucket is what a new one would be), once a second at most: a look at every entry.
    fn sweep(&mut self, now: Timestamp, instant: tokio::time::Instant) {
        if self
            .swept
            .is_some_and(|swept| instant < swept + Duration::from_secs(1))
        {
            return;
        }
        self.swept = Some(instant);
        let live = |series: &Published| series.last + SERIES_TTL > now;
        self.published.retain(|_, notes| {
            notes.retain(|_, series| live(series));
            !notes.is_empty()
        });
        self.combined.retain(|_, (_, series)| live(series));
        self.spam.retain(|_, (bucket, _)| !bucket.is_full(instant));
    }
}

/// The newest of the series of Events alike but for their note.
fn newest_of(notes: &HashMap<Option<String>, Published>) -> Timestamp {
    let last = notes.values().map(|series| series.last);
    last.max().unwrap_or(Timestamp::MIN)
}

/// Makes room for one more entry in `map` if it holds [`MAX_REMEMBERED`]: forgets the entry
/// whose `used` is the oldest.
fn forget_oldest<K, V, T>(map: &mut HashMap<K, V>, used: impl Fn(&V) -> T)
where
    K: Clone + Eq + std::hash::Hash,
    T: Ord,
{
    if map.len() < MAX_REMEMBERED {
        return;
    }
    let oldest = map.iter().min_by_key(|(_, value)| used(value));
    if let Some(key) = oldest.map(|(key, _)| key.clone()) {
        map.remove(&key);
    }
}

impl Slot {
    /// The note of a new Event in this slot for an Event of `key`.
    fn note(&self, key: &Key) -> Option<String> {
        match self {
            Slot::Plain(_) => key.note.clone(),
            Slot::Combined(..) => combined_note(key.note.as_deref()),
        }
    }
}

/// The note of a combined Event whose newest note is `note`.
fn combined_note(note: Option<&str>) -> Option<String> {
    Some(format!("{COMBINED}{}", note.unwrap_or_default()))
}

impl Key {
    /// This key without its note: what Events alike but for their note share.
    fn without_note(&self) -> Key {
        Key {
            note: None,
            ..self.clone()
        }
    }

    fn of(event: &Event, regarding: &ObjectReference) -> Self {
        let related = event.secondary.as_ref();
        Self {
            type_: type_name(event.type_),
            reason: event.reason.clone(),
            action: event.action.clone(),
            note: event.note.clone(),
            regarding: (
                regarding.uid.clone(),
                regarding.kind.clone(),
                regarding.namespace.clone(),
                regarding.name.clone(),
            ),
            related: related.map(|r| (r.uid.clone(), r.name.clone())),
        }
    }
}

fn type_name(type_: EventType) -> &'static str {
    match type_ {
        EventType::Normal => "Normal",
        EventType::Warning => "Warning",
    }
}

/// The reason of a failed `apply` unless the reconciler names it.
pub const RECONCILE_FAILED: &str = "ReconcileFailed";
/// The reason of a failed `cleanup`.
pub const CLEANUP_FAILED: &str = "CleanupFailed";
/// The reason of a failure to add or remove the finalizer.
pub const FINALIZER_FAILED: &str = "FinalizerFailed";
/// The reason of a reconcile that panicked.
pub const RECONCILE_PANICKED: &str = "ReconcilePanicked";
/// The reason of a reconcile that could not wait any longer for its controller's caches.
pub const NOT_SYNCED: &str = "CacheNotSynced";

/// A Warning Event with `reason` saying why a reconcile failed.
pub(crate) fn failure(reason: &str, note: String) -> Event {
    Event {
        type_: EventType::Warning,
        reason: reason.to_owned(),
        note: Some(note),
        action: "Reconcile".into(),
        secondary: None,
    }
}

/// Cuts `note` to the 1 kB the API server accepts in an Event (API errors can be longer).
pub(crate) fn shorten_note(note: &mut String) {
    const MAX: usize = 1024;
    const ELLIPSIS: char = '…';
    if note.len() <= MAX {
        return;
    }
    let mut end = MAX - ELLIPSIS.len_utf8();
    while !note.is_char_boundary(end) {
        end -= 1;
    }
    note.truncate(end);
    note.push(ELLIPSIS);
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::testing::{Method, mock_client};

    const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/default/events";

    /// Past MAX_NOTES different notes, the newest note is still what `kubectl events` shows:
    /// client-go's aggregator writes it as "(combined from similar events): <note>".
    #[tokio::test]
    async fn combined_events_show_the_newest_note() {
        let (client, mut server) = mock_client();
        let recorder = Recorder::new(client, "test-operator".into());
        let regarding = ObjectReference {
            name: Some("w".into()),
            namespace: Some("default".into()),
            ..ObjectReference::default()
        };
        let server = tokio::spawn(async move {
            for _ in 0..MAX_NOTES {
                server.echo(Method::POST, EVENTS).await;
            }
            // What the two notes past MAX_NOTES became: the method, note and series count.
            let mut seen = Vec::new();
            for _ in 0..2 {
                let (method, body) = server.answer(|_, _, body| (200, body.clone())).await;
                seen.push((
                    method,
                    body["note"].clone(),
                    body["series"]["count"].clone(),
                ));
            }
            seen
        });
        for request in 0..MAX_NOTES + 2 {
            let event = failure("Failed", format!("request {request} failed"));
            recorder
                .publish(&event, &regarding)
                .await
                .expect("published");
            // Distinct Event names: they are made of the time in nanoseconds.
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        let seen = server.await.expect("the API server's script");
        let combined = |n: usize| format!("(combined from similar events): request {n} failed");
        assert_eq!(
            seen,
            [
                (Method::POST, Value::from(combined(MAX_NOTES)), Value::Null),
                (
                    Method::POST,
                    Value::from(combined(MAX_NOTES + 1)),
                    Value::from(2)
                ),
            ]
        );
    }

    /// A repeat of the newest combined note counts in its Event's series.
    #[tokio::test]
    async fn a_repeat_of_the_newest_combined_note_joins_its_series() {
        let (client, mut server) = mock_client();
        let recorder = Recorder::new(client, "test-operator".into());
        let regarding = ObjectReference {
            name: Some("w".into()),
            namespace: Some("default".into()),
            ..ObjectReference::default()
        };
        let server = tokio::spawn(async move {
            let mut last = Value::Null;
            for _ in 0..=MAX_NOTES {
                last = server.echo(Method::POST, EVENTS).await;
            }
            let name = last["metadata"]["name"]
                .as_str()
                .expect("a name")
                .to_owned();
            let path = format!("{EVENTS}/{name}");
            let repeat = server.expect(Method::PATCH, &path, 200, last.clone()).await;
            assert_eq!(repeat["series"]["count"], 2);
        });
        for request in (0..=MAX_NOTES).chain([MAX_NOTES]) {
            let event = failure("Failed", format!("request {request} failed"));
            recorder
                .publish(&event, &regarding)
                .await
                .expect("published");
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        server.await.expect("the API server's script");
    }

    /// An object gets SPAM_BURST Events of a type at once; the next one is dropped, as
    /// client-go's spam filter drops it, until its bucket refills.
    #[tokio::test]
    async fn an_objects_events_past_the_burst_are_dropped() {
        let (client, mut server) = mock_client();
        let recorder = Recorder::new(client, "test-operator".into());
        let regarding = ObjectReference {
            name: Some("w".into()),
            namespace: Some("default".into()),
            uid: Some("u-1".into()),
            ..ObjectReference::default()
        };
        let server = tokio::spawn(async move {
            let mut requests = 0;
            let answer = |_: &Method, _: &str, body: &Value| (200, body.clone());
            while server
                .try_answer(std::time::Duration::from_millis(500), answer)
                .await
                .is_some()
            {
                requests += 1;
            }
            requests
        });
        // The same failure over and over: one Event, then repeats counted in its series.
        let event = failure("Failed", "the backend answered 500".into());
        for _ in 0..=SPAM_BURST {
            recorder
                .publish(&event, &regarding)
                .await
                .expect("published");
        }
        // Another object has a bucket of its own.
        let other = ObjectReference {
            name: Some("v".into()),
            uid: Some("u-2".into()),
            ..regarding.clone()
        };
        recorder.publish(&event, &other).await.expect("published");
        let requests = server.await.expect("the API server's script");
        assert_eq!(requests, SPAM_BURST + 1);
    }

    #[tokio::test(start_paused = true)]
    async fn the_spam_filter_refills_one_event_every_five_minutes() {
        let mut state = State::default();
        let regarding = ObjectReference {
            name: Some("w".into()),
            ..ObjectReference::default()
        };
        let key = Key::of(&failure("Failed", "x".into()), &regarding);
        let now = Timestamp::now();
        for _ in 0..SPAM_BURST {
            assert!(state.plan(&key, now).is_some());
        }
        assert!(state.plan(&key, now).is_none());
        tokio::time::advance(SPAM_REFILL).await;
        assert!(state.plan(&key, now).is_some());
        assert!(state.plan(&key, now).is_none());
        // A Warning flood leaves room for a Normal Event.
        let mut normal = failure("Done", "y".into());
        normal.type_ = EventType::Normal;
        assert!(state.plan(&Key::of(&normal, &regarding), now).is_some());
    }

    /// A repeat is counted in the first Event's series; a changed note is a new Event.
    #[tokio::test]
    async fn repeats_join_a_series_and_new_notes_start_one() {
        let (client, mut server) = mock_client();
        let recorder = Recorder::new(client, "test-operator".into());
        let regarding = ObjectReference {
            kind: Some("Widget".into()),
            name: Some("w".into()),
            namespace: Some("default".into()),
            uid: Some("u-1".into()),
            ..ObjectReference::default()
        };
        let server = tokio::spawn(async move {
            let first = server.echo(Method::POST, EVENTS).await;
            assert_eq!(first["note"], "the backend answered 500");
            let name = first["metadata"]["name"]
                .as_str()
                .expect("a name")
                .to_owned();
            let repeat = server
                .expect(
                    Method::PATCH,
                    &format!("{EVENTS}/{name}"),
                    200,
                    first.clone(),
                )
                .await;
            assert_eq!(repeat["series"]["count"], 2);
            let changed = server.echo(Method::POST, EVENTS).await;
            assert_eq!(changed["note"], "the backend answered 403");
        });
        for note in ["500", "500", "403"] {
            let event = failure("Failed", format!("the backend answered {note}"));
            recorder
                .publish(&event, &regarding)
                .await
                .expect("published");
        }
        server.await.expect("the API server's script");
    }

    /// Events about more objects than the recorder remembers (a `Created` Event for each of
    /// 10,000 new objects) leave at most MAX_REMEMBERED entries in each of its memories, those
    /// used longest ago forgotten: the newest is still a repeat, the first a new Event again.
    #[test]
    fn what_the_recorder_remembers_is_bounded() {
        let mut state = State::default();
        let start = Timestamp::now();
        let key = |i: usize| Key {
            type_: "Normal",
            reason: "Created".into(),
            action: "Create".into(),
            note: Some(format!("Created Deployment w{i}")),
            regarding: (
                Some(format!("uid-{i}")),
                Some("Widget".into()),
                Some("default".into()),
                Some(format!("w{i}")),
            ),
            related: None,
        };
        let objects = MAX_REMEMBERED + 10;
        for i in 0..objects {
            let now = start + SignedDuration::from_millis(i64::try_from(i).expect("small"));
            let (slot, plan) = state.plan(&key(i), now).expect("not dropped as spam");
            assert!(matches!(plan, Plan::New { count: 1, .. }), "a first Event");
            let published = Published {
                name: format!("w{i}.1"),
                namespace: "default".into(),
                count: 1,
                last: now,
            };
            state.record(slot, published);
        }
        assert_eq!(state.published.len(), MAX_REMEMBERED);
        assert_eq!(state.spam.len(), MAX_REMEMBERED);

        let plan = |state: &mut State, i| state.plan(&key(i), start).map(|(_, plan)| plan);
        assert!(matches!(
            plan(&mut state, objects - 1),
            Some(Plan::Repeat(_))
        ));
        assert!(matches!(
            plan(&mut state, 0),
            Some(Plan::New { count: 1, .. })
        ));
    }

    #[test]
    fn long_notes_are_cut_on_a_character_boundary() {
        let mut note = "é".repeat(600); // 1200 bytes
        shorten_note(&mut note);
        assert!(note.len() <= 1024, "{}", note.len());
        assert!(note.ends_with('…'));

        let mut short = "fine".to_owned();
        shorten_note(&mut short);
        assert_eq!(short, "fine");
    }
}

/// Against a real kube-apiserver and etcd (envtest).
#[cfg(test)]
mod envtests {
    use super::*;
    use crate::envtest::{ControlPlane, NAMESPACE};

    /// On kube-apiserver, which refuses a changed note and a series of fewer than 2: past
    /// MAX_NOTES notes, the newest Event shows the newest note, with the count of the Events
    /// combined.
    #[tokio::test]
    #[ignore = "needs kube-apiserver and etcd (KUBEBUILDER_ASSETS): make test"]
    async fn the_newest_event_shows_the_newest_note() {
        let plane = ControlPlane::start().await.expect("a control plane");
        let client = plane.client().await.expect("a client");
        let recorder = Recorder::new(client.clone(), "test-operator".into());
        let regarding = ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("ConfigMap".into()),
            name: Some("w".into()),
            namespace: Some(NAMESPACE.into()),
            uid: Some("u-1".into()),
            ..ObjectReference::default()
        };
        let notes = (0..MAX_NOTES + 2)
            .map(|n| format!("request {n} failed"))
            .chain([format!("request {} failed", MAX_NOTES + 1)]);
        for note in notes {
            let event = failure("Failed", note);
            recorder
                .publish(&event, &regarding)
                .await
                .expect("published");
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        let events: Api<KubeEvent> = Api::namespaced(client, NAMESPACE);
        // Only the Events about `w`: kube-apiserver writes Events of its own in `default` now
        // and then ("Cluster IP ... is not allocated; repairing").
        let mut events: Vec<KubeEvent> = events
            .list(&Default::default())
            .await
            .expect("a list")
            .items
            .into_iter()
            .filter(|event| event.regarding.as_ref().and_then(|r| r.uid.as_deref()) == Some("u-1"))
            .collect();
        events.sort_by_key(|event| event.event_time.as_ref().map(|time| time.0));
        assert_eq!(events.len(), MAX_NOTES + 2);
        let newest = events.last().expect("an Event");
        let combined = format!("{COMBINED}request {} failed", MAX_NOTES + 1);
        assert_eq!(newest.note.as_deref(), Some(combined.as_str()));
        // The two notes past MAX_NOTES, and the newest once more.
        assert_eq!(newest.series.as_ref().map(|series| series.count), Some(3));
    }
}
