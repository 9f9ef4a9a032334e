//! Comparing a CRD version's schema as controller-gen writes it with the one kube-derive makes
//! from the Rust types of a kind migrated from kubebuilder: what differs between the two by
//! design, and changes nothing for the API server, is taken out. Plain data (std and
//! serde_json), so that the runtime's tests compile this very file too
//! (`runtime/tests/migrated_crds.rs`), comparing what kube-derive itself makes.
//!
//! By design: the descriptions may be worded differently (a doc comment cannot hold every
//! description as it is, and a status's conditions have k8s-openapi's wording); kube-derive's
//! root leaves out `apiVersion`, `kind` and `metadata` (which the API server checks itself) and
//! has a `title`; its status is `nullable` (an `Option`); an int-or-string has no
//! `anyOf: [{type: integer}, {type: string}]` (which says what `x-kubernetes-int-or-string`
//! says); bounds are floating-point numbers (`0.0`); `required` is sorted.

use serde_json::Value;
#[cfg(test)]
use serde_json::json;

/// `value` without its descriptions, at every depth.
pub fn without_descriptions(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, _)| k != "description")
                .map(|(k, v)| {
                    let v = match k.as_str() {
                        "default" | "enum" | "example" => v,
                        _ => without_descriptions(v),
                    };
                    (k, v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_descriptions).collect()),
        other => other,
    }
}

/// A CRD's version schema with what differs between controller-gen's and kube-derive's by
/// design taken out (see the module's doc), to compare the two: the descriptions; at the root,
/// `apiVersion`, `kind`, `metadata` and `title`, and the status's `nullable`; the `anyOf` of an
/// int-or-string; `required` as a set; numbers by value.
#[cfg(test)]
pub fn comparable(schema: &Value) -> Value {
    let mut root = without_descriptions(schema.clone());
    if let Some(map) = root.as_object_mut() {
        map.remove("title");
        if let Some(Value::Object(properties)) = map.get_mut("properties") {
            for key in ["apiVersion", "kind"] {
                properties.remove(key);
            }
            if properties.get("metadata") == Some(&json!({"type": "object"})) {
                properties.remove("metadata");
            }
            if let Some(Value::Object(status)) = properties.get_mut("status") {
                status.remove("nullable");
            }
        }
    }
    normalized(root)
}

/// Numbers as floats, `required` sorted, no int-or-string `anyOf`, at every depth.
#[cfg(test)]
fn normalized(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let int_or_string = map.get("x-kubernetes-int-or-string") == Some(&json!(true));
            Value::Object(
                map.into_iter()
                    .filter(|(k, _)| !(int_or_string && k == "anyOf"))
                    .map(|(k, v)| {
                        let v = match (k.as_str(), v) {
                            ("required", Value::Array(mut items)) => {
                                items.sort_by_key(|i| i.to_string());
                                Value::Array(items)
                            }
                            (_, v) => normalized(v),
                        };
                        (k, v)
                    })
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(normalized).collect()),
        Value::Number(n) => n.as_f64().map_or(Value::Number(n), |f| json!(f)),
        other => other,
    }
}
