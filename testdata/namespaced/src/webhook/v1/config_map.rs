//! The webhooks of ConfigMap v1:
//! - validation checks what Kubernetes does not.
//!
//! The API server calls them before it stores an object; `make manifests` writes their
//! configuration. A built-in type's webhooks see its objects wherever the operator
//! works, except the manager's own and kube-system's (a webhook that fails closed on those
//! could keep the manager from ever starting again): keep them fast, and change or refuse
//! only what you must.

use k8s_openapi::api::core::v1::ConfigMap;
use rbuilder_runtime::webhook::{self, Denied, Validator, Warnings, Webhook};

/// The webhooks of ConfigMap v1, listed in `src/webhook/mod.rs`.
pub struct ConfigMapWebhook;

pub const VALIDATING: Webhook = webhook::validating::<ConfigMapWebhook>();

/// Deletions are not sent here: to refuse some, add `const VALIDATE_DELETE: bool = true;` and
/// a `validate_delete`, then run `make manifests`.
impl Validator for ConfigMapWebhook {
    type Resource = ConfigMap;

    /// Checks a new object; an error refuses it with its message, warnings are shown to the
    /// client. Here: every object is valid (the API server checks the fields).
    fn validate_create(_obj: &ConfigMap) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }

    /// Checks a change, e.g. refuses one to a field that must not change once set.
    fn validate_update(_old: &ConfigMap, _new: &ConfigMap) -> Result<Warnings, Denied> {
        Ok(Warnings::new())
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use rbuilder_runtime::testing::admission_review;

    use super::*;

    /// A ConfigMap as a user would apply it.
    fn sample() -> ConfigMap {
        let metadata = ObjectMeta {
            name: Some("sample".into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        };
        ConfigMap {
            metadata,
            ..ConfigMap::default()
        }
    }

    #[test]
    fn a_new_object_is_accepted() {
        let obj = sample();
        let answer = VALIDATING.answer(&admission_review("CREATE", Some(&obj), None));
        assert_eq!(answer["response"]["allowed"], true, "{answer}");
    }
}
