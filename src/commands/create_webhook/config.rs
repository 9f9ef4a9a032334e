//! The webhook configurations and the kustomize files that deploy them.

use anyhow::{Result, bail};

use super::WEBHOOK_MANIFESTS;
use crate::manifests::{AdmissionWebhook, crd_with_conversion, webhook_configurations};
use crate::model::Resource;
use crate::project::{Project, ResourceEntry, WebhooksEntry};
use crate::scaffold::{Additions, Entry, IfExists, Order, Plan, Templates, paths};

/// The webhook configurations, and the conversion of the kind's CRD, as `make manifests` writes
/// them from the code.
pub(super) fn plan_manifests(
    plan: &mut Plan,
    project: &Project,
    r: &Resource,
    conversion: bool,
) -> Result<()> {
    plan_webhook_configurations(plan, project)?;
    if conversion {
        let file = r.crd_file();
        plan.update(file.clone(), |crd| crd_with_conversion(crd, &file))?;
    }
    Ok(())
}

/// config/webhook/manifests.yaml as `make manifests` writes it from the code of `project`'s
/// webhooks (and its scope, which decides what a built-in type's webhooks see).
pub(in crate::commands) fn plan_webhook_configurations(
    plan: &mut Plan,
    project: &Project,
) -> Result<()> {
    let entries: Vec<(&ResourceEntry, &WebhooksEntry, String, String)> = with_webhooks(project)
        .map(|(e, w)| Ok((e, w, e.api_group(), e.plural_or_derived()?.to_string())))
        .collect::<Result<_>>()?;
    let mut webhooks = Vec::new();
    for (entry, w, api_group, plural) in &entries {
        for (wanted, mutating, custom_path) in [
            (w.defaulting, true, &w.defaulting_path),
            (w.validation, false, &w.validation_path),
        ] {
            if wanted {
                webhooks.push(AdmissionWebhook {
                    mutating,
                    api_group,
                    version: entry.version.as_ref(),
                    kind: entry.kind.as_ref(),
                    plural,
                    own: !entry.is_builtin(),
                    custom_path: custom_path.as_deref(),
                });
            }
        }
    }
    if plan.exists(WEBHOOK_MANIFESTS) {
        plan.update(WEBHOOK_MANIFESTS.to_owned(), |previous| {
            let yaml = webhook_configurations(&webhooks, project.namespaced, Some(previous))?;
            Ok(yaml.unwrap_or_else(|| previous.to_owned()))
        })?;
    } else if let Some(yaml) = webhook_configurations(&webhooks, project.namespaced, None)? {
        plan.create(WEBHOOK_MANIFESTS.to_owned(), yaml)?;
    }
    Ok(())
}

/// The kustomize files that deploy the webhooks, written once, and enabled in
/// config/default as kubebuilder's `create webhook` does: it uncomments the [WEBHOOK] sections.
pub(super) fn plan_kustomize(
    plan: &mut Plan,
    templates: &Templates,
    ctx: &mut tera::Context,
    project: &Project,
) -> Result<()> {
    plan_webhook_kustomization(plan, templates, ctx, project)?;
    // Written by the project's first webhook, the user's after that.
    let mut add = Additions::new(Order::EachFileWithItsInserts);
    for (template, path) in [
        (
            "kustomizeconfig.yaml",
            "config/webhook/kustomizeconfig.yaml",
        ),
        ("service.yaml", "config/webhook/service.yaml"),
        (
            "certificate-webhook.yaml",
            "config/certmanager/certificate-webhook.yaml",
        ),
        ("manager_webhook_patch.yaml", paths::MANAGER_WEBHOOK_PATCH),
        (
            "allow-webhook-traffic.yaml",
            "config/network-policy/allow-webhook-traffic.yaml",
        ),
    ] {
        let template = format!("webhook/config/{template}");
        add.add(Entry::template(path, template, IfExists::Keep));
    }
    add.plan(plan, templates, ctx, false)?;
    plan_replacements(plan, templates, ctx, project)?;

    plan.update(paths::DEFAULT_KUSTOMIZATION.to_owned(), |text| {
        let mut text = text.to_owned();
        // `make manifests` may have started a list of replacements already (the manager's
        // Roles in the other namespaces it watches): the webhook's joins it.
        let replacements = match text.lines().any(|line| line == "replacements:") {
            true => "#- path: webhook_replacements.yaml\n",
            false => "#replacements:\n#- path: webhook_replacements.yaml\n",
        };
        for block in [
            "#- ../certmanager\n",
            "#- ../webhook\n",
            "#patches:\n",
            "#- path: manager_webhook_patch.yaml\n#  target:\n#    kind: Deployment\n#    name: controller-manager\n",
            replacements,
        ] {
            let enabled = block.replace("\n#", "\n").trim_start_matches('#').to_owned();
            text = text.replacen(block, &enabled, 1);
        }
        Ok(text)
    })?;
    for (file, after, line) in [
        (
            "config/certmanager/kustomization.yaml",
            "- certificate-metrics.yaml\n",
            "- certificate-webhook.yaml\n",
        ),
        (
            "config/network-policy/kustomization.yaml",
            "- allow-metrics-traffic.yaml\n",
            "- allow-webhook-traffic.yaml\n",
        ),
    ] {
        plan.update(file.to_owned(), |text| {
            if text.contains(line) {
                return Ok(text.to_owned());
            }
            match text.find(after) {
                Some(at) => {
                    let at = at + after.len();
                    Ok(format!("{}{line}{}", &text[..at], &text[at..]))
                }
                None => Ok(format!("{text}{line}")),
            }
        })?;
    }
    Ok(())
}

/// config/webhook/kustomization.yaml, which lists what `make manifests` writes there.
const WEBHOOK_KUSTOMIZATION: &str = "config/webhook/kustomization.yaml";

/// [`WEBHOOK_KUSTOMIZATION`]: the webhook Service, and the admission webhooks' configurations
/// (manifests.yaml) once the project has any. `make manifests` writes that file for defaulting
/// and validating webhooks only, so listing it in a project whose webhooks all convert would
/// make kustomize fail on a file that never comes.
fn plan_webhook_kustomization(
    plan: &mut Plan,
    templates: &Templates,
    ctx: &mut tera::Context,
    project: &Project,
) -> Result<()> {
    let admission = with_webhooks(project).any(|(_, w)| w.defaulting || w.validation);
    ctx.insert("admission", &admission);
    let text = templates.render("webhook/config/kustomization.yaml", ctx)?;
    if !plan.exists(WEBHOOK_KUSTOMIZATION) {
        return plan.create(WEBHOOK_KUSTOMIZATION.to_owned(), text);
    }
    if !admission {
        return Ok(());
    }
    // The first admission webhook of a project that had only conversions.
    ctx.insert("admission", &false);
    let conversions_only = templates.render("webhook/config/kustomization.yaml", ctx)?;
    plan.update(WEBHOOK_KUSTOMIZATION.to_owned(), |current| {
        let manifests = "- manifests.yaml\n";
        if current.lines().any(|line| line.trim() == manifests.trim()) {
            Ok(current.to_owned())
        } else if current == conversions_only {
            Ok(text)
        } else if let Some(at) = current.find("resources:\n") {
            // Changed by hand since: the line joins its resources, the rest stays.
            let at = at + "resources:\n".len();
            Ok(format!("{}{manifests}{}", &current[..at], &current[at..]))
        } else {
            bail!(
                "{WEBHOOK_KUSTOMIZATION} has no `resources:` list to add manifests.yaml (the \
                 webhook configurations) to; add `resources:` with `- manifests.yaml` and \
                 `- service.yaml` to it, then create the webhook again"
            )
        }
    })
}

/// Where config/default says what kustomize fills in: the webhooks' CA, the Certificate's DNS
/// names, the manager's namespace in the webhooks' selectors (and names).
pub(in crate::commands) const REPLACEMENTS: &str = "config/default/webhook_replacements.yaml";

/// Writes [`REPLACEMENTS`] for `project`'s webhooks and scope.
pub(in crate::commands) fn plan_replacements(
    plan: &mut Plan,
    templates: &Templates,
    ctx: &mut tera::Context,
    project: &Project,
) -> Result<()> {
    // What the CA is injected into, and which configurations have webhooks whose
    // namespaceSelector names the manager's namespace (for built-in types, and all of a
    // namespaced operator's).
    let mut configurations = Vec::new();
    let mut selecting = Vec::new();
    for (kind, mutating) in [
        ("MutatingWebhookConfiguration", true),
        ("ValidatingWebhookConfiguration", false),
    ] {
        let wanted = |w: &WebhooksEntry| if mutating { w.defaulting } else { w.validation };
        if with_webhooks(project).any(|(_, w)| wanted(w)) {
            configurations.push(kind);
        }
        // A namespaced operator's webhooks all look at its namespace only.
        let selects = |e: &ResourceEntry| e.is_builtin() || project.namespaced;
        if with_webhooks(project).any(|(e, w)| wanted(w) && selects(e)) {
            selecting.push(kind);
        }
    }
    let mut crds = Vec::new();
    for e in project.custom_resources() {
        if e.webhooks.as_ref().is_some_and(|w| w.conversion) {
            let plural = e.plural_or_derived()?;
            crds.push(format!("{plural}.{}.{}", e.group, project.domain));
        }
    }
    ctx.insert("configurations", &configurations);
    ctx.insert("selecting", &selecting);
    ctx.insert("namespaced", &project.namespaced);
    ctx.insert("crds", &crds);
    let replacements = templates.render("webhook/config/webhook_replacements.yaml", ctx)?;
    if plan.exists(REPLACEMENTS) {
        plan.update(REPLACEMENTS.to_owned(), |_| Ok(replacements))?;
    } else {
        plan.create(REPLACEMENTS.to_owned(), replacements)?;
    }
    Ok(())
}

/// The project's resources with webhooks, and those webhooks: its own kinds' and built-in
/// types' (external kinds have none).
fn with_webhooks(project: &Project) -> impl Iterator<Item = (&ResourceEntry, &WebhooksEntry)> {
    project
        .resources
        .iter()
        .filter_map(|e| e.webhooks.as_ref().map(|w| (e, w)))
}
