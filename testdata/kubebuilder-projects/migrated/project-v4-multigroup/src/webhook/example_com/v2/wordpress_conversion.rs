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
//! The scaffolded versions have the same fields, so `From` copies each field both ways; when a
//! version's fields change, convert them here so that a round trip keeps every field.

use rbuilder_runtime::webhook::{self, Webhook};

use crate::api::example_com::{v1, v2};

/// The conversion webhook of this version, listed in `src/webhook/mod.rs`.
pub const CONVERSION: Webhook = webhook::conversion::<Hub, Spoke>();

/// Wordpress in the hub version, v1, and in this one.
type Hub = v1::Wordpress;
type Spoke = v2::Wordpress;

impl From<Spoke> for Hub {
    fn from(obj: Spoke) -> Self {
        use v1::{WordpressSpec as Spec, WordpressStatus as Status};
        let spec = Spec { foo: obj.spec.foo };
        let status = obj.status.map(|s| Status {
            conditions: s.conditions,
            observed_generation: s.observed_generation,
        });
        Self {
            metadata: obj.metadata,
            spec,
            status,
        }
    }
}

impl From<Hub> for Spoke {
    fn from(obj: Hub) -> Self {
        use v2::{WordpressSpec as Spec, WordpressStatus as Status};
        let spec = Spec { foo: obj.spec.foo };
        let status = obj.status.map(|s| Status {
            conditions: s.conditions,
            observed_generation: s.observed_generation,
        });
        Self {
            metadata: obj.metadata,
            spec,
            status,
        }
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

    #[test]
    fn a_round_trip_keeps_every_field() {
        let hub = "example.com.testproject.org/v1";
        let spoke = "example.com.testproject.org/v2";
        let original = json!({
            "apiVersion": hub,
            "kind": "Wordpress",
            "metadata": {"name": "sample", "labels": {"team": "a"}},
            "spec": {"foo": "bar"},
            "status": {"observedGeneration": 1},
        });
        let converted = convert(&original, spoke);
        assert_eq!(converted["apiVersion"], spoke);
        let back = convert(&converted, hub);
        assert_eq!(back, original);
    }
}
