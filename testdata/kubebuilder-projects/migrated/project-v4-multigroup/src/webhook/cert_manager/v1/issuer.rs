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

//! The webhooks of Issuer v1:
//! - defaulting sets what a new or changed object leaves unset.
//!
//! The API server calls them before it stores an object; `make manifests` writes their
//! configuration.
//!
//! Issuer is another project's custom resource: its types, in
//! `crate::api::external::cert_manager::v1`, are made from its CRD, issuers.cert-manager.io.
//! As a built-in type's, these webhooks see its objects wherever the operator works, except
//! the manager's own and those of kube-system and kube-node-lease (a webhook that fails closed
//! on those could keep the manager, or the cluster, from working while the manager is down):
//! keep them fast, and change or refuse only what you must.

use rbuilder_runtime::webhook::{self, Defaulter, Denied, Webhook};

use crate::api::external::cert_manager::v1::Issuer;

/// The webhooks of Issuer v1, listed in `src/webhook/mod.rs`.
pub struct IssuerWebhook;

pub const DEFAULTING: Webhook = webhook::defaulting::<IssuerWebhook>();

impl Defaulter for IssuerWebhook {
    type Resource = Issuer;

    /// Sets what `obj` leaves unset; an error refuses it. Here: nothing yet.
    fn default(_obj: &mut Issuer) -> Result<(), Denied> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use rbuilder_testing::testing::{admission_review, patched};

    use super::*;

    /// An Issuer as a user would apply it.
    fn sample() -> Issuer {
        let metadata = ObjectMeta {
            name: Some("sample".into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        };
        Issuer {
            metadata,
            ..Issuer::default()
        }
    }

    #[test]
    fn an_object_is_left_as_it_is() {
        let obj = sample();
        let answer = DEFAULTING.answer(&admission_review("CREATE", Some(&obj), None));
        assert_eq!(patched(&obj, &answer), obj);
    }
}
