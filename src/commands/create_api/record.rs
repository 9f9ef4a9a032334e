//! Recording a scaffolded resource in PROJECT, as kubebuilder does: its entry, and the
//! deploy-image options of its controller.

use crate::project::{DeployImageEntry, DeployImagePlugin, Project, Record, ResourceEntry};

/// Records `added` in `project` (replacing its entry under --force).
pub fn record(project: &mut Project, added: Record) {
    let Record {
        entry,
        deploy_image,
    } = added;
    let (group, version, kind) = (
        entry.group.clone(),
        entry.version.clone(),
        entry.kind.clone(),
    );
    let existing = project
        .resources
        .iter_mut()
        .find(|e| e.is(&group, &version, &kind));
    match existing {
        Some(old) => {
            // --resource=false on an existing resource keeps its API; --controller adds one.
            // Its named controllers stay: --force rewrites the kind's own files only.
            let (api, webhooks) = (old.api.clone(), old.webhooks.clone());
            let controllers = if old.controllers.is_empty() {
                entry.controllers.clone()
            } else {
                old.controllers.clone()
            };
            *old = ResourceEntry {
                api: entry.api.or(api),
                controller: old.controller || entry.controller,
                controllers,
                webhooks,
                ..entry
            };
        }
        None => project.resources.push(entry),
    }
    // The deploy-image entry describes the resource's current controller: --force without
    // --image drops it, with --image replaces it.
    if let Some(plugin) = &mut project.plugins.deploy_image {
        plugin
            .resources
            .retain(|e| !(e.group == group && e.version == version && e.kind == kind));
    }
    if let Some(options) = deploy_image {
        let plugin = project
            .plugins
            .deploy_image
            .get_or_insert_with(DeployImagePlugin::default);
        plugin.resources.push(DeployImageEntry {
            domain: project.domain.to_string(),
            group,
            kind,
            options,
            version,
        });
    }
    if project
        .plugins
        .deploy_image
        .as_ref()
        .is_some_and(|plugin| plugin.resources.is_empty())
    {
        project.plugins.deploy_image = None;
    }
}
