// Copyright 2026.
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

//! The webhooks of Inventory v1:
//! - defaulting sets what a new or changed object leaves unset.
//! - validation checks what the CRD's schema cannot.
//!
//! The API server calls them before it stores an object; `make manifests` writes their
//! configuration.

use rbuilder_runtime::webhook::{self, Defaulter, Denied, Validator, Warnings, Webhook};

use crate::api::v1::Inventory;

/// The webhooks of Inventory v1, listed in `src/webhook/mod.rs`.
pub struct InventoryWebhook;

pub const DEFAULTING: Webhook = webhook::defaulting::<InventoryWebhook>();
pub const VALIDATING: Webhook = webhook::validating::<InventoryWebhook>();

/// The `app.kubernetes.io/name` label the defaulter sets.
const NAME: &str = "inventory";

impl Defaulter for InventoryWebhook {
    type Resource = Inventory;

    /// Sets what `obj` leaves unset; an error refuses it. Here: the `app.kubernetes.io/name`
    /// label, so that `kubectl get -l app.kubernetes.io/name=inventory` lists
    /// every object of the kind.
    fn default(obj: &mut Inventory) -> Result<(), Denied> {
        let labels = obj.metadata.labels.get_or_insert_with(Default::default);
        labels
            .entry("app.kubernetes.io/name".into())
            .or_insert_with(|| NAME.into());
        Ok(())
    }
}

/// Deletions are not sent here: to refuse some, add `const VALIDATE_DELETE: bool = true;` and
/// a `validate_delete`, then run `make manifests`.
impl Validator for InventoryWebhook {
    type Resource = Inventory;

    /// Checks a new object; an error refuses it with its message, warnings are shown to the
    /// client. Here: every object is valid (the CRD's schema checks the fields).
    fn validate_create(_obj: &Inventory) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }

    /// Checks a change, e.g. refuses one to a field that must not change once set.
    fn validate_update(_old: &Inventory, _new: &Inventory) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }
}

#[cfg(test)]
mod tests {
    use rbuilder_testing::envtest::from_yaml;
    use rbuilder_testing::testing::{admission_review, patched};

    use super::*;

    /// The sample of `config/samples`, which the kind's API comes with.
    const SAMPLE: &str = include_str!("../../../config/samples/shop_v1_inventory.yaml");

    /// An Inventory as a user would apply it.
    fn sample() -> Inventory {
        let mut obj: Inventory = from_yaml(SAMPLE);
        // Without the labels the sample sets, which the defaulter would leave as they are.
        obj.metadata.labels = None;
        obj
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
