//! An owned object as the cache of its kind keeps it: what the controller reads of it, not the
//! whole object.
//!
//! A controller reads three things of the objects it owns: who owns them (metadata), whether
//! what it applied is still there as it applied it ([`Owned::apply`](super::Owned::apply)
//! leaves out an apply that would change nothing, and puts back a field edited by hand), and
//! what the cluster reports of them (their status: a Deployment's conditions and replicas).
//! So the cache keeps the metadata (less `managedFields`), the status, the spec's scalar
//! fields (a Deployment's `replicas`, whoever scales it), and of the rest only the fields this
//! operator set: those its field manager's applies own, and those it
//! [released](super::Owned::release) (owned by `<field manager>-released`), as the object's
//! `managedFields` list them. What the API server defaulted (a Deployment's strategy, a
//! container's `imagePullPolicy` and `terminationMessagePath`, a Pod template's `dnsPolicy`...)
//! and what others set is left out: most of a Deployment as kube-apiserver returns it.
//!
//! The object is kept as JSON, a fraction of the size of its typed form (k8s-openapi's
//! structs hold a field for everything a kind may have, set or not), and read back into its
//! type at each [`Owned::get`](super::Owned::get). The watch never decodes it into its type:
//! it reads each object as JSON ([`Wire`]) and keeps part of that. (Decoding every watched
//! Deployment into k8s-openapi's struct, `managedFields` and all, only to turn it back into
//! JSON was a tenth of a manager's CPU at scale.)
//!
//! A field edited by hand is still found: an update takes the fields it changes from their
//! field manager, so an edited image leaves this operator's field set, the kept object lacks
//! it, and the next apply sends it again. An object without `managedFields` (a unit test's,
//! through [`Context::cache_of`](crate::Context::cache_of)) is kept whole.

use std::borrow::Cow;
use std::marker::PhantomData;
use std::sync::Arc;

use kube::Resource;
use kube::api::ObjectMeta;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// An owned object of kind `K` as its cache keeps it: see the [module](self).
pub(crate) struct Slim<K> {
    /// What the cache and the watch read: name, namespace, uid, resourceVersion and owner
    /// references.
    meta: ObjectMeta,
    /// The object kept, as JSON: shared by the clones that the watch sends to each controller.
    json: Arc<[u8]>,
    kind: PhantomData<fn() -> K>,
}

impl<K> Clone for Slim<K> {
    fn clone(&self) -> Self {
        Self {
            meta: self.meta.clone(),
            json: Arc::clone(&self.json),
            kind: PhantomData,
        }
    }
}

impl<K> std::fmt::Debug for Slim<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slim")
            .field("meta", &self.meta)
            .field("bytes", &self.json.len())
            .finish()
    }
}

impl<K> Slim<K>
where
    K: Resource + Serialize + DeserializeOwned,
{
    /// `obj` as the cache of an operator whose field manager is `field_manager` keeps it.
    pub(crate) fn new(obj: &K, field_manager: &str) -> Self {
        match serde_json::to_value(obj) {
            Ok(Value::Object(whole)) => Self::kept(Wire::from(whole), field_manager),
            // Not expected of a Kubernetes object: an empty one is read as missing from the
            // cache (`object` fails), and read from the API server.
            _ => Self::kept(Wire::from(Map::new()), field_manager),
        }
    }

    /// `wire`, an object as its watch read it, as the cache keeps it: see [`Slim::new`].
    pub(crate) fn kept(wire: Wire<K>, field_manager: &str) -> Self {
        let Wire { meta, json, .. } = wire;
        let kept = slim(json, field_manager);
        let json = serde_json::to_vec(&kept).unwrap_or_default().into();
        Self {
            meta,
            json,
            kind: PhantomData,
        }
    }

    /// The object kept, in its type: what the cluster has of the fields this operator set,
    /// its metadata and its status.
    pub(crate) fn object(&self) -> Result<K, serde_json::Error> {
        serde_json::from_slice(&self.json)
    }
}

/// `whole`, an object, as kept: its kind, metadata (less `managedFields`) and status whole,
/// and of its other fields those that its `managedFields` list as `field_manager`'s applies' or
/// as released by it. Without `managedFields`, the whole object.
fn slim(mut whole: Map<String, Value>, field_manager: &str) -> Map<String, Value> {
    let managed = match whole.get_mut("metadata") {
        Some(Value::Object(metadata)) => metadata.remove("managedFields"),
        _ => None,
    };
    let Some(Value::Array(managed)) = managed else {
        return whole;
    };
    let released = format!("{field_manager}-released");
    let fields = managed
        .iter()
        .filter(|entry| match entry.get("manager").and_then(Value::as_str) {
            Some(manager) if manager == field_manager => {
                entry.get("operation").and_then(Value::as_str) == Some("Apply")
            }
            Some(manager) => manager == released,
            None => false,
        })
        .filter_map(|entry| entry.get("fieldsV1").and_then(Value::as_object))
        .fold(Map::new(), |mut fields, set| {
            merge(&mut fields, set);
            fields
        });
    let mut kept = Map::new();
    for (key, value) in whole {
        let whole_field = matches!(key.as_str(), "apiVersion" | "kind" | "metadata" | "status");
        let set = match fields.get(&format!("f:{key}")) {
            Some(Value::Object(set)) => Some(set),
            _ => None,
        };
        let value = match (key.as_str(), value) {
            (_, value) if whole_field => Some(value),
            ("spec", Value::Object(spec)) => Some(Value::Object(spec_kept(spec, set))),
            (_, value) => set.map(|set| project(value, set)),
        };
        if let Some(value) = value {
            kept.insert(key, value);
        }
    }
    kept
}

/// What is kept of a spec: the fields in `set`, and every field that holds a scalar, whoever
/// set it. Those are few and small, and a controller reads some that others set: a
/// Deployment's `replicas` once an autoscaler or `kubectl scale` owns it (the controller
/// compares it with the status's counts), a Service's `clusterIP`.
fn spec_kept(spec: Map<String, Value>, set: Option<&Map<String, Value>>) -> Map<String, Value> {
    let scalars: Vec<(String, Value)> = spec
        .iter()
        .filter(|(_, value)| !value.is_object() && !value.is_array())
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let mut kept = match set.map(|set| project(Value::Object(spec), set)) {
        Some(Value::Object(kept)) => kept,
        _ => Map::new(),
    };
    kept.extend(scalars);
    kept
}

/// Adds the fields of the field set `more` to `set` (both in `managedFields`' `fieldsV1`
/// form).
fn merge(set: &mut Map<String, Value>, more: &Map<String, Value>) {
    for (key, value) in more {
        match (set.get_mut(key), value) {
            (Some(Value::Object(inner)), Value::Object(more)) => merge(inner, more),
            (Some(_), _) => {}
            (None, value) => {
                set.insert(key.clone(), value.clone());
            }
        }
    }
}

/// The part of `value` that the field set `set` lists (`managedFields`' `fieldsV1` form:
/// `f:<name>` a field of an object, `k:<keys>` the element of a list with those key fields,
/// `v:<value>` the element of a set, `i:<index>` the element at that index, `.` the element
/// itself). A set that lists nothing under a value owns it whole: a scalar, or a list or map
/// applied as one (`atomic`).
fn project(value: Value, set: &Map<String, Value>) -> Value {
    if set.keys().all(|key| key == ".") {
        return value;
    }
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .filter_map(|(key, value)| match set.get(&format!("f:{key}")) {
                    Some(Value::Object(inner)) => Some((key, project(value, inner))),
                    _ => None,
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .enumerate()
                .filter_map(|(index, item)| {
                    let inner = set.iter().find_map(|(key, inner)| match inner {
                        Value::Object(inner) if names(key, index, &item) => Some(inner),
                        _ => None,
                    })?;
                    Some(project(item, inner))
                })
                .collect(),
        ),
        scalar => scalar,
    }
}

/// Whether the key `key` of a list's field set names its element `item`, at `index`.
fn names(key: &str, index: usize, item: &Value) -> bool {
    if let Some(keys) = key.strip_prefix("k:") {
        serde_json::from_str::<Map<String, Value>>(keys).is_ok_and(|keys| {
            keys.iter()
                .all(|(name, value)| item.get(name) == Some(value))
        })
    } else if let Some(set_value) = key.strip_prefix("v:") {
        serde_json::from_str::<Value>(set_value).is_ok_and(|set_value| &set_value == item)
    } else if let Some(at) = key.strip_prefix("i:") {
        at.parse() == Ok(index)
    } else {
        false
    }
}

/// An owned object as its watch reads it: its JSON, and the metadata the watch and the cache
/// read (name, namespace, uid, resourceVersion, owner references), not yet of its type `K`.
/// [`Slim::kept`] keeps part of it.
pub(crate) struct Wire<K> {
    meta: ObjectMeta,
    json: Map<String, Value>,
    kind: PhantomData<fn() -> K>,
}

impl<K> From<Map<String, Value>> for Wire<K> {
    fn from(json: Map<String, Value>) -> Self {
        let metadata = json.get("metadata");
        let text = |key: &str| {
            metadata
                .and_then(|metadata| metadata.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let owner_references = metadata
            .and_then(|metadata| metadata.get("ownerReferences"))
            .and_then(|references| Deserialize::deserialize(references).ok());
        let meta = ObjectMeta {
            name: text("name"),
            namespace: text("namespace"),
            uid: text("uid"),
            resource_version: text("resourceVersion"),
            owner_references,
            ..ObjectMeta::default()
        };
        Self {
            meta,
            json,
            kind: PhantomData,
        }
    }
}

impl<'de, K> Deserialize<'de> for Wire<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Map::deserialize(deserializer).map(Self::from)
    }
}

impl<K> Clone for Wire<K> {
    fn clone(&self) -> Self {
        Self {
            meta: self.meta.clone(),
            json: self.json.clone(),
            kind: PhantomData,
        }
    }
}

impl<K> std::fmt::Debug for Wire<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wire").field("meta", &self.meta).finish()
    }
}

/// `Resource` for a form of `K` (its API, kind and scope are `K`'s) that holds its metadata
/// in the field `meta`.
macro_rules! resource_as_k {
    ($form:ident) => {
        impl<K> Resource for $form<K>
        where
            K: Resource<DynamicType = ()>,
        {
            type DynamicType = ();
            type Scope = K::Scope;

            fn kind(dt: &()) -> Cow<'_, str> {
                K::kind(dt)
            }

            fn group(dt: &()) -> Cow<'_, str> {
                K::group(dt)
            }

            fn version(dt: &()) -> Cow<'_, str> {
                K::version(dt)
            }

            fn plural(dt: &()) -> Cow<'_, str> {
                K::plural(dt)
            }

            fn meta(&self) -> &ObjectMeta {
                &self.meta
            }

            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.meta
            }
        }
    };
}

resource_as_k!(Slim);
resource_as_k!(Wire);

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use serde_json::json;

    use super::*;
    use crate::applied;

    const MANAGER: &str = "demo-operator";

    /// A Deployment as the operator applies it: what `Owned::apply` compares.
    fn desired() -> Deployment {
        let labels =
            json!({"app.kubernetes.io/instance": "web", "app.kubernetes.io/managed-by": MANAGER});
        let mut desired: Deployment = serde_json::from_value(json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "web",
                "namespace": "default",
                "labels": labels,
                "ownerReferences": [{
                    "apiVersion": "demo.my.domain/v1", "kind": "App", "name": "web",
                    "uid": "a-1", "controller": true, "blockOwnerDeletion": true,
                }],
            },
            "spec": {
                "selector": {"matchLabels": {"app.kubernetes.io/instance": "web"}},
                "template": {
                    "metadata": {"labels": {"app.kubernetes.io/instance": "web"}},
                    "spec": {"containers": [{
                        "name": "app",
                        "image": "podinfo:1",
                        "ports": [{"containerPort": 8080}],
                        "securityContext": {"capabilities": {"drop": ["ALL"]}},
                    }]},
                },
            },
        }))
        .expect("a Deployment");
        applied::stamp(&mut desired).expect("serializable");
        desired
    }

    /// The field set of `desired`'s apply, as kube-apiserver records it.
    fn applied_fields() -> Value {
        json!({
            "f:metadata": {
                "f:annotations": {"f:rbuilder.io/applied-hash": {}},
                "f:labels": {"f:app.kubernetes.io/instance": {}, "f:app.kubernetes.io/managed-by": {}},
                "f:ownerReferences": {"k:{\"uid\":\"a-1\"}": {}},
            },
            "f:spec": {
                "f:selector": {},
                "f:template": {
                    "f:metadata": {"f:labels": {"f:app.kubernetes.io/instance": {}}},
                    "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {
                        ".": {},
                        "f:image": {},
                        "f:name": {},
                        "f:ports": {"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}": {
                            ".": {}, "f:containerPort": {},
                        }},
                        "f:securityContext": {"f:capabilities": {"f:drop": {}}},
                    }}},
                },
            },
        })
    }

    /// `desired` as kube-apiserver returns it: with its defaults, a status, the replicas
    /// released, and `managers`' field sets.
    fn stored(managers: Value) -> Deployment {
        let mut stored = serde_json::to_value(desired()).expect("serializable");
        let extra = json!({
            "metadata": {
                "uid": "d-1",
                "resourceVersion": "7",
                "generation": 1,
                "creationTimestamp": "2026-12-06T12:00:00Z",
                "annotations": {"deployment.kubernetes.io/revision": "1"},
                "managedFields": managers,
            },
            "spec": {
                "replicas": 1,
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600,
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                "template": {"spec": {
                    "dnsPolicy": "ClusterFirst",
                    "restartPolicy": "Always",
                    "schedulerName": "default-scheduler",
                    "terminationGracePeriodSeconds": 30,
                    "containers": [{
                        "imagePullPolicy": "IfNotPresent",
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File",
                        "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                    }],
                }},
            },
            "status": {
                "observedGeneration": 1,
                "replicas": 1,
                "readyReplicas": 1,
                "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}],
            },
        });
        add(&mut stored, extra);
        serde_json::from_value(stored).expect("a Deployment")
    }

    /// `extra`'s fields added to `value`'s; lists element by element.
    fn add(value: &mut Value, extra: Value) {
        match (value, extra) {
            (Value::Object(value), Value::Object(extra)) => {
                for (key, extra) in extra {
                    match value.get_mut(&key) {
                        Some(inner) => add(inner, extra),
                        None => {
                            value.insert(key, extra);
                        }
                    }
                }
            }
            (Value::Array(value), Value::Array(extra)) => {
                for (inner, extra) in value.iter_mut().zip(extra) {
                    add(inner, extra);
                }
            }
            (value, extra) => *value = extra,
        }
    }

    fn entry(manager: &str, operation: &str, fields: Value) -> Value {
        json!({"manager": manager, "operation": operation, "fieldsType": "FieldsV1", "fieldsV1": fields})
    }

    fn managers() -> Value {
        json!([
            entry(MANAGER, "Apply", applied_fields()),
            entry(
                &format!("{MANAGER}-released"),
                "Apply",
                json!({"f:spec": {"f:replicas": {}}})
            ),
            entry(
                "kube-controller-manager",
                "Update",
                json!({
                    "f:metadata": {"f:annotations": {"f:deployment.kubernetes.io/revision": {}}},
                    "f:status": {"f:replicas": {}, "f:conditions": {}},
                })
            ),
        ])
    }

    fn kept(stored: &Deployment) -> Value {
        let slim = Slim::new(stored, MANAGER);
        serde_json::to_value(slim.object().expect("read back")).expect("serializable")
    }

    #[test]
    fn the_cache_keeps_what_the_operator_set_the_metadata_and_the_status() {
        let stored = stored(managers());
        let kept = kept(&stored);
        let container = &kept["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["image"], "podinfo:1");
        assert_eq!(container["ports"], json!([{"containerPort": 8080}]));
        // Released: the replicas, which `release` reads.
        assert_eq!(kept["spec"]["replicas"], 1);
        assert_eq!(kept["status"]["conditions"][0]["type"], "Available");
        assert_eq!(kept["metadata"]["uid"], "d-1");
        assert_eq!(kept["metadata"]["generation"], 1);
        // What the API server defaulted, and the field sets.
        assert_eq!(container.get("imagePullPolicy"), None);
        assert_eq!(kept["spec"].get("strategy"), None);
        assert_eq!(kept["spec"]["template"]["spec"].get("dnsPolicy"), None);
        assert_eq!(kept["metadata"].get("managedFields"), None);
        let whole = serde_json::to_vec(&stored).expect("serializable").len();
        let slim = Slim::new(&stored, MANAGER).json.len();
        assert!(slim * 2 < whole, "{slim} bytes kept of {whole}");
    }

    #[test]
    fn the_watch_keeps_of_the_json_what_is_kept_of_the_object() {
        let stored = stored(managers());
        let json = serde_json::to_vec(&stored).expect("serializable");
        let wire: Wire<Deployment> = serde_json::from_slice(&json).expect("an object");
        assert_eq!(wire.meta().uid.as_deref(), Some("d-1"));
        assert_eq!(wire.meta().resource_version.as_deref(), Some("7"));
        let owners = wire.meta().owner_references.as_deref().unwrap_or_default();
        assert_eq!(owners.len(), 1);
        assert_eq!(owners[0].uid, "a-1");
        let (watched, typed) = (Slim::kept(wire, MANAGER), Slim::new(&stored, MANAGER));
        assert_eq!(watched.meta, typed.meta);
        let read = |slim: &Slim<Deployment>| -> Value {
            serde_json::from_slice(&slim.json).expect("JSON")
        };
        assert_eq!(read(&watched), read(&typed));
        assert_eq!(
            read(&watched)["spec"]["template"]["spec"]["containers"][0]["image"],
            "podinfo:1"
        );
    }

    /// What the API server sends that `K`'s type lacks (a field of a newer Kubernetes) is not
    /// the operator's: it is left out with the rest of what others set.
    #[test]
    fn a_field_the_type_lacks_is_read_back_without_it() {
        let mut stored = serde_json::to_value(stored(managers())).expect("serializable");
        stored["spec"]["newerField"] = json!({"set": "by the API server"});
        let wire: Wire<Deployment> = serde_json::from_value(stored).expect("an object");
        let slim = Slim::kept(wire, MANAGER);
        let kept: Value = serde_json::from_slice(&slim.json).expect("JSON");
        assert_eq!(kept["spec"].get("newerField"), None);
        assert!(slim.object().is_ok());
    }

    #[test]
    fn what_the_operator_applied_is_found_unchanged() {
        let current: Deployment = Slim::new(&stored(managers()), MANAGER)
            .object()
            .expect("read back");
        assert!(applied::unchanged(&current, &desired()));
    }

    #[test]
    fn an_image_edited_by_hand_is_found() {
        // kubectl edit's update takes the field from the operator's apply.
        let mut fields = applied_fields();
        let container =
            &mut fields["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"];
        container
            .as_object_mut()
            .expect("a field set")
            .remove("f:image");
        let edited = json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
            "k:{\"name\":\"app\"}": {"f:image": {}},
        }}}}});
        let mut managers = managers();
        managers[0] = entry(MANAGER, "Apply", fields);
        managers
            .as_array_mut()
            .expect("a list")
            .push(entry("kubectl-edit", "Update", edited));
        let mut stored = stored(managers);
        let spec = stored.spec.template.spec.as_mut();
        spec.expect("a Pod spec").containers[0].image = Some("podinfo:edited".into());
        let current: Deployment = Slim::new(&stored, MANAGER).object().expect("read back");
        assert!(!applied::unchanged(&current, &desired()));
    }

    #[test]
    fn another_operators_apply_is_left_out() {
        let mut managers = managers();
        managers[0]["manager"] = json!("other-operator");
        let slim = Slim::new(&stored(managers), MANAGER);
        let kept: Value = serde_json::from_slice(&slim.json).expect("JSON");
        // Only the spec's scalars: the replicas among them.
        let spec =
            json!({"replicas": 1, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600});
        assert_eq!(kept["spec"], spec);
        assert_eq!(kept["metadata"]["name"], "web");
        // k8s-openapi reads the fields the API requires as empty when they are missing.
        let read = slim.object().expect("read back");
        assert_eq!(read.spec.template.spec, None);
    }

    #[test]
    fn replicas_set_by_someone_else_are_kept() {
        // `kubectl scale` took them from the released field manager.
        let mut managers = managers();
        managers[1] = entry("kubectl", "Update", json!({"f:spec": {"f:replicas": {}}}));
        let mut stored = stored(managers);
        stored.spec.replicas = Some(3);
        assert_eq!(kept(&stored)["spec"]["replicas"], 3);
    }

    #[test]
    fn an_object_without_field_sets_is_kept_whole() {
        let mut stored = stored(managers());
        stored.metadata.managed_fields = None;
        assert_eq!(
            kept(&stored),
            serde_json::to_value(&stored).expect("serializable")
        );
    }

    #[test]
    fn sets_and_indexes_name_list_elements() {
        let set = json!({"f:items": {"v:\"a\"": {}, "i:2": {}}});
        let Value::Object(set) = set else {
            unreachable!()
        };
        let value = json!({"items": ["a", "b", "c"], "other": 1});
        assert_eq!(project(value, &set), json!({"items": ["a", "c"]}));
    }
}
