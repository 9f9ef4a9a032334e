//! Where the user's `values.yaml` no longer says what `config/` says. values.yaml is the
//! user's, so `make helm` never changes it; it points out the differences instead, because
//! the chart installs what values.yaml says and `make deploy` what config/ says.

use anyhow::Context as _;
use serde_json::Value;

use super::CHART;
use super::convert::{CHART_FLAGS, flag, manager_container, manager_deployment};

/// The top-level keys the templates read; a missing one fails `helm install` with a nil
/// pointer, so it is named beforehand.
const KEYS: &[&str] = &[
    "manager",
    "rbac",
    "serviceAccount",
    "crd",
    "metrics",
    "certManager",
    "webhook",
    "prometheus",
    "networkPolicy",
];

/// A note for each setting of `values` (the text of values.yaml) that differs from what
/// `rendered` (config/default, rendered) sets.
pub fn notes(values: &str, rendered: &str) -> anyhow::Result<Vec<String>> {
    let values: Value = serde_saphyr::from_str(values)
        .with_context(|| format!("{CHART}/values.yaml is not valid YAML"))?;
    let objects: Vec<Value> = serde_saphyr::from_multiple(rendered)
        .context("the rendered manifests on stdin are not valid YAML")?;
    let mut notes = Vec::new();
    for key in KEYS {
        if !values[key].is_object() {
            notes.push(format!(
                "values.yaml has no `{key}:` section, which the templates read: add it (`rbuilder \
                 edit --plugins helm/v2-alpha --force` writes a values.yaml that has it)"
            ));
        }
    }
    let Some(deployment) = manager_deployment(&objects) else {
        return Ok(notes);
    };
    let manager = &values["manager"];
    let pod = &deployment["spec"]["template"]["spec"];
    let container = manager_container(deployment)
        .map(|i| &pod["containers"][i])
        .unwrap_or(&Value::Null);

    let same = |config: &Value, value: &Value| {
        // An unset value and an absent field mean the same.
        config == value || (config.is_null() && value.as_object().is_some_and(|m| m.is_empty()))
    };
    for (key, config) in [
        ("replicas", &deployment["spec"]["replicas"]),
        ("resources", &container["resources"]),
        ("securityContext", &container["securityContext"]),
        ("podSecurityContext", &pod["securityContext"]),
        (
            "terminationGracePeriodSeconds",
            &pod["terminationGracePeriodSeconds"],
        ),
    ] {
        if !same(config, &manager[key]) {
            notes.push(format!(
                "values.yaml's manager.{key} ({}) differs from config/'s ({}): the chart \
                 installs values.yaml's",
                manager[key], config
            ));
        }
    }

    let wanted: Vec<&str> = manager["args"]
        .as_array()
        .map(|args| args.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for arg in container["args"].as_array().into_iter().flatten() {
        let Some(arg) = arg.as_str() else { continue };
        if !CHART_FLAGS.contains(&flag(arg)) && !wanted.contains(&arg) {
            notes.push(format!(
                "config/ passes the manager {arg}, which values.yaml's manager.args does not: \
                 add it there for the chart to pass it"
            ));
        }
    }

    let has_webhooks = objects.iter().any(|o| {
        o["kind"]
            .as_str()
            .is_some_and(|k| k.ends_with("WebhookConfiguration"))
    });
    if has_webhooks && values["webhook"]["enabled"] != true {
        notes.push(
            "config/default has webhooks, but values.yaml's webhook.enabled is not true: the \
             chart installs them only with it (and with certManager.enabled, for their \
             certificate)"
                .into(),
        );
    }
    Ok(notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RENDERED: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: \
                            op-controller-manager\n  labels:\n    control-plane: \
                            controller-manager\nspec:\n  replicas: 1\n  template:\n    spec:\n      \
                            securityContext:\n        runAsNonRoot: true\n      containers:\n      \
                            - name: manager\n        args: [--leader-elect, --metrics-bind-address=:8443, \
                            --zap-devel]\n        resources:\n          limits:\n            cpu: \
                            500m\n---\nkind: ValidatingWebhookConfiguration\napiVersion: \
                            admissionregistration.k8s.io/v1\nmetadata:\n  name: x\n";

    #[test]
    fn differences_from_config_are_noted() {
        let values = "manager:\n  replicas: 1\n  args: [--leader-elect]\n  resources:\n    \
                      limits:\n      cpu: 1\n  podSecurityContext:\n    runAsNonRoot: true\n\
                      webhook:\n  enabled: false\n";
        let notes = notes(values, RENDERED).unwrap();
        let text = notes.join("\n");
        for expected in [
            "no `rbac:` section",
            "manager.resources ({\"limits\":{\"cpu\":1}}) differs",
            "passes the manager --zap-devel",
            "webhook.enabled is not true",
        ] {
            assert!(text.contains(expected), "{expected} not in:\n{text}");
        }
        assert!(!text.contains("--leader-elect"), "{text}");
        assert!(!text.contains("--metrics-bind-address"), "{text}");
        assert!(!text.contains("podSecurityContext"), "{text}");
        assert!(
            !text.contains("securityContext ("),
            "an unset one is the same: {text}"
        );
    }
}
