//! Events (`events.k8s.io/v1`) about reconciled objects, as `kubectl describe` shows them.
//!
//! [`Recorder`] publishes them as client-go's `tools/record` recorder (controller-runtime's)
//! correlates them: a repeat of an Event (the same type, reason, action, note and object, within
//! [`SERIES_TTL`]) is counted in the `series` of the first one, and an Event whose note changed
//! (a failure that was a 500 and is now a 403) is a new Event, up to [`MAX_NOTES`] of them, after
//! which new notes join the last one's series (client-go aggregates similar Events after 10).
//! kube-runtime's `Recorder` leaves the note out of what makes a repeat, and an Event's note
//! cannot be changed: every repeat would show the first note.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event as KubeEvent;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::json;

pub use kube::runtime::events::{Event, EventType};

/// How long a repeat counts in the series of the first Event (client-go's and kube-runtime's
/// 6 minutes); after that it starts a new Event.
pub const SERIES_TTL: SignedDuration = SignedDuration::from_mins(6);

/// How many Events with different notes, of one type, reason and action about one object, are
/// published within [`SERIES_TTL`]; later ones count in the last one's series. A message that
/// changes with every failure (a request id, a time) would otherwise make an Event a retry.
pub const MAX_NOTES: usize = 10;

/// Publishes Events about objects as one reporting controller.
pub(crate) struct Recorder {
    client: Client,
    /// `reportingController`: the operator's field manager.
    controller: String,
    /// `reportingInstance`: the pod's name (HOSTNAME in a pod), else the controller.
    instance: String,
    /// The Events published, by what makes a repeat.
    published: Mutex<HashMap<Key, Published>>,
}

/// What makes an Event a repeat of another.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    type_: &'static str,
    reason: String,
    action: String,
    note: Option<String>,
    /// The object's uid, kind, namespace and name.
    regarding: (
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    ),
    related: Option<(Option<String>, Option<String>)>,
}

/// An Event as published: its name, and its series so far.
#[derive(Clone, Debug)]
struct Published {
    name: String,
    namespace: String,
    count: i32,
    last: Timestamp,
}

impl Recorder {
    pub(crate) fn new(client: Client, controller: String) -> Self {
        let instance = std::env::var("HOSTNAME").unwrap_or_else(|_| controller.clone());
        Self {
            client,
            controller,
            instance,
            published: Mutex::default(),
        }
    }

    /// Publishes `event` about `regarding`: a new Event, or the next of its series.
    pub(crate) async fn publish(
        &self,
        event: &Event,
        regarding: &ObjectReference,
    ) -> Result<(), kube::Error> {
        let now = Timestamp::now();
        let key = Key::of(event, regarding);
        let (key, repeat) = {
            let mut published = self.published();
            published.retain(|_, p| p.last + SERIES_TTL > now);
            match published.get(&key) {
                Some(series) => (key, Some(series.clone())),
                None => {
                    let similar = published.iter().filter(|(other, _)| other.is_like(&key));
                    let similar: Vec<_> = similar.collect();
                    let last = similar.iter().max_by_key(|(_, series)| series.last);
                    match last {
                        Some((last, series)) if similar.len() >= MAX_NOTES => {
                            ((*last).clone(), Some((*series).clone()))
                        }
                        _ => (key, None),
                    }
                }
            }
        };
        if let Some(mut series) = repeat {
            series.count += 1;
            series.last = now;
            let api: Api<KubeEvent> = Api::namespaced(self.client.clone(), &series.namespace);
            let patch =
                json!({"series": {"count": series.count, "lastObservedTime": MicroTime(now)}});
            match api
                .patch(&series.name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => {
                    self.published().insert(key, series);
                    return Ok(());
                }
                // Deleted meanwhile (Events expire): the next one starts a new series.
                Err(kube::Error::Api(status)) if status.is_not_found() => {}
                Err(error) => return Err(error),
            }
        }
        let new = self.new_event(event, regarding, now);
        let namespace = new.metadata.namespace.clone().unwrap_or_default();
        let api: Api<KubeEvent> = Api::namespaced(self.client.clone(), &namespace);
        api.create(&PostParams::default(), &new).await?;
        let published = Published {
            name: new.metadata.name.unwrap_or_default(),
            namespace,
            count: 1,
            last: now,
        };
        self.published().insert(key, published);
        Ok(())
    }

    fn new_event(&self, event: &Event, regarding: &ObjectReference, now: Timestamp) -> KubeEvent {
        // The object's namespace; a cluster-scoped object's Events go to `default`.
        let namespace = regarding
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        let name = regarding.name.as_deref().unwrap_or(&self.controller);
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
            note: event.note.clone(),
            regarding: Some(regarding.clone()),
            related: event.secondary.clone(),
            reporting_controller: Some(self.controller.clone()),
            reporting_instance: Some(self.instance.clone()),
            ..KubeEvent::default()
        }
    }

    fn published(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Published>> {
        // Only a cache: a panic while it was held leaves it usable.
        self.published
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Key {
    /// Whether `other` is the same kind of Event about the same object, whatever its note.
    fn is_like(&self, other: &Key) -> bool {
        let without_note = |key: &Key| Key {
            note: None,
            ..key.clone()
        };
        without_note(self) == without_note(other)
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

    /// Past MAX_NOTES different notes, new ones join the last Event's series.
    #[tokio::test]
    async fn notes_that_keep_changing_end_in_one_series() {
        let (client, mut server) = mock_client();
        let recorder = Recorder::new(client, "test-operator".into());
        let regarding = ObjectReference {
            name: Some("w".into()),
            namespace: Some("default".into()),
            ..ObjectReference::default()
        };
        let server = tokio::spawn(async move {
            let mut last = Value::Null;
            for _ in 0..MAX_NOTES {
                last = server.echo(Method::POST, EVENTS).await;
            }
            let name = last["metadata"]["name"]
                .as_str()
                .expect("a name")
                .to_owned();
            let folded = server
                .expect(
                    Method::PATCH,
                    &format!("{EVENTS}/{name}"),
                    200,
                    last.clone(),
                )
                .await;
            assert_eq!(folded["series"]["count"], 2);
        });
        for request in 0..=MAX_NOTES {
            let event = failure("Failed", format!("request {request} failed"));
            recorder
                .publish(&event, &regarding)
                .await
                .expect("published");
            // Distinct Event names: they are made of the time in nanoseconds.
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        server.await.expect("the API server's script");
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
