//! RBAC rules: each controller declares what it needs ([`crate::Reconciler::rbac_rules`]), and
//! the `manifests` binary grants the merge of them all to the manager, nothing more.

use k8s_openapi::api::rbac::v1::PolicyRule;

use crate::Registration;
use crate::role::{self, Rule};

/// A rule granting `verbs` on `resources` of the API `group` (`""` for the core group).
pub fn policy_rule(group: &str, resources: &[&str], verbs: &[&str]) -> PolicyRule {
    Rule::new(group, resources, verbs).into()
}

/// The rules every controller needs from the runtime: to publish Events (created, then
/// patched as a series grows). See [`role::RUNTIME_RULES`].
pub fn runtime_rules() -> Vec<PolicyRule> {
    role::runtime_rules().into_iter().map(Into::into).collect()
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
/// group and verbs share a rule, rules are sorted by (apiGroups, resources). The algorithm is
/// [`role::Grants`], which rbuilder runs too when it scaffolds `role.yaml`.
pub fn merge(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut grants = role::Grants::default();
    rules.into_iter().for_each(|rule| grants.grant(rule.into()));
    grants.rules().into_iter().map(Into::into).collect()
}

impl From<PolicyRule> for Rule {
    fn from(rule: PolicyRule) -> Self {
        Rule {
            api_groups: rule.api_groups,
            non_resource_urls: rule.non_resource_urls,
            resource_names: rule.resource_names,
            resources: rule.resources,
            verbs: rule.verbs,
        }
    }
}

impl From<Rule> for PolicyRule {
    fn from(rule: Rule) -> Self {
        PolicyRule {
            api_groups: rule.api_groups,
            non_resource_urls: rule.non_resource_urls,
            resource_names: rule.resource_names,
            resources: rule.resources,
            verbs: rule.verbs,
        }
    }
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
