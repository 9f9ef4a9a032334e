//! The manager's role as plain data: how RBAC rules merge, and which kind of role an operator's
//! scope needs. The `manifests` binary writes `config/rbac/role.yaml` with it (see `rbac`).
//!
//! This file uses only std, serde and serde_json, on purpose: rbuilder compiles this very file
//! into itself (a `#[path]` module) to write the same role when it scaffolds, before the
//! project is ever built. One implementation, so the two cannot drift apart.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The namespace every manifest names for the manager's, until kustomize sets the project's.
pub const MANAGER_NAMESPACE: &str = "system";

/// Where the manager's role is written, from the project's root.
pub const ROLE_FILE: &str = "config/rbac/role.yaml";

/// The name of the manager's role.
pub const ROLE_NAME: &str = "manager-role";

/// An RBAC PolicyRule, field for field, as `role.yaml` spells it.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_groups: Option<Vec<String>>,
    #[serde(
        default,
        rename = "nonResourceURLs",
        skip_serializing_if = "Option::is_none"
    )]
    pub non_resource_urls: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_names: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Vec<String>>,
    #[serde(default)]
    pub verbs: Vec<String>,
}

impl Rule {
    /// A rule granting `verbs` on `resources` of the API `group` (`""` for the core group).
    pub fn new(group: &str, resources: &[&str], verbs: &[&str]) -> Self {
        let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
        Rule {
            api_groups: Some(vec![group.to_owned()]),
            resources: Some(strings(resources)),
            verbs: strings(verbs),
            ..Rule::default()
        }
    }

    /// A rule naming `resourceNames` or `nonResourceURLs`: merging it with others would widen
    /// it, so it is kept as it is.
    fn is_narrow(&self) -> bool {
        self.resource_names.is_some() || self.non_resource_urls.is_some()
    }

    /// Each (API group, resource) the rule names.
    fn targets(&self) -> impl Iterator<Item = (String, String)> + '_ {
        let groups = self.api_groups.iter().flatten();
        groups.flat_map(move |group| {
            let resources = self.resources.iter().flatten();
            resources.map(move |resource| (group.clone(), resource.clone()))
        })
    }
}

/// What the runtime needs for every controller, as (API group, resources, verbs): to publish
/// Events, created then patched as a series grows.
pub const RUNTIME_RULES: &[(&str, &[&str], &[&str])] =
    &[("events.k8s.io", &["events"], &["create", "patch"])];

/// The rules of [`RUNTIME_RULES`].
pub fn runtime_rules() -> Vec<Rule> {
    let rules = RUNTIME_RULES.iter();
    rules
        .map(|(group, resources, verbs)| Rule::new(group, resources, verbs))
        .collect()
}

/// Rules being merged: the verbs granted per API group and resource, and the rules that are
/// kept as they are.
#[derive(Default)]
pub struct Grants {
    verbs: BTreeMap<(String, String), BTreeSet<String>>,
    narrow: BTreeSet<Rule>,
}

impl Grants {
    /// Adds what `rule` grants.
    pub fn grant(&mut self, rule: Rule) {
        if rule.is_narrow() {
            self.narrow.insert(rule);
            return;
        }
        for target in rule.targets() {
            let verbs = self.verbs.entry(target).or_default();
            verbs.extend(rule.verbs.iter().cloned());
        }
    }

    /// Takes back, verb by verb, what `rule` grants (rbuilder, when `--force` replaces a
    /// controller). Rules kept as they are are not taken back: nothing scaffolds them.
    pub fn revoke(&mut self, rule: &Rule) {
        for target in rule.targets() {
            if let Some(verbs) = self.verbs.get_mut(&target) {
                verbs.retain(|verb| !rule.verbs.contains(verb));
            }
        }
    }

    /// The merged rules, stable whatever order they were granted in: one rule per API group
    /// and set of verbs, sorted by (apiGroups, resources); a resource left without verbs is
    /// left out; then the rules kept as they are, sorted, each once.
    pub fn rules(self) -> Vec<Rule> {
        let mut shared: BTreeMap<(String, Vec<String>), Vec<String>> = BTreeMap::new();
        for ((group, resource), verbs) in self.verbs {
            if verbs.is_empty() {
                continue;
            }
            let key = (group, verbs.into_iter().collect());
            shared.entry(key).or_default().push(resource);
        }
        let mut rules: Vec<Rule> = shared
            .into_iter()
            .map(|((group, verbs), resources)| Rule {
                api_groups: Some(vec![group]),
                resources: Some(resources),
                verbs,
                ..Rule::default()
            })
            .collect();
        rules.sort_by(|a, b| (&a.api_groups, &a.resources).cmp(&(&b.api_groups, &b.resources)));
        rules.extend(self.narrow);
        rules
    }
}

/// The manager's role granting `rules`: for an operator scoped to its namespace
/// (`namespaced`), a Role in the manager's namespace, as it watches only there; else a
/// ClusterRole.
pub fn role(namespaced: bool, rules: &[Rule]) -> Value {
    let (kind, metadata) = if namespaced {
        let metadata = json!({"name": ROLE_NAME, "namespace": MANAGER_NAMESPACE});
        ("Role", metadata)
    } else {
        ("ClusterRole", json!({"name": ROLE_NAME}))
    };
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": metadata,
        "rules": rules,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merge(rules: impl IntoIterator<Item = Rule>) -> Vec<Rule> {
        let mut grants = Grants::default();
        rules.into_iter().for_each(|rule| grants.grant(rule));
        grants.rules()
    }

    #[test]
    fn rules_are_merged_by_group_and_resource_and_sorted() {
        let rules = merge([
            Rule::new("apps", &["deployments"], &["get"]),
            Rule::new("", &["pods"], &["get"]),
            Rule::new("apps", &["deployments"], &["list", "get"]),
            Rule::new("apps", &["statefulsets"], &["get", "list"]),
        ]);
        assert_eq!(
            rules,
            [
                Rule::new("", &["pods"], &["get"]),
                Rule::new("apps", &["deployments", "statefulsets"], &["get", "list"]),
            ]
        );
        assert_eq!(merge(rules.clone()), rules);
    }

    #[test]
    fn rules_naming_resources_are_not_widened() {
        let named = Rule {
            resource_names: Some(vec!["one".into()]),
            ..Rule::new("", &["configmaps"], &["get"])
        };
        let rules = merge([
            named.clone(),
            Rule::new("", &["configmaps"], &["list"]),
            named.clone(),
        ]);
        assert_eq!(rules, [Rule::new("", &["configmaps"], &["list"]), named]);
    }

    #[test]
    fn revoked_verbs_go_and_resources_without_verbs_with_them() {
        let mut grants = Grants::default();
        grants.grant(Rule::new("apps", &["deployments"], &["create", "get"]));
        grants.grant(Rule::new("", &["pods"], &["get"]));
        grants.revoke(&Rule::new("apps", &["deployments"], &["create", "get"]));
        grants.revoke(&Rule::new("", &["pods"], &["delete"]));
        assert_eq!(grants.rules(), [Rule::new("", &["pods"], &["get"])]);
    }

    #[test]
    fn the_role_follows_the_scope() {
        let rules = [Rule::new("", &["pods"], &["get"])];
        let role = role(true, &rules);
        assert_eq!(role["kind"], "Role");
        assert_eq!(role["metadata"]["namespace"], MANAGER_NAMESPACE);
        assert_eq!(role["rules"][0]["apiGroups"], json!([""]));
        let cluster = super::role(false, &[]);
        assert_eq!(cluster["kind"], "ClusterRole");
        assert_eq!(cluster["metadata"], json!({"name": ROLE_NAME}));
        assert_eq!(cluster["rules"], json!([]));
    }
}
