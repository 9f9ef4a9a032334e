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
/// group written differently shows as that field), and its plugins by name and version
/// (`deploy-image/v1-alpha`), the domain of their key (`go.kubebuilder.io`, `rbuilder.io`) a
/// field beside their settings (`config`), so that the settings of one plugin compare field by
/// field whichever tool's key it has.
pub fn project(yaml: &str) -> Objects {
    let mut value: Value = serde_saphyr::from_str(yaml).expect("PROJECT is YAML");
    if let Some(Value::Object(plugins)) = value.get_mut("plugins") {
        let by_name = std::mem::take(plugins).into_iter().map(|(key, config)| {
            let (name, version) = key.split_once('/').unwrap_or((&key, ""));
            let (name, domain) = name.split_once('.').unwrap_or((name, ""));
            let entry = serde_json::json!({ "domain": domain, "config": config });
            (format!("{name}/{version}"), entry)
        });
        *plugins = by_name.collect();
    }
    Objects::from([("PROJECT".to_owned(), normalize("PROJECT", "", value))])
}

/// A YAML file (a Helm chart's values), as one object.
pub fn yaml(text: &str) -> Value {
    let value: Value = serde_saphyr::from_str(text).expect("a YAML file");
    normalize("yaml", "", value)
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
        Value::Number(number) => self::number(number),
        scalar => scalar,
    }
}

/// A number as its value: `0.0` (schemars writes a minimum as a float) and `0` are one.
fn number(number: serde_json::Number) -> Value {
    match number.as_f64() {
        // An integral float, well within an i64.
        Some(f) if number.is_f64() && f.fract() == 0.0 && f.abs() < 1e15 => Value::from(f as i64),
        _ => Value::Number(number),
    }
}

/// Fields not compared: the descriptions in a CRD version's OpenAPI schema, which each tool
/// writes from its language's doc comments (Go's by controller-gen, Rust's by kube-derive and
/// schemars), in its own words. Everything else of the schema is compared: what it accepts.
/// (A property of the schema named `description` is compared: it is under `properties`.)
fn skipped(kind: &str, path: &str, key: &str) -> bool {
    kind == "CustomResourceDefinition"
        && path.starts_with(".spec.versions[].schema")
        && key == "description"
        && !path.ends_with(".properties")
}

fn is_rbac_role(kind: &str) -> bool {
    kind == "ClusterRole" || kind == "Role"
}

/// A list: a program's flags (`args` that are all `--flag` or `--flag=value`) keyed by flag, so
/// that one that appears or vanishes is one difference; other scalars sorted (verbs, DNS names:
/// sets to whoever reads them); objects keyed by what identifies them, by their position only
/// when nothing does.
fn list(kind: &str, path: &str, items: Vec<Value>) -> Value {
    let flags = path.ends_with(".args")
        && items
            .iter()
            .all(|item| item.as_str().is_some_and(|arg| arg.starts_with("--")));
    if flags {
        return Value::Object(
            items
                .into_iter()
                .map(|arg| {
                    let text = arg.as_str().unwrap_or_default();
                    let flag = text.split_once('=').map_or(text, |(flag, _)| flag);
                    (format!("[{flag}]"), arg.clone())
                })
                .collect(),
        );
    }
    if items
        .iter()
        .all(|item| !item.is_object() && !item.is_array())
    {
        let mut items: Vec<Value> = items
            .into_iter()
            .map(|item| normalize(kind, path, item))
            .collect();
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

    /// A flag that one side's program gets and the other's does not is one difference, named
    /// by the flag: no flag hides behind another.
    #[test]
    fn arguments_compare_by_flag() {
        let deployment = |args: &str| {
            manifests(&format!(
                "kind: Deployment\nmetadata: {{name: m}}\nspec:\n  template:\n    spec:\n      \
                 containers:\n      - name: manager\n        args: [{args}]\n"
            ))
        };
        let a = deployment("--leader-elect, --webhook-port=9443, --metrics-bind-address=:8443");
        let b = deployment(
            "--metrics-bind-address=:8443, --webhook-bind-address=:9443, --leader-elect",
        );
        let mut differences = compare("s", "config/default", &a, &b);
        differences.sort_by(|x, y| x.path.cmp(&y.path));
        let found: Vec<(&str, Option<&str>, Option<&str>)> = differences
            .iter()
            .map(|d| {
                (
                    d.path.as_str(),
                    d.kubebuilder.as_deref(),
                    d.rbuilder.as_deref(),
                )
            })
            .collect();
        let args = "spec.template.spec.containers[manager].args";
        assert_eq!(
            found,
            [
                (
                    &*format!("{args}[--webhook-bind-address]"),
                    None,
                    Some("--webhook-bind-address=:9443")
                ),
                (
                    &*format!("{args}[--webhook-port]"),
                    Some("--webhook-port=9443"),
                    None
                ),
            ]
        );
    }

    /// A CRD's schema compares field by field but for its descriptions, and a number by its
    /// value; a property named `description` is a property like any.
    #[test]
    fn schemas_compare_without_descriptions() {
        let crd = |minimum: &str, description: &str| {
            manifests(&format!(
                "kind: CustomResourceDefinition\nmetadata: {{name: c}}\nspec:\n  versions:\n  \
                 - name: v1\n    schema:\n      openAPIV3Schema:\n        description: {description}\n        \
                 properties:\n          description: {{type: string}}\n          size: \
                 {{type: integer, minimum: {minimum}, description: {description}}}\n"
            ))
        };
        assert_eq!(
            compare("s", "config/default", &crd("0", "Go"), &crd("0.0", "Rust")),
            []
        );
        let b = manifests(
            "kind: CustomResourceDefinition\nmetadata: {name: c}\nspec:\n  versions:\n  - name: \
             v1\n    schema:\n      openAPIV3Schema:\n        properties:\n          size: {type: \
             integer, minimum: 1}\n",
        );
        let differences = compare("s", "config/default", &crd("0", "Go"), &b);
        let paths: Vec<&str> = differences.iter().map(|d| d.path.as_str()).collect();
        let schema = "spec.versions[v1].schema.openAPIV3Schema.properties";
        assert_eq!(
            paths,
            [
                format!("{schema}.description.type"),
                format!("{schema}.size.minimum")
            ]
        );
    }

    /// A plugin's settings compare field by field under its name, whichever tool's domain its
    /// key has; the domain is one field.
    #[test]
    fn plugins_compare_by_name() {
        let a = project(
            "plugins:\n  grafana.kubebuilder.io/v1-alpha: {}\n  deploy-image.go.kubebuilder.io/v1-alpha:\n    \
             resources:\n    - {kind: App, version: v1, options: {image: a}}\n",
        );
        let b = project(
            "plugins:\n  grafana.rbuilder.io/v1-alpha: {}\n  deploy-image.rbuilder.io/v1-alpha:\n    \
             resources:\n    - {kind: App, version: v1, options: {image: b}}\n",
        );
        let differences = compare("s", "PROJECT", &a, &b);
        let found: Vec<(&str, Option<&str>, Option<&str>)> = differences
            .iter()
            .map(|d| {
                (
                    d.path.as_str(),
                    d.kubebuilder.as_deref(),
                    d.rbuilder.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            found,
            [
                (
                    "plugins[deploy-image/v1-alpha].config.resources[App v1].options.image",
                    Some("a"),
                    Some("b")
                ),
                (
                    "plugins[deploy-image/v1-alpha].domain",
                    Some("go.kubebuilder.io"),
                    Some("rbuilder.io")
                ),
                (
                    "plugins[grafana/v1-alpha].domain",
                    Some("kubebuilder.io"),
                    Some("rbuilder.io")
                ),
            ]
        );
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
