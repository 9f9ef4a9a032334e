//! RBAC rules: each controller declares what it needs ([`crate::Reconciler::rbac_rules`]), and
//! the `manifests` binary grants the merge of them all to the manager, nothing more.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::rbac::v1::PolicyRule;

use crate::Registration;

/// A rule granting `verbs` on `resources` of the API `group` (`""` for the core group).
pub fn policy_rule(group: &str, resources: &[&str], verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![group.to_owned()]),
        resources: Some(resources.iter().map(|r| r.to_string()).collect()),
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
        ..PolicyRule::default()
    }
}

/// The rules every controller needs from the runtime: to publish Events (created, then
/// patched as a series grows).
pub fn runtime_rules() -> Vec<PolicyRule> {
    vec![policy_rule(
        "events.k8s.io",
        &["events"],
        &["create", "patch"],
    )]
}

/// The rules of `controllers` and of the runtime, merged and sorted so that `role.yaml` is
/// stable: one rule per API group and set of verbs. Rules naming `resourceNames` or
/// `nonResourceURLs` are kept as they are (merging them would widen them).
pub fn merged(controllers: &[Registration]) -> Vec<PolicyRule> {
    let mut rules = runtime_rules();
    if controllers.is_empty() {
        // An operator without controllers publishes no Events either.
        rules.clear();
    }
    rules.extend(controllers.iter().flat_map(|c| (c.rbac_rules)()));
    merge(rules)
}

/// `rules` merged: verbs are collected per API group and resource, resources with the same
/// group and verbs share a rule, rules are sorted by (apiGroups, resources).
pub fn merge(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut verbs: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    let mut unmerged = Vec::new();
    for rule in rules {
        if rule.resource_names.is_some() || rule.non_resource_urls.is_some() {
            unmerged.push(rule);
            continue;
        }
        for group in rule.api_groups.iter().flatten() {
            for resource in rule.resources.iter().flatten() {
                let key = (group.clone(), resource.clone());
                verbs
                    .entry(key)
                    .or_default()
                    .extend(rule.verbs.iter().cloned());
            }
        }
    }

    let mut resources: BTreeMap<(String, Vec<String>), Vec<String>> = BTreeMap::new();
    for ((group, resource), verbs) in verbs {
        let key = (group, verbs.into_iter().collect());
        resources.entry(key).or_default().push(resource);
    }
    let mut rules: Vec<PolicyRule> = resources
        .into_iter()
        .map(|((group, verbs), resources)| PolicyRule {
            api_groups: Some(vec![group]),
            resources: Some(resources),
            verbs,
            ..PolicyRule::default()
        })
        .collect();
    rules.sort_by(|a, b| (&a.api_groups, &a.resources).cmp(&(&b.api_groups, &b.resources)));
    unmerged.sort_by_key(|rule| format!("{rule:?}"));
    unmerged.dedup();
    rules.extend(unmerged);
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_merged_by_group_and_resource_and_sorted() {
        let rules = merge(vec![
            policy_rule("apps", &["deployments"], &["get"]),
            policy_rule("", &["pods"], &["get"]),
            policy_rule("apps", &["deployments"], &["list", "get"]),
            policy_rule("apps", &["statefulsets"], &["get", "list"]),
        ]);
        assert_eq!(
            rules,
            [
                policy_rule("", &["pods"], &["get"]),
                policy_rule("apps", &["deployments", "statefulsets"], &["get", "list"]),
            ]
        );
        assert_eq!(merge(rules.clone()), rules);
    }

    #[test]
    fn rules_naming_resources_are_not_widened() {
        let named = PolicyRule {
            resource_names: Some(vec!["one".into()]),
            ..policy_rule("", &["configmaps"], &["get"])
        };
        let rules = merge(vec![
            named.clone(),
            policy_rule("", &["configmaps"], &["list"]),
        ]);
        assert_eq!(rules, [policy_rule("", &["configmaps"], &["list"]), named]);
    }
}
