//! The generated files that the project's own `manifests` binary also writes: CRDs and the
//! manager's role. rbuilder cannot run that binary (it never compiles), so it produces the
//! same bytes the same way: a document becomes a sorted JSON value, then YAML through
//! serde-saphyr. The generated-project tests run `manifests --check` to prove they agree.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context as _, Result, anyhow, bail};
use serde_json::{Map, Value};

/// The first line of every file the manifests binary owns. The generated binary's template
/// includes the same file, so the two cannot disagree.
pub const GENERATED_HEADER: &str = concat!(
    include_str!("../../templates/shared/generated_header.tera"),
    "\n"
);

fn parse(yaml: &str, what: &str) -> Result<Value> {
    serde_saphyr::from_str(yaml).map_err(|e| {
        anyhow!(
            "{what} is not valid YAML ({}); fix it, or restore it from version control",
            crate::project::yaml_error(&e)
        )
    })
}

/// Serializes as the manifests binary does: keys sorted, then YAML, after the header.
pub fn to_yaml(value: &Value) -> Result<String> {
    let body = serde_saphyr::to_string(&sorted(value.clone())).context("cannot write YAML")?;
    Ok(format!("{GENERATED_HEADER}{body}"))
}

/// Sorts object keys at every depth, whichever map order serde_json was built with.
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let entries: BTreeMap<String, Value> =
                map.into_iter().map(|(k, v)| (k, sorted(v))).collect();
            Value::Object(entries.into_iter().collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// The CRD file after adding (or, with --force, replacing) one version. `rendered` is a
/// one-version CRD; `existing` is the file as it is now, if the kind already has one. The
/// existing versions and their storage flags are kept, so user edits to them survive.
pub fn crd_with_version(existing: Option<&str>, rendered: &str, file: &str) -> Result<String> {
    let new = parse(rendered, "internal error: a rendered CRD")?;
    let Some(existing) = existing else {
        return to_yaml(&new);
    };
    let mut crd = parse(existing, file)?;
    let version = new
        .pointer("/spec/versions/0")
        .cloned()
        .ok_or_else(|| anyhow!("internal error: the rendered CRD has no version"))?;
    let name = version.get("name").cloned();
    let Some(versions) = crd
        .pointer_mut("/spec/versions")
        .and_then(Value::as_array_mut)
    else {
        bail!("{file} has no spec.versions list; restore it with `make manifests`");
    };
    match versions.iter_mut().find(|v| v.get("name") == name.as_ref()) {
        Some(old) => {
            // --force: the new schema, the old storage flag.
            let storage = old.get("storage").cloned();
            *old = version;
            if let (Some(storage), Some(obj)) = (storage, old.as_object_mut()) {
                obj.insert("storage".into(), storage);
            }
        }
        None => {
            let mut version = version;
            if let Some(obj) = version.as_object_mut() {
                obj.insert("storage".into(), Value::Bool(false));
            }
            versions.push(version);
        }
    }
    to_yaml(&crd)
}

/// The role file with `revoked` rules taken away, then `rules` added (both rendered YAML
/// lists), merged as the generated project's `controller::rbac_rules()` merges them: verbs are
/// collected per API group and resource, resources with the same group and verbs share a rule,
/// rules are sorted by (apiGroups, resources), and rules naming resourceNames or
/// nonResourceURLs stay as they are. Revoking works verb by verb, on mergeable rules only.
pub fn role_with_rules(existing: &str, rules: &str, revoked: &str, file: &str) -> Result<String> {
    let mut role = parse(existing, file)?;
    let rules_of = |yaml: &str| -> Result<Vec<Value>> {
        if yaml.trim().is_empty() {
            return Ok(Vec::new());
        }
        let list = parse(yaml, "internal error: rendered RBAC rules")?;
        Ok(list.as_array().cloned().unwrap_or_default())
    };
    let existing_rules = role
        .get("rules")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();

    let mut unmerged = Vec::new();
    let mut verbs = verbs_by_resource(existing_rules.iter(), &mut unmerged);
    for (key, gone) in verbs_by_resource(rules_of(revoked)?.iter(), &mut Vec::new()) {
        if let Some(held) = verbs.get_mut(&key) {
            held.retain(|verb| !gone.contains(verb));
        }
    }
    for (key, added) in verbs_by_resource(rules_of(rules)?.iter(), &mut unmerged) {
        verbs.entry(key).or_default().extend(added);
    }

    let mut shared: BTreeMap<(String, Vec<String>), Vec<String>> = BTreeMap::new();
    for ((group, resource), verbs) in verbs {
        if verbs.is_empty() {
            continue;
        }
        shared
            .entry((group, verbs.into_iter().collect()))
            .or_default()
            .push(resource);
    }
    let mut merged: Vec<(Vec<String>, Vec<String>, Vec<String>)> = shared
        .into_iter()
        .map(|((group, verbs), resources)| (vec![group], resources, verbs))
        .collect();
    merged.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let rules: Vec<Value> = merged
        .into_iter()
        .map(|(groups, resources, verbs)| {
            serde_json::json!({ "apiGroups": groups, "resources": resources, "verbs": verbs })
        })
        .chain(unmerged)
        .collect();
    let Some(obj) = role.as_object_mut() else {
        bail!("{file} is not a Role or ClusterRole; restore it with `make manifests`");
    };
    obj.insert("rules".into(), Value::Array(rules));
    to_yaml(&role)
}

/// The verbs that `rules` grant per (API group, resource). Rules naming resourceNames or
/// nonResourceURLs cannot be merged: they go to `unmerged`, once each.
fn verbs_by_resource<'a>(
    rules: impl Iterator<Item = &'a Value>,
    unmerged: &mut Vec<Value>,
) -> BTreeMap<(String, String), BTreeSet<String>> {
    let strings = |rule: &Value, key: &str| -> Vec<String> {
        rule.get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut verbs: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for rule in rules {
        if rule.get("resourceNames").is_some() || rule.get("nonResourceURLs").is_some() {
            if !unmerged.contains(rule) {
                unmerged.push(rule.clone());
            }
            continue;
        }
        for group in strings(rule, "apiGroups") {
            for resource in strings(rule, "resources") {
                verbs
                    .entry((group.clone(), resource))
                    .or_default()
                    .extend(strings(rule, "verbs"));
            }
        }
    }
    verbs
}

/// Normalizes a rendered manifest into the exact bytes the manifests binary writes.
pub fn normalized(rendered: &str) -> Result<String> {
    to_yaml(&parse(rendered, "internal error: a rendered manifest")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRD: &str = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n\
        metadata:\n  name: things.x.io\nspec:\n  group: x.io\n  versions:\n  - name: v1\n    \
        served: true\n    storage: true\n";

    #[test]
    fn a_new_version_is_appended_and_not_storage() {
        let v2 = CRD.replace("name: v1", "name: v2");
        let out = crd_with_version(Some(CRD), &v2, "f").unwrap();
        let value = parse(&out, "out").unwrap();
        let versions = value.pointer("/spec/versions").unwrap().as_array().unwrap();
        assert_eq!(versions.len(), 2);
        assert_eq!(versions[0]["storage"], true);
        assert_eq!(versions[1]["name"], "v2");
        assert_eq!(versions[1]["storage"], false);
        assert!(out.starts_with(GENERATED_HEADER));
    }

    #[test]
    fn rules_merge_by_group_and_resource() {
        let role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  \
                    name: manager-role\nrules:\n- apiGroups: [apps]\n  resources: [deployments]\n  \
                    verbs: [get]\n";
        let rules = "- apiGroups: [apps]\n  resources: [deployments]\n  verbs: [list, get]\n\
                     - apiGroups: [\"\"]\n  resources: [pods]\n  verbs: [get]\n";
        let out = role_with_rules(role, rules, "", "role.yaml").unwrap();
        let value = parse(&out, "out").unwrap();
        assert_eq!(
            value["rules"],
            serde_json::json!([
                { "apiGroups": [""], "resources": ["pods"], "verbs": ["get"] },
                { "apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list"] },
            ])
        );
        // Merging again changes nothing.
        assert_eq!(role_with_rules(&out, rules, "", "role.yaml").unwrap(), out);
    }

    #[test]
    fn revoked_verbs_go_and_rules_added_at_once_stay() {
        let role = "kind: ClusterRole\nrules:\n- apiGroups: [apps]\n  resources: [deployments]\n  \
                    verbs: [create, get]\n- apiGroups: [\"\"]\n  resources: [pods]\n  verbs: [get]\n";
        let revoked = "- apiGroups: [apps]\n  resources: [deployments]\n  verbs: [create, get]\n\
                       - apiGroups: [\"\"]\n  resources: [pods]\n  verbs: [get]\n";
        // Another controller still needs to get pods.
        let kept = "- apiGroups: [\"\"]\n  resources: [pods]\n  verbs: [get]\n";
        let out = role_with_rules(role, kept, revoked, "role.yaml").unwrap();
        let value = parse(&out, "out").unwrap();
        assert_eq!(
            value["rules"],
            serde_json::json!([{ "apiGroups": [""], "resources": ["pods"], "verbs": ["get"] }])
        );
    }
}
