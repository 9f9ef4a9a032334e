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
    use rbuilder_runtime::testing::admission_review;

    use super::*;
    use crate::api::web_apps::v1beta1::SiteSpec;

    /// A Site as a user would apply it.
    fn sample() -> Site {
        let spec = SiteSpec { foo: None };
        let mut obj = Site::new("sample", spec);
        obj.metadata.namespace = Some("default".into());
        obj
    }

    #[test]
    fn a_new_object_is_accepted() {
        let obj = sample();
        let answer = VALIDATING.answer(&admission_review("CREATE", Some(&obj), None));
        assert_eq!(answer["response"]["allowed"], true, "{answer}");
    }
}
