// Copyright 2026 The external Authors.
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

//! The webhooks of Certificate v1:
//! - validation checks what the CRD's schema cannot.
//!
//! The API server calls them before it stores an object; `make manifests` writes their
//! configuration.
//!
//! Certificate is another project's custom resource: its types, in
//! `crate::api::external::cert_manager::v1`, are made from its CRD, certificates.cert-manager.io.
//! As a built-in type's, these webhooks see its objects wherever the operator works, except
//! the manager's own and those of kube-system and kube-node-lease (a webhook that fails closed
//! on those could keep the manager, or the cluster, from working while the manager is down):
//! keep them fast, and change or refuse only what you must.

use rbuilder_runtime::webhook::{self, Denied, Validator, Warnings, Webhook};

use crate::api::external::cert_manager::v1::Certificate;

/// The webhooks of Certificate v1, listed in `src/webhook/mod.rs`.
pub struct CertificateWebhook;

pub const VALIDATING: Webhook = webhook::validating::<CertificateWebhook>();

/// Deletions are not sent here: to refuse some, add `const VALIDATE_DELETE: bool = true;` and
/// a `validate_delete`, then run `make manifests`.
impl Validator for CertificateWebhook {
    type Resource = Certificate;

    /// Checks a new object; an error refuses it with its message, warnings are shown to the
    /// client. Here: every object is valid (the CRD's schema checks the fields).
    fn validate_create(_obj: &Certificate) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }

    /// Checks a change, e.g. refuses one to a field that must not change once set.
    fn validate_update(_old: &Certificate, _new: &Certificate) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use rbuilder_testing::testing::admission_review;

    use super::*;

    /// A Certificate as a user would apply it.
    fn sample() -> Certificate {
        let metadata = ObjectMeta {
            name: Some("sample".into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        };
        Certificate {
            metadata,
            ..Certificate::default()
        }
    }

    #[test]
    fn a_new_object_is_accepted() {
        let obj = sample();
        let answer = VALIDATING.answer(&admission_review("CREATE", Some(&obj), None));
        assert_eq!(answer["response"]["allowed"], true, "{answer}");
    }
}
