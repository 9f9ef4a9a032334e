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

//! The webhooks of Destroyer v1:
//! - defaulting sets what a new or changed object leaves unset.
//!
//! The API server calls them before it stores an object; `make manifests` writes their
//! configuration.

use rbuilder_runtime::webhook::{self, Defaulter, Denied, Webhook};

use crate::api::ship::v1::Destroyer;

/// The webhooks of Destroyer v1, listed in `src/webhook/mod.rs`.
pub struct DestroyerWebhook;

pub const DEFAULTING: Webhook = webhook::defaulting::<DestroyerWebhook>();

/// The `app.kubernetes.io/name` label the defaulter sets.
const NAME: &str = "destroyer";

impl Defaulter for DestroyerWebhook {
    type Resource = Destroyer;

    /// Sets what `obj` leaves unset; an error refuses it. Here: the `app.kubernetes.io/name`
    /// label, so that `kubectl get -l app.kubernetes.io/name=destroyer` lists
    /// every object of the kind.
    fn default(obj: &mut Destroyer) -> Result<(), Denied> {
        let labels = obj.metadata.labels.get_or_insert_with(Default::default);
        labels
            .entry("app.kubernetes.io/name".into())
            .or_insert_with(|| NAME.into());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rbuilder_testing::envtest::from_yaml;
    use rbuilder_testing::testing::{admission_review, patched};

    use super::*;

    /// The sample of `config/samples`, which the kind's API comes with.
    const SAMPLE: &str = include_str!("../../../../config/samples/ship_v1_destroyer.yaml");

    /// A Destroyer as a user would apply it.
    fn sample() -> Destroyer {
        let mut obj: Destroyer = from_yaml(SAMPLE);
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
}
