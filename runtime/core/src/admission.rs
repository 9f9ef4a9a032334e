//! The webhook configurations and a CRD's conversion as plain data: where the API server calls
//! each webhook, under which name, and for which objects, by the operator's scope. The
//! `manifests` binary writes `config/webhook/manifests.yaml` and the CRDs' `conversion` with
//! it (see `manifests`).
//!
//! Like `role.rs`, this file uses only std and serde_json, on purpose: rbuilder compiles this
//! very file into itself (a `#[path]` module, next to `role`) to write the same files when it
//! scaffolds, so that the scope rules have one implementation.

use serde_json::{Value, json};

use super::role::MANAGER_NAMESPACE;

/// Where the webhook configurations are written, from the project's root.
pub const WEBHOOK_MANIFESTS: &str = "config/webhook/manifests.yaml";

/// The Service the API server calls webhooks through (config/webhook/service.yaml), before
/// kustomize gives it the project's namespace and name prefix.
pub const SERVICE: (&str, &str) = ("webhook-service", MANAGER_NAMESPACE);

/// The webhook server's path for conversions.
pub const CONVERT_PATH: &str = "/convert";

/// Where an admission webhook without a custom path is served, as controller-runtime does:
/// `/mutate-<group with dashes>-<version>-<kind>`, `/validate-...`.
pub fn default_path(mutating: bool, group: &str, version: &str, kind: &str) -> String {
    let prefix = if mutating { "mutate" } else { "validate" };
    let group = group.replace('.', "-");
    format!("/{prefix}-{group}-{version}-{}", kind.to_lowercase())
}

/// A webhook's name in its configuration, as kubebuilder names them (a DNS subdomain with at
/// least three segments): `mdemomicroservice-v1.kb.io`; `letter` is `m` (defaulting), `v`
/// (validating) or `c` (conversion).
pub fn name(letter: &str, kind: &str, version: &str) -> String {
    format!("{letter}{}-{version}.kb.io", kind.to_lowercase())
}

/// One admission webhook, as its configuration describes it.
pub struct Admission<'a> {
    /// `true`: defaulting (mutating); `false`: validating.
    pub mutating: bool,
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub plural: &'a str,
    pub path: String,
    /// The operations the API server sends it.
    pub operations: Vec<String>,
    /// Whether the kind is one of the operator's CRDs; a webhook for another type (a Pod) is
    /// kept away from the manager's own objects.
    pub own: bool,
}

impl Admission<'_> {
    pub fn name(&self) -> String {
        let letter = if self.mutating { "m" } else { "v" };
        name(letter, self.kind, self.version)
    }

    /// Its entry in its configuration, seeing the objects the operator's scope allows
    /// (`namespaced`: the operator is scoped to its namespace).
    fn entry(&self, namespaced: bool) -> Value {
        let mut entry = json!({
            "admissionReviewVersions": ["v1"],
            "clientConfig": {
                "service": {"name": SERVICE.0, "namespace": SERVICE.1, "path": self.path},
            },
            "failurePolicy": "Fail",
            "name": self.name(),
            "rules": [{
                "apiGroups": [self.group],
                "apiVersions": [self.version],
                "operations": self.operations,
                "resources": [self.plural],
            }],
            "sideEffects": "None",
        });
        if self.own {
            scope_own_kind(&mut entry, namespaced);
        } else {
            scope_kubernetes_type(&mut entry, namespaced);
        }
        entry
    }
}

/// The Mutating- and ValidatingWebhookConfiguration of `webhooks`, as controller-gen writes
/// them, webhooks sorted by name (so that the order they were listed in does not matter); none
/// without admission webhooks.
pub fn configurations(webhooks: &[Admission], namespaced: bool) -> Vec<Value> {
    let mut documents = Vec::new();
    for (mutating, kind, name) in [
        (
            true,
            "MutatingWebhookConfiguration",
            "mutating-webhook-configuration",
        ),
        (
            false,
            "ValidatingWebhookConfiguration",
            "validating-webhook-configuration",
        ),
    ] {
        let mut entries: Vec<Value> = webhooks
            .iter()
            .filter(|w| w.mutating == mutating)
            .map(|w| w.entry(namespaced))
            .collect();
        if entries.is_empty() {
            continue;
        }
        entries.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        documents.push(json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name},
            "webhooks": entries,
        }));
    }
    documents
}

/// A CRD's `conversion` through the webhook server's [`CONVERT_PATH`].
pub fn conversion() -> Value {
    json!({
        "strategy": "Webhook",
        "webhook": {
            "clientConfig": {
                "service": {"name": SERVICE.0, "namespace": SERVICE.1, "path": CONVERT_PATH},
            },
            "conversionReviewVersions": ["v1"],
        },
    })
}

/// Keeps the webhook of one of the operator's own kinds to the objects the operator works on:
/// those of its namespace, for an operator scoped to it (each installation of it, in a
/// namespace of its own, sees its own objects only); all, for an operator of the whole cluster.
fn scope_own_kind(webhook: &mut Value, namespaced: bool) {
    if namespaced {
        webhook["namespaceSelector"] = in_namespaces("In", &[SERVICE.1]);
    }
}

/// A namespaceSelector by the namespaces' names.
fn in_namespaces(operator: &str, values: &[&str]) -> Value {
    json!({"matchExpressions": [{
        "key": "kubernetes.io/metadata.name",
        "operator": operator,
        "values": values,
    }]})
}

/// Keeps the webhook of a type the project does not define (a Pod, a Deployment) away from the
/// manager's own objects. Such a webhook fails closed: while the manager is down, no Pod it
/// sees could be created, the manager's replacement included, and it would never come back.
/// An operator of the whole cluster leaves out its own namespace (`system` until
/// config/default's replacements name it), kube-system (the cluster's add-ons) and
/// kube-node-lease (the nodes' heartbeats, whose loss makes nodes NotReady); one scoped
/// to its namespace looks there only, and leaves out the manager's objects by their
/// `control-plane` label.
fn scope_kubernetes_type(webhook: &mut Value, namespaced: bool) {
    if namespaced {
        webhook["namespaceSelector"] = in_namespaces("In", &[SERVICE.1]);
        webhook["objectSelector"] = json!({"matchExpressions": [{
            "key": "control-plane",
            "operator": "NotIn",
            "values": ["controller-manager"],
        }]});
    } else {
        webhook["namespaceSelector"] =
            in_namespaces("NotIn", &[SERVICE.1, "kube-system", "kube-node-lease"]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod_webhook(mutating: bool) -> Admission<'static> {
        Admission {
            mutating,
            group: "",
            version: "v1",
            kind: "Pod",
            plural: "pods",
            path: default_path(mutating, "", "v1", "Pod"),
            operations: vec!["CREATE".into(), "UPDATE".into()],
            own: false,
        }
    }

    #[test]
    fn webhooks_are_named_and_served_as_kubebuilder_does() {
        let path = default_path(true, "devops.my.domain", "v1", "DemoMicroService");
        assert_eq!(path, "/mutate-devops-my-domain-v1-demomicroservice");
        assert_eq!(pod_webhook(false).name(), "vpod-v1.kb.io");
    }

    #[test]
    fn a_kubernetes_types_webhook_spares_the_managers_objects_in_either_scope() {
        let cluster = configurations(&[pod_webhook(true)], false);
        let webhook = &cluster[0]["webhooks"][0];
        let spared = &webhook["namespaceSelector"]["matchExpressions"][0];
        assert_eq!(spared["operator"], "NotIn");
        assert_eq!(spared["values"][0], MANAGER_NAMESPACE);
        assert!(webhook.get("objectSelector").is_none());

        let namespaced = configurations(&[pod_webhook(true), pod_webhook(false)], true);
        assert_eq!(namespaced.len(), 2);
        let webhook = &namespaced[1]["webhooks"][0];
        assert_eq!(
            webhook["namespaceSelector"]["matchExpressions"][0]["operator"],
            "In"
        );
        assert_eq!(
            webhook["objectSelector"]["matchExpressions"][0]["operator"],
            "NotIn"
        );
    }

    #[test]
    fn an_own_kinds_webhook_sees_all_of_a_cluster() {
        let own = Admission {
            own: true,
            ..pod_webhook(false)
        };
        let cluster = configurations(&[own], false);
        assert!(cluster[0]["webhooks"][0].get("namespaceSelector").is_none());
        assert!(configurations(&[], true).is_empty());
    }
}
