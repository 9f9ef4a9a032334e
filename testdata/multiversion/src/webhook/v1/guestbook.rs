// Copyright 2026 The multiversion Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The webhooks of Guestbook v1:
//! - defaulting sets what a new or changed object leaves unset.
//! - validation checks what the CRD's schema cannot.
//!
//! The API server calls them before it stores an object; `make manifests` writes their
//! configuration.

use rbuilder_runtime::webhook::{self, Defaulter, Denied, Validator, Warnings, Webhook};

use crate::api::v1::Guestbook;

/// The webhooks of Guestbook v1, listed in `src/webhook/mod.rs`.
pub struct GuestbookWebhook;

/// Served at the path given to `create webhook --defaulting-path`.
pub const DEFAULTING: Webhook = webhook::defaulting_at::<GuestbookWebhook>("/default-guestbook");
/// Served at the path given to `create webhook --validation-path`.
pub const VALIDATING: Webhook = webhook::validating_at::<GuestbookWebhook>("/guestbooks/validate");

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

/// Deletions are not sent here: to refuse some, add `const VALIDATE_DELETE: bool = true;` and
/// a `validate_delete`, then run `make manifests`.
impl Validator for GuestbookWebhook {
    type Resource = Guestbook;

    /// Checks a new object; an error refuses it with its message, warnings are shown to the
    /// client. Here: every object is valid (the CRD's schema checks the fields).
    fn validate_create(_obj: &Guestbook) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }

    /// Checks a change, e.g. refuses one to a field that must not change once set.
    fn validate_update(_old: &Guestbook, _new: &Guestbook) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
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

    #[test]
    fn a_new_object_is_accepted() {
        let obj = sample();
        let answer = VALIDATING.answer(&admission_review("CREATE", Some(&obj), None));
        assert_eq!(answer["response"]["allowed"], true, "{answer}");
    }
}
