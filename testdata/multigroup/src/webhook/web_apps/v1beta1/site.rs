// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The webhooks of Site v1beta1:
//! - validation checks what the CRD's schema cannot.
//!
//! The API server calls them before it stores an object; `make manifests` writes their
//! configuration.

use rbuilder_runtime::webhook::{self, Denied, Validator, Warnings, Webhook};

use crate::api::web_apps::v1beta1::Site;

/// The webhooks of Site v1beta1, listed in `src/webhook/mod.rs`.
pub struct SiteWebhook;

pub const VALIDATING: Webhook = webhook::validating::<SiteWebhook>();

/// Deletions are not sent here: to refuse some, add `const VALIDATE_DELETE: bool = true;` and
/// a `validate_delete`, then run `make manifests`.
impl Validator for SiteWebhook {
    type Resource = Site;

    /// Checks a new object; an error refuses it with its message, warnings are shown to the
    /// client. Here: every object is valid (the CRD's schema checks the fields).
    fn validate_create(_obj: &Site) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }

    /// Checks a change, e.g. refuses one to a field that must not change once set.
    fn validate_update(_old: &Site, _new: &Site) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }
}

#[cfg(test)]
mod tests {
    use rbuilder_testing::testing::admission_review;
    use serde_json::json;

    use super::*;

    /// A Site as a user would apply it.
    fn sample() -> Site {
        // From JSON, as the API server sends it, so that a field you add to the spec does not
        // break this test (give it a value here if it is required).
        let obj = json!({
            "apiVersion": "web-apps.example.com/v1beta1",
            "kind": "Site",
            "metadata": {"name": "sample", "namespace": "default"},
            "spec": {},
        });
        serde_json::from_value(obj).expect("a valid object")
    }

    #[test]
    fn a_new_object_is_accepted() {
        let obj = sample();
        let answer = VALIDATING.answer(&admission_review("CREATE", Some(&obj), None));
        assert_eq!(answer["response"]["allowed"], true, "{answer}");
    }
}
