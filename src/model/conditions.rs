//! The schema of a status's conditions, as data: what the scaffolded CRDs and the translation
//! of an external API's types both write for a `conditions` field.

use serde_json::{Value, json};

/// The schema of a status's conditions as the runtime's `conditions::schema` makes it: the
/// list keyed by `type`, of k8s-openapi's `Condition` (its descriptions are the Go type's) with
/// the checks controller-gen writes for the Go type. Kept here as data because rbuilder does
/// not build k8s-openapi; `runtime/tests/scaffolded_crds.rs` compares the two.
pub fn conditions_schema() -> Value {
    json!({
        "items": {
            "description": "Condition contains details for one aspect of the current state of this API Resource.",
            "properties": {
                "lastTransitionTime": {
                    "description": "lastTransitionTime is the last time the condition transitioned from one status to another. This should be when the underlying condition changed.  If that is not known, then using the time when the API field changed is acceptable.",
                    "format": "date-time",
                    "type": "string",
                },
                "message": {
                    "description": "message is a human readable message indicating details about the transition. This may be an empty string.",
                    "maxLength": 32768,
                    "type": "string",
                },
                "observedGeneration": {
                    "description": "observedGeneration represents the .metadata.generation that the condition was set based upon. For instance, if .metadata.generation is currently 12, but the .status.conditions[x].observedGeneration is 9, the condition is out of date with respect to the current state of the instance.",
                    "format": "int64",
                    "minimum": 0.0,
                    "type": "integer",
                },
                "reason": {
                    "description": "reason contains a programmatic identifier indicating the reason for the condition's last transition. Producers of specific condition types may define expected values and meanings for this field, and whether the values are considered a guaranteed API. The value should be a CamelCase string. This field may not be empty.",
                    "maxLength": 1024,
                    "minLength": 1,
                    "pattern": "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
                    "type": "string",
                },
                "status": {
                    "description": "status of the condition, one of True, False, Unknown.",
                    "enum": ["True", "False", "Unknown"],
                    "type": "string",
                },
                "type": {
                    "description": "type of condition in CamelCase or in foo.example.com/CamelCase.",
                    "maxLength": 316,
                    "pattern": r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
                    "type": "string",
                },
            },
            "required": ["lastTransitionTime", "message", "reason", "status", "type"],
            "type": "object",
        },
        "type": "array",
        "x-kubernetes-list-map-keys": ["type"],
        "x-kubernetes-list-type": "map",
    })
}
