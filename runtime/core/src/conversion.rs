//! Conversion between two versions of a kind whose fields differ, by field names, losing
//! nothing: the fields both versions have are copied, and what the target version has no field
//! for is kept in an annotation of the converted object, from which the conversion back
//! restores it (the annotation is the kind's group, then `/<version>-conversion-data`). So an
//! object read in one version and written back in it through another keeps every field.
//!
//! A conversion webhook's `TryFrom` can call [`by_field_names`] until the versions' fields are
//! mapped one by one; an object that lacks a field the target version requires fails to
//! convert, with a message naming the field. Each version keeps its own: between two spokes,
//! through the hub, only what the hub has passes (what the first spoke kept comes back when
//! the object is read in that spoke again).

use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The parts of an object that differ between versions; metadata is the same in every one.
const FIELDS: [&str; 2] = ["spec", "status"];

/// `obj` as `To`, another version of its kind: what both have is copied by name, what `To`
/// lacks is kept in an annotation for the conversion back, and what `To` kept there when it was
/// converted to `obj`'s version is restored.
///
/// ```
/// use rbuilder_runtime::conversion::by_field_names;
///
/// mod v1 {
///     use kube::CustomResource;
///     use schemars::JsonSchema;
///     use serde::{Deserialize, Serialize};
///
///     #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
///     #[kube(group = "example.com", version = "v1", kind = "Site", namespaced)]
///     pub struct SiteSpec {
///         pub host: String,
///         pub port: i32,
///     }
/// }
///
/// mod v2 {
///     use kube::CustomResource;
///     use schemars::JsonSchema;
///     use serde::{Deserialize, Serialize};
///
///     /// v2 has no port.
///     #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
///     #[kube(group = "example.com", version = "v2", kind = "Site", namespaced)]
///     pub struct SiteSpec {
///         pub host: String,
///     }
/// }
///
/// let spec = v1::SiteSpec { host: "example.com".into(), port: 8080 };
/// let old = v1::Site::new("web", spec);
/// let new: v2::Site = by_field_names(old).expect("to v2");
/// assert_eq!(new.spec.host, "example.com");
/// // The port, which v2 has no field for, comes back with the conversion to v1.
/// let back: v1::Site = by_field_names(new).expect("to v1");
/// assert_eq!(back.spec.port, 8080);
/// ```
pub fn by_field_names<From, To>(obj: From) -> Result<To, String>
where
    From: Resource<DynamicType = ()> + Serialize,
    To: Resource<DynamicType = ()> + Serialize + DeserializeOwned,
{
    let mut source = serde_json::to_value(&obj).map_err(|e| e.to_string())?;
    let key = |version: &str| format!("{}/{version}-conversion-data", To::group(&()));
    let kept = take_annotation(&mut source, &key(&To::version(&())));

    let mut target = Map::new();
    target.insert("apiVersion".into(), To::api_version(&()).into());
    target.insert("kind".into(), To::kind(&()).into());
    target.insert("metadata".into(), source["metadata"].take());
    for field in FIELDS {
        let merged = merge(kept[field].clone(), source[field].clone());
        if !merged.is_null() {
            target.insert(field.into(), merged);
        }
    }
    let mut to: To = serde_json::from_value(Value::Object(target))
        .map_err(|e| format!("cannot convert to {}: {e}", To::api_version(&())))?;

    // What of `obj` the new version did not take, for the conversion back.
    let written = serde_json::to_value(&to).map_err(|e| e.to_string())?;
    let mut lost = Map::new();
    for field in FIELDS {
        if let Some(value) = missing(&source[field], &written[field]) {
            lost.insert(field.into(), value);
        }
    }
    if !lost.is_empty() {
        let annotations = to
            .meta_mut()
            .annotations
            .get_or_insert_with(Default::default);
        annotations.insert(key(&From::version(&())), Value::Object(lost).to_string());
    }
    Ok(to)
}

/// Removes the annotation `key` from the object `value` and returns its JSON (null if absent).
fn take_annotation(value: &mut Value, key: &str) -> Value {
    let Some(annotations) = value
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    else {
        return Value::Null;
    };
    let kept = annotations
        .remove(key)
        .and_then(|text| serde_json::from_str(text.as_str()?).ok())
        .unwrap_or(Value::Null);
    if annotations.is_empty()
        && let Some(metadata) = value["metadata"].as_object_mut()
    {
        metadata.remove("annotations");
    }
    kept
}

/// `over` laid on `base`: objects merged key by key, lists of the same length item by item
/// (what was kept of each item), anything else `over`'s unless null.
fn merge(base: Value, over: Value) -> Value {
    match (base, over) {
        (Value::Object(mut base), Value::Object(over)) => {
            for (key, value) in over {
                let merged = merge(base.remove(&key).unwrap_or(Value::Null), value);
                base.insert(key, merged);
            }
            Value::Object(base)
        }
        (Value::Array(base), Value::Array(over)) if base.len() == over.len() => Value::Array(
            base.into_iter()
                .zip(over)
                .map(|(base, over)| merge(base, over))
                .collect(),
        ),
        (base, Value::Null) => base,
        (_, over) => over,
    }
}

/// What of `source` is not in `written`, or is there with another value.
fn missing(source: &Value, written: &Value) -> Option<Value> {
    match (source, written) {
        (Value::Null, _) => None,
        (Value::Object(source), Value::Object(written)) => {
            let lost: Map<String, Value> = source
                .iter()
                .filter_map(|(key, value)| {
                    let there = written.get(key).unwrap_or(&Value::Null);
                    missing(value, there).map(|lost| (key.clone(), lost))
                })
                .collect();
            (!lost.is_empty()).then_some(Value::Object(lost))
        }
        (source, written) => (source != written).then(|| source.clone()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    mod v1 {
        /// A kind for the tests: v1 has an image and a status.
        #[derive(
            kube::CustomResource,
            schemars::JsonSchema,
            serde::Serialize,
            serde::Deserialize,
            Clone,
            Debug,
        )]
        #[kube(
            group = "test.my.domain",
            version = "v1",
            kind = "Widget",
            namespaced,
            status = "WidgetStatus"
        )]
        #[serde(rename_all = "camelCase")]
        pub struct WidgetSpec {
            pub image: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub replicas: Option<i32>,
        }

        #[derive(
            schemars::JsonSchema, serde::Serialize, serde::Deserialize, Clone, Debug, Default,
        )]
        #[serde(rename_all = "camelCase")]
        pub struct WidgetStatus {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub ready_replicas: Option<i32>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub observed_generation: Option<i64>,
        }
    }

    mod v2 {
        /// v2 keeps `replicas`, drops `image`, adds `colour`.
        #[derive(
            kube::CustomResource,
            schemars::JsonSchema,
            serde::Serialize,
            serde::Deserialize,
            Clone,
            Debug,
            Default,
        )]
        #[kube(
            group = "test.my.domain",
            version = "v2",
            kind = "Widget",
            namespaced,
            status = "WidgetStatus"
        )]
        #[serde(rename_all = "camelCase")]
        pub struct WidgetSpec {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub replicas: Option<i32>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub colour: Option<String>,
        }

        #[derive(
            schemars::JsonSchema, serde::Serialize, serde::Deserialize, Clone, Debug, Default,
        )]
        #[serde(rename_all = "camelCase")]
        pub struct WidgetStatus {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub observed_generation: Option<i64>,
        }
    }

    fn v1_widget() -> Value {
        json!({
            "apiVersion": "test.my.domain/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default", "labels": {"team": "a"}},
            "spec": {"image": "nginx:1.27", "replicas": 2},
            "status": {"readyReplicas": 2, "observedGeneration": 1},
        })
    }

    #[test]
    fn a_round_trip_keeps_what_the_other_version_has_no_field_for() {
        let original: v1::Widget = serde_json::from_value(v1_widget()).expect("v1");
        let v2: v2::Widget = by_field_names(original).expect("to v2");
        assert_eq!(v2.spec.replicas, Some(2));
        assert_eq!(
            v2.status.as_ref().and_then(|s| s.observed_generation),
            Some(1)
        );
        let annotations = v2.metadata.annotations.clone().unwrap_or_default();
        let kept = &annotations["test.my.domain/v1-conversion-data"];
        assert_eq!(
            serde_json::from_str::<Value>(kept).expect("JSON"),
            json!({"spec": {"image": "nginx:1.27"}, "status": {"readyReplicas": 2}})
        );

        let back: v1::Widget = by_field_names(v2).expect("to v1");
        assert_eq!(serde_json::to_value(back).expect("JSON"), v1_widget());
    }

    #[test]
    fn a_change_made_in_the_other_version_wins_over_what_was_kept() {
        let original: v1::Widget = serde_json::from_value(v1_widget()).expect("v1");
        let mut v2: v2::Widget = by_field_names(original).expect("to v2");
        v2.spec.replicas = Some(5);
        v2.spec.colour = Some("blue".into());
        let v1: v1::Widget = by_field_names(v2).expect("to v1");
        assert_eq!(v1.spec.replicas, Some(5));
        assert_eq!(v1.spec.image, "nginx:1.27");
        // v2's own field rides on the v1 object, and comes back.
        let v2: v2::Widget = by_field_names(v1).expect("to v2 again");
        assert_eq!(v2.spec.colour.as_deref(), Some("blue"));
    }

    #[test]
    fn what_the_items_of_a_list_lose_comes_back_item_by_item() {
        let kept = json!({"items": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:2"}]});
        let changed = json!({"items": [{"name": "a"}, {"name": "c"}]});
        assert_eq!(
            merge(kept, changed),
            json!({"items": [{"name": "a", "image": "x:1"}, {"name": "c", "image": "y:2"}]})
        );
    }

    #[test]
    fn a_field_the_target_requires_and_the_source_lacks_fails_the_conversion() {
        let made_in_v2 = v2::Widget::new("w", v2::WidgetSpec::default());
        let error = by_field_names::<_, v1::Widget>(made_in_v2).expect_err("no image");
        assert!(
            error.contains("cannot convert to test.my.domain/v1"),
            "{error}"
        );
        assert!(error.contains("image"), "{error}");
    }
}
