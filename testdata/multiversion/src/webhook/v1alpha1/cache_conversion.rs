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

//! Conversion of Cache between v1alpha1 and the hub, v1.
//!
//! The API server serves v1alpha1 from the version it stores by calling the conversion
//! webhook, which converts through the hub (v1) as kubebuilder's hub and spokes do: a
//! conversion between two spokes goes through the hub.
//!
//! The two versions were scaffolded with different fields (one with `--image`), so `TryFrom`
//! converts them by field names: what both have is copied, and what one has no field for rides
//! along in an annotation, so that a round trip keeps every field. An object made in one
//! version converts to the other only if it has every field the other requires: map the
//! fields one by one here to do better.

use rbuilder_runtime::conversion::by_field_names;
use rbuilder_runtime::webhook::{self, Webhook};

use crate::api::{v1, v1alpha1};

/// The conversion webhook of this version, listed in `src/webhook/mod.rs`.
pub const CONVERSION: Webhook = webhook::conversion::<Hub, Spoke>();

/// Cache in the hub version, v1, and in this one.
type Hub = v1::Cache;
type Spoke = v1alpha1::Cache;

impl TryFrom<Spoke> for Hub {
    type Error = String;

    fn try_from(obj: Spoke) -> Result<Self, String> {
        by_field_names(obj)
    }
}

impl TryFrom<Hub> for Spoke {
    type Error = String;

    fn try_from(obj: Hub) -> Result<Self, String> {
        by_field_names(obj)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// A ConversionReview as the API server sends it.
    fn review(desired: &str, object: Value) -> Vec<u8> {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "ConversionReview",
            "request": {"uid": "test", "desiredAPIVersion": desired, "objects": [object]},
        })
        .to_string()
        .into_bytes()
    }

    fn convert(object: &Value, desired: &str) -> Value {
        let answer = CONVERSION.answer(&review(desired, object.clone()));
        let status = &answer["response"]["result"]["status"];
        assert_eq!(status, "Success", "{answer}");
        answer["response"]["convertedObjects"][0].clone()
    }

    /// v1alpha1, which has an image, and v1, which has not.
    const WITH_IMAGE: &str = "devops.my.domain/v1alpha1";
    const WITHOUT_IMAGE: &str = "devops.my.domain/v1";

    #[test]
    fn a_round_trip_from_v1alpha1_keeps_every_field() {
        let original = json!({
            "apiVersion": WITH_IMAGE,
            "kind": "Cache",
            "metadata": {"name": "sample", "labels": {"team": "a"}},
            "spec": {"image": "nginx:1.27", "replicas": 2, "port": 8080},
            "status": {"readyReplicas": 2, "observedGeneration": 1},
        });
        let converted = convert(&original, WITHOUT_IMAGE);
        assert_eq!(converted["apiVersion"], WITHOUT_IMAGE);
        let back = convert(&converted, WITH_IMAGE);
        assert_eq!(back, original);
    }

    #[test]
    fn an_object_made_in_v1_has_no_image_for_v1alpha1() {
        let object = json!({
            "apiVersion": WITHOUT_IMAGE,
            "kind": "Cache",
            "metadata": {"name": "sample"},
            "spec": {"foo": "bar"},
        });
        let answer = CONVERSION.answer(&review(WITH_IMAGE, object));
        let result = &answer["response"]["result"];
        assert_eq!(result["status"], "Failure", "{answer}");
        let message = result["message"].as_str().unwrap_or_default();
        assert!(message.contains("missing field `image`"), "{answer}");
    }
}
