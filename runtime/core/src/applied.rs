//! Leaving out server-side applies that would change nothing. A controller reconciles each
//! object many times (every change of the object, of what it owns, every resync), and most of
//! those reconciles compute the same object they applied the time before; each apply still
//! costs the API server a write's work (field-manager bookkeeping, an etcd read).
//!
//! [`owned`](crate::owned) uses it for every object it applies (controllers written before it
//! called [`mark`] and [`already`] themselves). `stamp` marks the object about to be applied
//! with a hash of itself (the annotation [`ANNOTATION`]); `unchanged` says whether an object read back from the cluster holds every
//! field the new one sets, that hash included. Both must hold to leave the apply out:
//!
//! - every field equal: nobody changed what this code sets (an edit by hand is put back);
//! - the same hash: this code set nothing else the time before. A field the code stopped
//!   setting (after an upgrade of the operator) is still in the cluster, unnoticed by the
//!   comparison; the hash differs, so the apply runs and server-side apply removes the field.
//!
//! Fields the API server normalizes (a quantity `0.5` stored as `500m`) compare unequal, so
//! such an object is applied at every reconcile, as it would be without this module.

use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde_json::Value;

/// The annotation that holds the hash of the object as last applied.
pub const ANNOTATION: &str = "rbuilder.io/applied-hash";

/// Stamps `desired` with the hash of itself, before it is applied. For controllers written
/// before [`owned`](crate::owned), which does it for every object it applies.
#[deprecated(
    since = "0.2.0",
    note = "apply owned objects with `ctx.owned::<K>(&*obj).apply(desired)`, which leaves out \
            applies that change nothing"
)]
pub fn mark<K: Resource + Serialize>(desired: &mut K) -> Result<(), serde_json::Error> {
    stamp(desired)
}

/// Whether `existing` holds every field of the [marked](mark) `desired` with the same value.
/// For controllers written before [`owned`](crate::owned).
#[deprecated(
    since = "0.2.0",
    note = "apply owned objects with `ctx.owned::<K>(&*obj).apply(desired)`, which leaves out \
            applies that change nothing"
)]
pub fn already<K: Serialize>(existing: &K, desired: &K) -> bool {
    unchanged(existing, desired)
}

/// Stamps `desired` with the hash of itself, before it is applied.
pub(crate) fn stamp<K: Resource + Serialize>(desired: &mut K) -> Result<(), serde_json::Error> {
    // The hash is of the object without it, as it was before the first mark.
    let annotations = &mut desired.meta_mut().annotations;
    if let Some(map) = annotations.as_mut() {
        map.remove(ANNOTATION);
        if map.is_empty() {
            *annotations = None;
        }
    }
    let hash = fnv1a(&serde_json::to_vec(desired)?);
    desired
        .annotations_mut()
        .insert(ANNOTATION.to_owned(), format!("{hash:016x}"));
    Ok(())
}

/// Whether `existing` holds every field of the [stamped](stamp) `desired` with the same value:
/// applying `desired` would change nothing.
pub(crate) fn unchanged<K: Serialize>(existing: &K, desired: &K) -> bool {
    match (
        serde_json::to_value(existing),
        serde_json::to_value(desired),
    ) {
        (Ok(existing), Ok(desired)) => {
            desired.pointer("/metadata/annotations").is_some() && contains(&existing, &desired)
        }
        // Not expected of Kubernetes objects; applying is the safe answer.
        _ => false,
    }
}

/// Whether `outer` holds `inner`: every key of an object with a value that holds the inner
/// one, lists of the same length element by element, anything else equal. The API server
/// adds fields (defaults, status, metadata of its own), never drops or reorders what is set.
fn contains(outer: &Value, inner: &Value) -> bool {
    match (outer, inner) {
        (Value::Object(outer), Value::Object(inner)) => inner
            .iter()
            .all(|(key, value)| outer.get(key).is_some_and(|o| contains(o, value))),
        (Value::Array(outer), Value::Array(inner)) => {
            outer.len() == inner.len() && outer.iter().zip(inner).all(|(o, i)| contains(o, i))
        }
        _ => outer == inner,
    }
}

/// FNV-1a, 64 bits: a hash that stays the same across Rust releases and platforms (std's
/// `DefaultHasher` promises neither), so that a rebuilt operator recognizes its own applies.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    use super::*;

    fn config_map(data: Value) -> ConfigMap {
        serde_json::from_value(
            json!({"metadata": {"name": "a", "labels": {"app": "a"}}, "data": data}),
        )
        .expect("a ConfigMap")
    }

    /// `desired` as the API server would return it after applying it: with fields of its own.
    fn stored(desired: &ConfigMap) -> ConfigMap {
        let mut stored = desired.clone();
        stored.metadata.uid = Some("0c1d".into());
        stored.metadata.resource_version = Some("7".into());
        stored
            .labels_mut()
            .insert("added-by".into(), "someone else".into());
        stored
    }

    fn marked(data: Value) -> ConfigMap {
        let mut desired = config_map(data);
        stamp(&mut desired).expect("serializable");
        desired
    }

    #[test]
    fn what_was_applied_is_not_applied_again() {
        let desired = marked(json!({"key": "value"}));
        assert!(unchanged(&stored(&desired), &desired));
    }

    #[test]
    fn a_field_changed_by_someone_else_is_applied_again() {
        let desired = marked(json!({"key": "value"}));
        let mut edited = stored(&desired);
        edited.data = Some([("key".to_owned(), "edited".to_owned())].into());
        assert!(!unchanged(&edited, &desired));
    }

    #[test]
    fn a_field_the_code_no_longer_sets_is_applied_away() {
        let before = marked(json!({"key": "value", "old": "x"}));
        let now = marked(json!({"key": "value"}));
        // The cluster still holds every field `now` sets; only the hash tells.
        assert!(!unchanged(&stored(&before), &now));
    }

    #[test]
    fn an_object_never_marked_is_applied() {
        let desired = marked(json!({"key": "value"}));
        let mut unmarked = stored(&desired);
        unmarked.annotations_mut().remove(ANNOTATION);
        assert!(!unchanged(&unmarked, &desired));
        assert!(!unchanged(&unmarked, &config_map(json!({"key": "value"}))));
    }

    #[test]
    fn marking_twice_gives_the_same_hash() {
        let mut desired = marked(json!({"key": "value"}));
        let first = desired.annotations().get(ANNOTATION).cloned();
        stamp(&mut desired).expect("serializable");
        assert_eq!(desired.annotations().get(ANNOTATION).cloned(), first);
    }

    #[test]
    fn lists_compare_element_by_element() {
        let inner = json!({"items": [{"name": "a"}, {"name": "b"}]});
        let outer = json!({"items": [{"name": "a", "x": 1}, {"name": "b"}]});
        assert!(contains(&outer, &inner));
        assert!(!contains(&json!({"items": [{"name": "a"}]}), &inner));
        assert!(!contains(
            &json!({"items": [{"name": "b"}, {"name": "a"}]}),
            &inner
        ));
    }

    #[test]
    fn the_hash_is_stable() {
        // FNV-1a's published test vector: a change of the function would make every operator
        // apply everything once after an update, so it is pinned.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
