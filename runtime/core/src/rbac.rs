//! RBAC rules: each controller declares what it needs ([`crate::Reconciler::rbac_rules`]), and
//! the `manifests` binary grants the merge of them all to the manager, nothing more.

use k8s_openapi::api::rbac::v1::PolicyRule;

use kube::core::crd::MergeError;

use crate::controller::Registration;
use crate::operator::Operator;
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

/// The rules of `operator`'s controllers and of the runtime, merged and sorted so that
/// `role.yaml` is stable: one rule per API group and set of verbs. Rules naming
/// `resourceNames` or `nonResourceURLs` are kept as they are (merging them would widen them).
/// Fails if the operator's CRDs cannot be made (which kinds are its own depends on them).
pub fn merged(operator: &Operator) -> Result<Vec<PolicyRule>, MergeError> {
    let own_kinds: Vec<(String, String)> = (operator.parts().crds)()?
        .into_iter()
        .map(|crd| (crd.spec.group, crd.spec.names.plural))
        .collect();
    let mut rules = runtime_rules();
    if operator.parts().controllers.is_empty() {
        // An operator without controllers publishes no Events either.
        rules.clear();
    }
    for controller in operator.parts().controllers {
        rules.extend(declared(controller, &own_kinds));
        rules.extend((controller.rbac_rules)());
    }
    Ok(merge(rules))
}

/// What `controller` needs from what it declares, as the runtime runs it: `own_kinds` are the
/// (group, plural) of the operator's CRDs.
///
/// - its kind: `get`, `list` and `watch` (the controller's watch, and the reads of an object
///   found missing); `patch` for its finalizer, and always on a kind of the project's own, whose
///   controller writes to it as kubebuilder's grants it to (`update` aside);
/// - on a kind of the project's own: `patch` on its status (`Context::apply_status`) and
///   `update` on its finalizers, which the API server asks of whoever sets
///   `blockOwnerDeletion` in an owner reference to it (`owned` does, and so may the user's
///   code); on another kind, `update` on its finalizers only if the controller owns objects;
/// - each kind it [owns](crate::Reconciler::owns): what [`owned`](crate::owned) does, `get`,
///   `list`, `watch`, `create`, `patch` and `delete`.
fn declared(controller: &Registration, own_kinds: &[(String, String)]) -> Vec<PolicyRule> {
    let kind = (controller.kind)();
    let (group, plural) = (kind.group.as_str(), kind.plural.as_str());
    let own = own_kinds.iter().any(|(g, p)| g == group && p == plural);
    let owned = (controller.owns)();
    let mut verbs = vec!["get", "list", "watch"];
    if own || controller.finalizer {
        verbs.push("patch");
    }
    let mut rules = vec![policy_rule(group, &[plural], &verbs)];
    if own {
        rules.push(policy_rule(
            group,
            &[&format!("{plural}/status")],
            &["patch"],
        ));
    }
    if own || !owned.is_empty() {
        let finalizers = format!("{plural}/finalizers");
        rules.push(policy_rule(group, &[&finalizers], &["update"]));
    }
    for kind in owned {
        rules.push(policy_rule(&kind.group, &[&kind.plural], OWNED_VERBS));
    }
    rules
}

/// What [`owned`](crate::owned) does to the objects of a kind a controller owns.
const OWNED_VERBS: &[&str] = &["get", "list", "watch", "create", "patch", "delete"];

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

    /// Three controllers as rbuilder's templates write them, with no rule of their own: the
    /// rules come from what each declares, the same as those their templates listed by hand
    /// (`deploy_image`, `plain`, `builtin` in src/commands/create_api/rules.rs).
    mod declared {
        use std::sync::Arc;

        use k8s_openapi::api::apps::v1::Deployment;
        use k8s_openapi::api::core::v1::Secret;
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
        use kube::runtime::controller::Action;
        use kube::{CustomResource, CustomResourceExt};
        use schemars::JsonSchema;
        use serde::{Deserialize, Serialize};

        use super::*;
        use crate::owned::Owns;
        use crate::{Context, Reconciler, register};

        #[derive(CustomResource, JsonSchema, Serialize, Deserialize, Clone, Debug)]
        #[kube(
            group = "devops.my.domain",
            version = "v1",
            kind = "Service1",
            namespaced
        )]
        struct Service1Spec {}

        /// A deploy-image controller: a finalizer, a Deployment owned.
        struct Images;

        impl Reconciler for Images {
            type Resource = Service1;
            type Error = kube::Error;
            const NAME: &'static str = "images";
            const FINALIZER: Option<&'static str> = Some("devops.my.domain/finalizer");

            async fn apply(_: Arc<Service1>, _: Arc<Context>) -> Result<Action, kube::Error> {
                Ok(Action::await_change())
            }

            fn owns() -> Owns<Service1> {
                Owns::kind::<Deployment>()
            }
        }

        /// A plain controller of the same kind: no finalizer, nothing owned.
        struct Plain;

        impl Reconciler for Plain {
            type Resource = Service1;
            type Error = kube::Error;
            const NAME: &'static str = "plain";
            const FINALIZER: Option<&'static str> = None;

            async fn apply(_: Arc<Service1>, _: Arc<Context>) -> Result<Action, kube::Error> {
                Ok(Action::await_change())
            }
        }

        /// A controller of a built-in kind, with a rule of the user's own.
        struct Secrets;

        impl Reconciler for Secrets {
            type Resource = Secret;
            type Error = kube::Error;
            const NAME: &'static str = "secrets";
            const FINALIZER: Option<&'static str> = None;

            async fn apply(_: Arc<Secret>, _: Arc<Context>) -> Result<Action, kube::Error> {
                Ok(Action::await_change())
            }

            fn rbac_rules() -> Vec<PolicyRule> {
                vec![policy_rule("", &["configmaps"], &["get"])]
            }
        }

        fn crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
            Ok(vec![Service1::crd()])
        }

        static IMAGES: Operator = Operator::new("x")
            .controllers(&[register::<Images>()])
            .crds(crds);
        static PLAIN: Operator = Operator::new("x")
            .controllers(&[register::<Plain>()])
            .crds(crds);
        static SECRETS: Operator = Operator::new("x").controllers(&[register::<Secrets>()]);

        fn without_the_runtimes(operator: &Operator) -> Vec<PolicyRule> {
            let mut rules = merged(operator).expect("the rules");
            let runtime = runtime_rules();
            rules.retain(|rule| !runtime.contains(rule));
            rules
        }

        #[test]
        fn a_deploy_image_controller_needs_its_kind_status_finalizers_and_deployments() {
            let group = "devops.my.domain";
            assert_eq!(
                without_the_runtimes(&IMAGES),
                merge(vec![
                    policy_rule(group, &["service1s"], &["get", "list", "watch", "patch"]),
                    policy_rule(group, &["service1s/status"], &["patch"]),
                    policy_rule(group, &["service1s/finalizers"], &["update"]),
                    policy_rule("apps", &["deployments"], OWNED_VERBS),
                ])
            );
        }

        #[test]
        fn a_plain_controller_of_its_own_kind_needs_the_same_but_deployments() {
            let group = "devops.my.domain";
            assert_eq!(
                without_the_runtimes(&PLAIN),
                merge(vec![
                    policy_rule(group, &["service1s"], &["get", "list", "watch", "patch"]),
                    policy_rule(group, &["service1s/status"], &["patch"]),
                    policy_rule(group, &["service1s/finalizers"], &["update"]),
                ])
            );
        }

        #[test]
        fn a_controller_of_a_built_in_kind_watches_it_and_adds_its_own_rules() {
            assert_eq!(
                without_the_runtimes(&SECRETS),
                merge(vec![
                    policy_rule("", &["secrets"], &["get", "list", "watch"]),
                    policy_rule("", &["configmaps"], &["get"]),
                ])
            );
        }
    }
}
