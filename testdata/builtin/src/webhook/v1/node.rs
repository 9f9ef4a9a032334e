// Copyright 2026 The builtin Authors.
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

//! The webhooks of Node v1:
//! - defaulting sets what a new or changed object leaves unset.
//!
//! The API server calls them before it stores an object; `make manifests` writes their
//! configuration.
//!
//! Node is cluster-scoped: these webhooks see every one in the cluster, and
//! while the manager is down none can be created or changed. Keep them fast, and change or
//! refuse only what you must.

use k8s_openapi::api::core::v1::Node;
use rbuilder_runtime::webhook::{self, Defaulter, Denied, Webhook};

/// The webhooks of Node v1, listed in `src/webhook/mod.rs`.
pub struct NodeWebhook;

pub const DEFAULTING: Webhook = webhook::defaulting::<NodeWebhook>();

impl Defaulter for NodeWebhook {
    type Resource = Node;

    /// Sets what `obj` leaves unset; an error refuses it. Here: nothing yet.
    fn default(_obj: &mut Node) -> Result<(), Denied> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use rbuilder_testing::testing::{admission_review, patched};

    use super::*;

    /// A Node as a user would apply it.
    fn sample() -> Node {
        let metadata = ObjectMeta {
            name: Some("sample".into()),
            ..ObjectMeta::default()
        };
        Node {
            metadata,
            ..Node::default()
        }
    }

    #[test]
    fn an_object_is_left_as_it_is() {
        let obj = sample();
        let answer = DEFAULTING.answer(&admission_review("CREATE", Some(&obj), None));
        assert_eq!(patched(&obj, &answer), obj);
    }
}
