//! The webhooks of Guestbook v1:
//! - defaulting sets what a new or changed object leaves unset.
//!
//! The API server calls them before it stores an object; `make manifests` writes their
//! configuration.

use rbuilder_runtime::webhook::{self, Defaulter, Denied, Webhook};

use crate::api::v1::Guestbook;

/// The webhooks of Guestbook v1, listed in `src/webhook/mod.rs`.
pub struct GuestbookWebhook;

pub const DEFAULTING: Webhook = webhook::defaulting::<GuestbookWebhook>();

/// The `app.kubernetes.io/name` label the defaulter sets.
const NAME: &str = "guestbook";

impl Defaulter for GuestbookWebhook {
    type Resource = Guestbook;

    /// Sets what `obj` leaves unset; an error refuses it. Here: the `app.kubernetes.io/name`
    /// label, so that `kubectl get -l app.kubernetes.io/name=guestbook` lists
    /// every object of the kind.
    fn default(obj: &mut Guestbook) -> Result<(), Denied> {
        let labels = obj.metadata.labels.get_or_insert_with(Default::default);
        labels
            .entry("app.kubernetes.io/name".into())
            .or_insert_with(|| NAME.into());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rbuilder_testing::testing::{admission_review, patched};
    use serde_json::json;

    use super::*;

    /// A Guestbook as a user would apply it.
    fn sample() -> Guestbook {
        // From JSON, as the API server sends it, so that a field you add to the spec does not
        // break this test (give it a value here if it is required).
        let obj = json!({
            "apiVersion": "devops.my.domain/v1",
            "kind": "Guestbook",
            "metadata": {"name": "sample", "namespace": "default"},
            "spec": {},
        });
        serde_json::from_value(obj).expect("a valid object")
    }

    #[test]
    fn the_name_label_is_defaulted() {
        let obj = sample();
        let answer = DEFAULTING.answer(&admission_review("CREATE", Some(&obj), None));
        let defaulted = patched(&obj, &answer);
        let labels = defaulted.metadata.labels.unwrap_or_default();
        assert_eq!(labels["app.kubernetes.io/name"], NAME);
    }
}
