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

//! The webhooks of Deployment v1:
//! - validation checks what Kubernetes does not.
//!
//! The API server calls them before it stores an object; `make manifests` writes their
//! configuration.
//!
//! A built-in type's webhooks see its objects wherever the operator works, except the
//! manager's own and those of kube-system and kube-node-lease (a webhook that fails closed on
//! those could keep the manager, or the cluster, from working while the manager is down):
//! keep them fast, and change or refuse only what you must.

use k8s_openapi::api::apps::v1::Deployment;
use rbuilder_runtime::webhook::{self, Denied, Validator, Warnings, Webhook};

/// The webhooks of Deployment v1, listed in `src/webhook/mod.rs`.
pub struct DeploymentWebhook;

pub const VALIDATING: Webhook = webhook::validating::<DeploymentWebhook>();

/// Deletions are not sent here: to refuse some, add `const VALIDATE_DELETE: bool = true;` and
/// a `validate_delete`, then run `make manifests`.
impl Validator for DeploymentWebhook {
    type Resource = Deployment;

    /// Checks a new object; an error refuses it with its message, warnings are shown to the
    /// client. Here: every object is valid (the API server checks the fields).
    fn validate_create(_obj: &Deployment) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }

    /// Checks a change, e.g. refuses one to a field that must not change once set.
    fn validate_update(_old: &Deployment, _new: &Deployment) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use rbuilder_testing::testing::admission_review;

    use super::*;

    /// A Deployment as a user would apply it.
    fn sample() -> Deployment {
        let metadata = ObjectMeta {
            name: Some("sample".into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        };
        Deployment {
            metadata,
            ..Deployment::default()
        }
    }

    #[test]
    fn a_new_object_is_accepted() {
        let obj = sample();
        let answer = VALIDATING.answer(&admission_review("CREATE", Some(&obj), None));
        assert_eq!(answer["response"]["allowed"], true, "{answer}");
    }
}
