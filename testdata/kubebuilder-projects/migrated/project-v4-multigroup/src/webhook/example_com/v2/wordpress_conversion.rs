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

//! Conversion of Wordpress between v2 and the hub, v1.
//!
//! The API server serves v2 from the version it stores by calling the conversion
//! webhook, which converts through the hub (v1) as kubebuilder's hub and spokes do: a
//! conversion between two spokes goes through the hub.
//!
//! The versions have the fields of the kubebuilder project's CRD, so `TryFrom` converts them by
//! field names: what both have is copied, and what one has no field for rides along in an
//! annotation, so that a round trip keeps every field. An object made in one version converts
//! to the other only if it has every field the other requires: port the Go project's
//! `ConvertTo` and `ConvertFrom` here, mapping the fields one by one.

use rbuilder_runtime::conversion::by_field_names;
use rbuilder_runtime::webhook::{self, Webhook};

use crate::api::example_com::{v1, v2};

/// The conversion webhook of this version, listed in `src/webhook/mod.rs`.
pub const CONVERSION: Webhook = webhook::conversion::<Hub, Spoke>();

/// Wordpress in the hub version, v1, and in this one.
type Hub = v1::Wordpress;
type Spoke = v2::Wordpress;

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

    /// The hub's sample, from `config/samples`.
    const SAMPLE: &str = include_str!("../../../../config/samples/example.com_v1_wordpress.yaml");

    #[test]
    fn a_round_trip_of_the_sample_keeps_every_field() {
        let hub = "example.com.testproject.org/v1";
        let spoke = "example.com.testproject.org/v2";
        let original: Value = rbuilder_testing::envtest::from_yaml(SAMPLE);
        let converted = convert(&original, spoke);
        assert_eq!(converted["apiVersion"], spoke);
        let back = convert(&converted, hub);
        assert_eq!(back, original);
    }
}
