//! Status conditions (`metav1.Condition`), set the way apimachinery's `meta.SetStatusCondition`
//! sets them, so that `kubectl wait --for=condition=...`, kstatus and Argo CD read them as they
//! read any Kubernetes object's.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Value, json};

/// A condition of `type_`, keeping the `lastTransitionTime` of the current condition of that
/// type when its status is unchanged, so that re-applying an unchanged status changes nothing.
/// `observed_generation` is the `metadata.generation` the condition was computed from.
pub fn condition(
    current: &[Condition],
    type_: &str,
    status: &str,
    reason: &str,
    message: impl Into<String>,
    observed_generation: Option<i64>,
) -> Condition {
    let last_transition_time = current
        .iter()
        .find(|c| c.type_ == type_ && c.status == status)
        .map_or_else(
            || Time(Timestamp::now()),
            |c| c.last_transition_time.clone(),
        );
    Condition {
        type_: type_.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: message.into(),
        observed_generation,
        last_transition_time,
    }
}

/// Whether `conditions` hold `type_` with status `"True"`.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    conditions
        .iter()
        .any(|c| c.type_ == type_ && c.status == "True")
}

/// The schema of a status's `conditions` list, for `#[schemars(schema_with = ...)]`: a list
/// of `metav1.Condition` keyed by `type` (so that server-side apply merges conditions one by
/// one), with the validations controller-gen writes for it, so that the API server refuses a
/// malformed condition as it does in a kubebuilder project's CRD.
pub fn schema(generator: &mut SchemaGenerator) -> Schema {
    let mut item = Condition::json_schema(generator);
    // What the Go type's kubebuilder markers say, as controller-gen renders them.
    let checks = [
        ("message", json!({"maxLength": 32768})),
        ("observedGeneration", json!({"minimum": 0})),
        (
            "reason",
            json!({
                "maxLength": 1024,
                "minLength": 1,
                "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
            }),
        ),
        ("status", json!({"enum": ["True", "False", "Unknown"]})),
        (
            "type",
            json!({
                "maxLength": 316,
                "pattern": TYPE_PATTERN,
            }),
        ),
    ];
    if let Some(properties) = item.get_mut("properties").and_then(Value::as_object_mut) {
        for (field, check) in checks {
            if let (Some(Value::Object(property)), Value::Object(check)) =
                (properties.get_mut(field), check)
            {
                property.extend(check);
            }
        }
    }
    let mut list = Schema::default();
    list.insert("type".into(), json!("array"));
    list.insert("items".into(), item.to_value());
    list.insert("x-kubernetes-list-type".into(), json!("map"));
    list.insert("x-kubernetes-list-map-keys".into(), json!(["type"]));
    list
}

/// A condition type: a qualified name, optionally prefixed with a DNS subdomain and '/'.
const TYPE_PATTERN: &str = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transition_time_is_kept_while_the_status_is_unchanged() {
        let old = condition(&[], "Ready", "True", "Reconciled", "", Some(1));
        let current = [Condition {
            last_transition_time: Time(Timestamp::UNIX_EPOCH),
            ..old
        }];

        let same = condition(&current, "Ready", "True", "Reconciled", "again", Some(2));
        assert_eq!(same.last_transition_time, Time(Timestamp::UNIX_EPOCH));
        assert_eq!(same.observed_generation, Some(2));
        assert!(is_true(&current, "Ready"));

        let changed = condition(&current, "Ready", "False", "Failed", "", Some(2));
        assert_ne!(changed.last_transition_time, Time(Timestamp::UNIX_EPOCH));
        assert!(!is_true(&[changed], "Ready"));
    }

    #[test]
    fn the_schema_validates_conditions_as_controller_gens_does() {
        let schema = schema(&mut SchemaGenerator::default()).to_value();
        assert_eq!(schema["x-kubernetes-list-type"], "map");
        let properties = &schema["items"]["properties"];
        assert_eq!(
            properties["status"]["enum"],
            json!(["True", "False", "Unknown"])
        );
        assert_eq!(properties["reason"]["minLength"], 1);
        assert_eq!(properties["observedGeneration"]["minimum"], 0);
        assert_eq!(properties["type"]["maxLength"], 316);
        let required = schema["items"]["required"].as_array().expect("required");
        assert!(
            required.contains(&json!("lastTransitionTime")),
            "{required:?}"
        );
    }
}
