//! Events (`events.k8s.io/v1`) about reconciled objects, as `kubectl describe` shows them.
//!
//! kube-runtime's `Recorder` counts repeats of an Event as one series, keyed by type, reason,
//! action, reporter and object, but not by note, and an Event's note cannot change: every
//! repeat shows the first occurrence's note. So each kind of failure has a reason of its own
//! (see [`crate::Reconciler::failure_reason`]), and its series carries its own message.

pub use kube::runtime::events::{Event, EventType};

/// The reason of a failed `apply` unless the reconciler names it.
pub const RECONCILE_FAILED: &str = "ReconcileFailed";
/// The reason of a failed `cleanup`.
pub const CLEANUP_FAILED: &str = "CleanupFailed";
/// The reason of a failure to add or remove the finalizer.
pub const FINALIZER_FAILED: &str = "FinalizerFailed";
/// The reason of a reconcile that panicked.
pub const RECONCILE_PANICKED: &str = "ReconcilePanicked";

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
    use super::*;

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
