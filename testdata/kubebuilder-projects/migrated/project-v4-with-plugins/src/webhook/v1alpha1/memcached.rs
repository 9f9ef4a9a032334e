// Copyright 2026 The Kubernetes authors.
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

//! The webhooks of Memcached v1alpha1:
//! - validation checks what the CRD's schema cannot.
//!
//! The API server calls them before it stores an object; `make manifests` writes their
//! configuration.

use rbuilder_runtime::webhook::{self, Denied, Validator, Warnings, Webhook};

use crate::api::v1alpha1::Memcached;

/// The webhooks of Memcached v1alpha1, listed in `src/webhook/mod.rs`.
pub struct MemcachedWebhook;

pub const VALIDATING: Webhook = webhook::validating::<MemcachedWebhook>();

/// Deletions are not sent here: to refuse some, add `const VALIDATE_DELETE: bool = true;` and
/// a `validate_delete`, then run `make manifests`.
impl Validator for MemcachedWebhook {
    type Resource = Memcached;

    /// Checks a new object; an error refuses it with its message, warnings are shown to the
    /// client. Here: every object is valid (the CRD's schema checks the fields).
    fn validate_create(_obj: &Memcached) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }

    /// Checks a change, e.g. refuses one to a field that must not change once set.
    fn validate_update(_old: &Memcached, _new: &Memcached) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }
}

#[cfg(test)]
mod tests {
    use rbuilder_testing::envtest::from_yaml;
    use rbuilder_testing::testing::admission_review;

    use super::*;

    /// The sample of `config/samples`, which the kind's API comes with.
    const SAMPLE: &str =
        include_str!("../../../config/samples/example.com_v1alpha1_memcached.yaml");

    /// A Memcached as a user would apply it.
    fn sample() -> Memcached {
        let mut obj: Memcached = from_yaml(SAMPLE);
        // Without the labels the sample sets, which the defaulter would leave as they are.
        obj.metadata.labels = None;
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
