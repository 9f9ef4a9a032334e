//! What each tool's project gives a cluster, as trees that compare field by field: lists become
//! maps keyed by what identifies their items (a container's name, a port's number, an RBAC
//! rule's resource), so that a difference names the field that differs rather than a list
//! index, and the order of items, which neither the API server nor kubectl cares about, does
//! not count.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

/// One object of one output of a project: its name (`Deployment plain-controller-manager`,
/// `PROJECT`, `Makefile`) and its normalized fields.
pub type Objects = BTreeMap<String, Value>;

/// One field that differs between kubebuilder's project and rbuilder's: `None` where that
/// side lacks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub sequence: String,
    /// `config/default`, `config/samples`, `PROJECT`, `Makefile` or `grafana`.
    pub source: String,
    pub object: String,
    /// Empty when the whole object is on one side only.
    pub path: String,
    pub kubebuilder: Option<String>,
    pub rbuilder: Option<String>,
}

/// The objects of a multi-document YAML stream (`kubectl kustomize`'s output), by
/// `<Kind> <name>`; a kind and name that occur twice (a sample per version) get their
/// `apiVersion` too. The namespace is a field, `metadata.namespace`. A project has one webhook
/// configuration of each kind, known by its kind alone, so that a name that differs is one
/// field and the webhooks in it are still compared.
pub fn manifests(yaml: &str) -> Objects {
    let documents: Vec<Value> = serde_saphyr::from_multiple(yaml).expect("kustomize writes YAML");
    let documents: Vec<Value> = documents.into_iter().filter(|d| !d.is_null()).collect();
    let id = |doc: &Value| {
        let kind = doc["kind"].as_str().unwrap_or("?");
        if kind.ends_with("WebhookConfiguration") {
            return kind.to_owned();
        }
        format!("{kind} {}", doc["metadata"]["name"].as_str().unwrap_or("?"))
    };
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for doc in &documents {
        *count.entry(id(doc)).or_default() += 1;
    }
    let mut objects = Objects::new();
    for doc in documents {
        let mut name = id(&doc);
        if count[&name] > 1 {
            name = format!("{name} {}", doc["apiVersion"].as_str().unwrap_or("?"));
        }
        let kind = doc["kind"].as_str().unwrap_or_default().to_owned();
        objects.insert(name, normalize(&kind, "", doc));
    }
    objects
}

/// PROJECT, with its resources keyed by `<Kind> <version>` (the group is a field, so that a
/// group written differently shows as that field).
pub fn project(yaml: &str) -> Objects {
    let value: Value = serde_saphyr::from_str(yaml).expect("PROJECT is YAML");
    Objects::from([("PROJECT".to_owned(), normalize("PROJECT", "", value))])
}

/// The Makefile's target names (rules at the start of a line; not `.PHONY`, not variables).
pub fn makefile(text: &str) -> Objects {
    let mut targets = Map::new();
    for line in text.lines() {
        let name_end = line
            .find(|c: char| !(c.is_ascii_alphanumeric() || "_.-/".contains(c)))
            .unwrap_or(line.len());
        let (name, rest) = line.split_at(name_end);
        let is_rule = rest.trim_start().starts_with(':') && !rest.trim_start().starts_with(":=");
        if is_rule && !name.is_empty() && !name.starts_with('.') {
            targets.insert(format!("[{name}]"), Value::String("target".to_owned()));
        }
    }
    let targets = Map::from_iter([("targets".to_owned(), Value::Object(targets))]);
    Objects::from([("Makefile".to_owned(), Value::Object(targets))])
}

/// A Grafana dashboard: the metrics its panels' queries read (a name before `{`), which is
/// what must match the metrics the manager exports. Panels, titles and layout are each tool's
/// own.
pub fn dashboard(json: &str) -> Value {
    let value: Value = serde_json::from_str(json).expect("a dashboard is JSON");
    let mut metrics = Map::new();
    let mut stack = vec![&value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                if let Some(Value::String(expr)) = map.get("expr") {
                    for metric in metric_names(expr) {
                        metrics.insert(format!("[{metric}]"), Value::String("read".to_owned()));
                    }
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    Value::Object(Map::from_iter([(
        "metrics".to_owned(),
        Value::Object(metrics),
    )]))
}

/// The metric names in a PromQL expression: identifiers followed by a label selector.
fn metric_names(expr: &str) -> Vec<String> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':';
    let mut names = Vec::new();
    for (at, _) in expr.match_indices('{') {
        let before = &expr[..at];
        let start = before.rfind(|c: char| !is_name(c)).map_or(0, |i| i + 1);
        if start < at {
            names.push(before[start..].to_owned());
        }
    }
    names
}

/// The fields of `value` (found at `path` of an object of kind `kind`), made comparable.
fn normalize(kind: &str, path: &str, value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(key, _)| !skipped(kind, path, key))
                .map(|(key, v)| {
                    let inner = format!("{path}.{key}");
                    let v = if path.is_empty() && key == "rules" && is_rbac_role(kind) {
                        rbac_rules(&v)
                    } else {
                        normalize(kind, &inner, v)
                    };
                    (key, v)
                })
                .collect(),
        ),
        Value::Array(items) => list(kind, path, items),
        scalar => scalar,
    }
}

/// Fields not compared, a whole class each: a CRD version's OpenAPI schema is derived from
/// each language's types (Go's by controller-gen, Rust's by kube-derive and schemars), so it
/// differs in every description and in how optional fields are spelled. What a user meets of
/// it (the sample, which the API server validates against it) is compared.
fn skipped(kind: &str, path: &str, key: &str) -> bool {
    kind == "CustomResourceDefinition" && path.starts_with(".spec.versions") && key == "schema"
}

fn is_rbac_role(kind: &str) -> bool {
    kind == "ClusterRole" || kind == "Role"
}

/// A list: scalars sorted (arguments, verbs, DNS names: sets to whoever reads them); objects
/// keyed by what identifies them, by their position only when nothing does.
fn list(kind: &str, path: &str, items: Vec<Value>) -> Value {
    if items
        .iter()
        .all(|item| !item.is_object() && !item.is_array())
    {
        let mut items = items;
        items.sort_by_key(render);
        return Value::Array(items);
    }
    let field = path.rsplit('.').next().unwrap_or_default();
    let keys = item_keys(kind, field, &items);
    let keys = keys.unwrap_or_else(|| (0..items.len()).map(|i| i.to_string()).collect());
    let inner = format!("{path}[]");
    Value::Object(
        keys.into_iter()
            .zip(items)
            .map(|(key, item)| (format!("[{key}]"), normalize(kind, &inner, item)))
            .collect(),
    )
}

/// What names each item of the list `field`, if something does, uniquely.
fn item_keys(kind: &str, field: &str, items: &[Value]) -> Option<Vec<String>> {
    if kind == "PROJECT" && field == "resources" {
        return Some(items.iter().map(project_resource_key).collect());
    }
    // A Service's port is its number (kubebuilder leaves the webhook Service's port unnamed).
    let candidates: &[&str] = match field {
        "ports" => &["port", "containerPort", "name"],
        _ => &["name", "key"],
    };
    candidates.iter().find_map(|candidate| {
        let keys = items
            .iter()
            .map(|item| item.get(candidate).filter(|v| !v.is_null()).map(render))
            .collect::<Option<Vec<String>>>()?;
        unique(&keys).then_some(keys)
    })
}

fn project_resource_key(resource: &Value) -> String {
    format!(
        "{} {}",
        resource["kind"].as_str().unwrap_or("?"),
        resource["version"].as_str().unwrap_or("?")
    )
}

fn unique(keys: &[String]) -> bool {
    let mut sorted = keys.to_vec();
    sorted.sort();
    sorted.dedup();
    sorted.len() == keys.len()
}

/// An RBAC role's rules as one entry per resource (`deployments.apps`, `pods`,
/// `leases.coordination.k8s.io/<resourceName>`, or a non-resource URL) with every verb the
/// role grants on it: two roles that grant the same, however their rules are grouped, compare
/// equal.
fn rbac_rules(rules: &Value) -> Value {
    let mut grants: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let strings = |rule: &Value, field: &str| -> Vec<String> {
        rule[field]
            .as_array()
            .map(|items| items.iter().map(render).collect())
            .unwrap_or_default()
    };
    for rule in rules.as_array().into_iter().flatten() {
        let verbs = strings(rule, "verbs");
        let mut targets = strings(rule, "nonResourceURLs");
        for group in strings(rule, "apiGroups") {
            for resource in strings(rule, "resources") {
                let qualified = if group.is_empty() {
                    resource
                } else {
                    format!("{resource}.{group}")
                };
                let names = strings(rule, "resourceNames");
                if names.is_empty() {
                    targets.push(qualified);
                } else {
                    targets.extend(names.iter().map(|name| format!("{qualified}/{name}")));
                }
            }
        }
        for target in targets {
            grants.entry(target).or_default().extend(verbs.clone());
        }
    }
    Value::Object(
        grants
            .into_iter()
            .map(|(target, mut verbs)| {
                verbs.sort();
                verbs.dedup();
                (format!("[{target}]"), Value::from(verbs))
            })
            .collect(),
    )
}

/// A value as the report and the differences file write it: a string as itself, a list of
/// scalars as `[a, b]`, anything else as compact JSON.
pub fn render(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            let items: Vec<String> = items.iter().map(render).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// The differences between kubebuilder's objects and rbuilder's, one per field (or per
/// subtree, or object, that only one side has).
pub fn compare(
    sequence: &str,
    source: &str,
    kubebuilder: &Objects,
    rbuilder: &Objects,
) -> Vec<Difference> {
    let mut out = Vec::new();
    let names: BTreeSet<&String> = kubebuilder.keys().chain(rbuilder.keys()).collect();
    for name in names {
        let difference = |path: String, kb: Option<String>, rb: Option<String>| Difference {
            sequence: sequence.to_owned(),
            source: source.to_owned(),
            object: name.clone(),
            path,
            kubebuilder: kb,
            rbuilder: rb,
        };
        match (kubebuilder.get(name), rbuilder.get(name)) {
            (Some(kb), Some(rb)) => {
                let mut found = Vec::new();
                fields(String::new(), Some(kb), Some(rb), &mut found);
                out.extend(
                    found
                        .into_iter()
                        .map(|(path, kb, rb)| difference(path, kb, rb)),
                );
            }
            (kb, rb) => out.push(difference(
                String::new(),
                kb.map(|_| "present".to_owned()),
                rb.map(|_| "present".to_owned()),
            )),
        }
    }
    out
}

type Found = Vec<(String, Option<String>, Option<String>)>;

/// Walks both trees. A map that one side lacks is walked too, so that a label or annotation
/// has the same path whether or not the other side has other labels; but a list item, or an
/// entry under a key that is not a plain word (both `[key]`: a container, a plugin), that one
/// side lacks is one difference, whole.
fn fields(path: String, kb: Option<&Value>, rb: Option<&Value>, out: &mut Found) {
    let walk = |a: Option<&Map<String, Value>>, b: Option<&Map<String, Value>>, out: &mut Found| {
        let keys: BTreeSet<&String> = a.into_iter().chain(b).flat_map(|m| m.keys()).collect();
        for key in keys {
            let (x, y) = (a.and_then(|m| m.get(key)), b.and_then(|m| m.get(key)));
            fields(join(&path, key), x, y, out);
        }
    };
    let item = path.ends_with(']');
    match (kb, rb) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => return walk(Some(a), Some(b), out),
        (Some(Value::Object(a)), None) if !item && !a.is_empty() => {
            return walk(Some(a), None, out);
        }
        (None, Some(Value::Object(b))) if !item && !b.is_empty() => {
            return walk(None, Some(b), out);
        }
        _ => {}
    }
    let (kb, rb) = (kb.map(render), rb.map(render));
    if kb != rb {
        out.push((path, kb, rb));
    }
}

/// `path.key`, or `path[key]` for a key that is not a plain word (a label), so that paths read
/// like kubectl's and stay unambiguous; a list item's key comes as `[key]` already.
fn join(path: &str, key: &str) -> String {
    if key.starts_with('[') {
        return format!("{path}{key}");
    }
    let plain = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    match (path.is_empty(), plain) {
        (true, true) => key.to_owned(),
        (false, true) => format!("{path}.{key}"),
        (_, false) => format!("{path}[{key}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rbac_rules_compare_by_resource_whatever_their_grouping() {
        let a = manifests(
            "kind: ClusterRole\nmetadata: {name: r}\nrules:\n- apiGroups: [apps, '']\n  \
             resources: [deployments]\n  verbs: [get, list]\n- apiGroups: [apps]\n  \
             resources: [deployments]\n  verbs: [watch]\n",
        );
        let b = manifests(
            "kind: ClusterRole\nmetadata: {name: r}\nrules:\n- apiGroups: [apps]\n  \
             resources: [deployments]\n  verbs: [watch, list, get]\n- apiGroups: ['']\n  \
             resources: [deployments]\n  verbs: [get]\n",
        );
        let differences = compare("s", "config/default", &a, &b);
        assert_eq!(differences.len(), 1, "{differences:?}");
        assert_eq!(differences[0].path, "rules[deployments]");
        assert_eq!(differences[0].kubebuilder.as_deref(), Some("[get, list]"));
        assert_eq!(differences[0].rbuilder.as_deref(), Some("[get]"));
    }

    #[test]
    fn lists_are_keyed_by_what_names_their_items() {
        let a = manifests(
            "kind: Service\nmetadata: {name: s}\nspec:\n  ports:\n  - {port: 443, targetPort: 9443}\n",
        );
        let b = manifests(
            "kind: Service\nmetadata: {name: s}\nspec:\n  ports:\n  - {name: web, port: 443, \
             targetPort: 9443}\n",
        );
        let differences = compare("s", "config/default", &a, &b);
        assert_eq!(differences.len(), 1, "{differences:?}");
        assert_eq!(differences[0].path, "spec.ports[443].name");
        assert_eq!(differences[0].kubebuilder, None);
    }

    #[test]
    fn makefile_targets_are_rules_not_variables() {
        let objects = makefile(
            ".PHONY: all\nall: build\nX := 1\nY ?= 2\n$(LOCALBIN):\n\tmkdir x\nbuild: ## b\n",
        );
        let targets: Vec<&String> = objects["Makefile"]["targets"]
            .as_object()
            .expect("a map")
            .keys()
            .collect();
        assert_eq!(targets, ["[all]", "[build]"]);
    }

    #[test]
    fn dashboards_are_compared_by_the_metrics_they_read() {
        let names = metric_names(
            "histogram_quantile(0.5, sum(rate(workqueue_bucket{job=\"$job\"}[5m]))) + up{}",
        );
        assert_eq!(names, ["workqueue_bucket", "up"]);
    }
}
