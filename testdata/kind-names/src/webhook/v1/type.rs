// Copyright 2026 The kind-names Authors.
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

//! The webhooks of Type v1:
//! - validation checks what the CRD's schema cannot.
//!
//! The API server calls them before it stores an object; `make manifests` writes their
//! configuration.

use rbuilder_runtime::webhook::{self, Denied, Validator, Warnings, Webhook};

use crate::api::v1::Type;

/// The webhooks of Type v1, listed in `src/webhook/mod.rs`.
pub struct TypeWebhook;

pub const VALIDATING: Webhook = webhook::validating::<TypeWebhook>();

/// Deletions are not sent here: to refuse some, add `const VALIDATE_DELETE: bool = true;` and
/// a `validate_delete`, then run `make manifests`.
impl Validator for TypeWebhook {
    type Resource = Type;

    /// Checks a new object; an error refuses it with its message, warnings are shown to the
    /// client. Here: every object is valid (the CRD's schema checks the fields).
    fn validate_create(_obj: &Type) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }

    /// Checks a change, e.g. refuses one to a field that must not change once set.
    fn validate_update(_old: &Type, _new: &Type) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }
}

#[cfg(test)]
mod tests {
    use rbuilder_testing::testing::admission_review;
    use serde_json::json;

    use super::*;

    /// A Type as a user would apply it.
    fn sample() -> Type {
        // From JSON, as the API server sends it, so that a field you add to the spec does not
        // break this test (give it a value here if it is required).
        let obj = json!({
            "apiVersion": "devops.my.domain/v1",
            "kind": "Type",
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
