// Copyright 2026 The demo-microservice Authors.
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

//! The webhooks of DemoMicroService v1:
//! - defaulting sets what a new or changed object leaves unset.
//! - validation checks what the CRD's schema cannot.
//!
//! The API server calls them before it stores an object; `make manifests` writes their
//! configuration.

use rbuilder_runtime::webhook::{self, Defaulter, Denied, Validator, Warnings, Webhook};

use crate::api::v1::DemoMicroService;

/// The webhooks of DemoMicroService v1, listed in `src/webhook/mod.rs`.
pub struct DemoMicroServiceWebhook;

pub const DEFAULTING: Webhook = webhook::defaulting::<DemoMicroServiceWebhook>();
pub const VALIDATING: Webhook = webhook::validating::<DemoMicroServiceWebhook>();

/// The `app.kubernetes.io/name` label the defaulter sets.
const NAME: &str = "demomicroservice";

impl Defaulter for DemoMicroServiceWebhook {
    type Resource = DemoMicroService;

    /// Sets what `obj` leaves unset; an error refuses it. Here: the `app.kubernetes.io/name`
    /// label, so that `kubectl get -l app.kubernetes.io/name=demomicroservice` lists
    /// every object of the kind.
    fn default(obj: &mut DemoMicroService) -> Result<(), Denied> {
        let labels = obj.metadata.labels.get_or_insert_with(Default::default);
        labels
            .entry("app.kubernetes.io/name".into())
            .or_insert_with(|| NAME.into());
        Ok(())
    }
}

/// Deletions are not sent here: to refuse some, add `const VALIDATE_DELETE: bool = true;` and
/// a `validate_delete`, then run `make manifests`.
impl Validator for DemoMicroServiceWebhook {
    type Resource = DemoMicroService;

    fn validate_create(obj: &DemoMicroService) -> Result<Warnings, Denied> {
        check_image(&obj.spec.image)?;
        Ok(Warnings::new())
    }

    fn validate_update(old: &DemoMicroService, new: &DemoMicroService) -> Result<Warnings, Denied> {
        // Only a changed image is checked: objects stored before this webhook keep working.
        if new.spec.image != old.spec.image {
            check_image(&new.spec.image)?;
        }
        Ok(Warnings::new())
    }
}

/// Refuses an image without a tag or digest, or tagged `latest`: what such a tag runs changes
/// under the Deployment, so two of its pods can run different code.
fn check_image(image: &str) -> Result<(), Denied> {
    if image.contains('@') {
        return Ok(()); // a digest pins the image
    }
    // The tag follows the last path segment's ':' ("host:5000/app" has no tag).
    let name = image.rsplit('/').next().unwrap_or(image);
    match name.split_once(':') {
        Some((_, tag)) if !tag.is_empty() && tag != "latest" => Ok(()),
        _ => Err(Denied::new(format!(
            "spec.image '{image}' must name a tag other than latest, or a digest, e.g. \
             nginx:1.27: a moving tag makes the pods run whatever it points to when they start"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use rbuilder_testing::testing::{admission_review, patched};
    use serde_json::{Value, json};

    use super::*;

    /// A DemoMicroService as a user would apply it.
    fn sample(image: &str) -> DemoMicroService {
        // From JSON, as the API server sends it, so that a field you add to the spec does not
        // break this test (give it a value here if it is required).
        let obj = json!({
            "apiVersion": "devops.my.domain/v1",
            "kind": "DemoMicroService",
            "metadata": {"name": "sample", "namespace": "default"},
            "spec": {"image": image},
        });
        serde_json::from_value(obj).expect("a valid object")
    }

    #[test]
    fn the_name_label_is_defaulted() {
        let obj = sample("nginx:1.27");
        let answer = DEFAULTING.answer(&admission_review("CREATE", Some(&obj), None));
        let defaulted = patched(&obj, &answer);
        let labels = defaulted.metadata.labels.unwrap_or_default();
        assert_eq!(labels["app.kubernetes.io/name"], NAME);
    }

    fn denial(answer: &Value) -> &str {
        assert_eq!(answer["response"]["allowed"], false, "{answer}");
        answer["response"]["status"]["message"]
            .as_str()
            .unwrap_or_default()
    }

    #[test]
    fn images_with_a_tag_or_digest_are_accepted() {
        for image in [
            "nginx:1.27",
            "ghcr.io/org/app:v2",
            "localhost:5000/app:1",
            "app@sha256:0a",
        ] {
            let obj = sample(image);
            let answer = VALIDATING.answer(&admission_review("CREATE", Some(&obj), None));
            assert_eq!(answer["response"]["allowed"], true, "{image}: {answer}");
        }
    }

    #[test]
    fn images_without_a_tag_or_tagged_latest_are_refused() {
        for image in ["nginx", "nginx:latest", "localhost:5000/app"] {
            let obj = sample(image);
            let answer = VALIDATING.answer(&admission_review("CREATE", Some(&obj), None));
            assert!(
                denial(&answer).contains("must name a tag"),
                "{image}: {answer}"
            );
        }
    }

    #[test]
    fn an_update_is_refused_only_for_a_changed_image() {
        let (old, new) = (sample("nginx"), sample("nginx:latest"));
        let answer = VALIDATING.answer(&admission_review("UPDATE", Some(&new), Some(&old)));
        assert!(denial(&answer).contains("nginx:latest"), "{answer}");
        let answer = VALIDATING.answer(&admission_review("UPDATE", Some(&old), Some(&old)));
        assert_eq!(answer["response"]["allowed"], true, "{answer}");
    }
}
