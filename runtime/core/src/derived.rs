//! What an operator's code describes for the API server besides its controllers: the
//! CustomResourceDefinitions of its kinds and the configurations of its admission webhooks.
//! The `manifests` binary writes them (rbuilder-manifests), envtest installs them
//! (rbuilder-testing): both read them here, so that a test installs what `make manifests`
//! writes.

use anyhow::Context as _;
use serde_json::Value;

use crate::admission::{self, Admission};
use crate::operator::{Operator, WatchScope};
use crate::webhook::WebhookType;

/// The CustomResourceDefinitions of the operator's kinds, each converted through the webhook
/// server's `/convert` if its kind has a conversion webhook.
pub fn crds(operator: &Operator) -> anyhow::Result<Vec<Value>> {
    let crds = (operator.parts().crds)().context("cannot merge the CRD versions")?;
    let mut values = Vec::new();
    for crd in crds {
        let mut crd = serde_json::to_value(&crd).context("cannot serialize a CRD")?;
        if converts(operator, &crd) {
            crd["spec"]["conversion"] = admission::conversion();
        }
        values.push(crd);
    }
    Ok(values)
}

/// Whether `crd`'s kind has a conversion webhook.
fn converts(operator: &Operator, crd: &Value) -> bool {
    operator.parts().webhooks.iter().any(|webhook| {
        let hub = (webhook.resource)();
        webhook.webhook_type == WebhookType::Conversion
            && crd["spec"]["group"] == hub.group.as_str()
            && crd["spec"]["names"]["kind"] == hub.kind.as_str()
    })
}

/// The Mutating- and ValidatingWebhookConfiguration of the admission webhooks, as
/// controller-gen writes them (none without admission webhooks). Webhooks for the operator's
/// own kinds and for others' are told apart by the operator's CRDs; which objects each sees is
/// [`admission`]'s, which rbuilder runs too when it scaffolds.
pub fn webhook_configurations(operator: &Operator) -> anyhow::Result<Vec<Value>> {
    let crds = (operator.parts().crds)().context("cannot merge the CRD versions")?;
    let own_kinds: Vec<(String, String)> = crds
        .iter()
        .map(|crd| (crd.spec.group.clone(), crd.spec.names.kind.clone()))
        .collect();
    let resources: Vec<_> = operator
        .parts()
        .webhooks
        .iter()
        .filter(|w| w.webhook_type != WebhookType::Conversion)
        .map(|w| (w, (w.resource)()))
        .collect();
    let webhooks: Vec<Admission> = resources
        .iter()
        .map(|(w, r)| Admission {
            mutating: w.webhook_type == WebhookType::Defaulting,
            group: &r.group,
            version: &r.version,
            kind: &r.kind,
            plural: &r.plural,
            path: w.path(),
            operations: w.operations.iter().map(|o| o.to_string()).collect(),
            own: own_kinds.contains(&(r.group.clone(), r.kind.clone())),
        })
        .collect();
    let namespaced = operator.parts().scope == WatchScope::Namespace;
    Ok(admission::configurations(&webhooks, namespaced))
}
