//! Recording a scaffolded resource in PROJECT, as kubebuilder does: its entry, and the
//! deploy-image options of its controller.

use crate::model::{Flavor, Resource};
use crate::project::{
    ApiEntry, BUILTIN_DOMAIN, DeployImageEntry, DeployImageOptions, DeployImagePlugin, Project,
    ResourceEntry,
};

/// Records `r` in `project` (replacing its entry under --force).
pub fn record(project: &mut Project, r: &Resource) {
    let entry = ResourceEntry {
        api: r.has_crd().then(|| ApiEntry {
            crd_version: "v1".into(),
            namespaced: r.namespaced,
        }),
        controller: r.controller,
        domain: match &r.flavor {
            Flavor::External { .. } => r.external_domain().to_owned(),
            _ if r.has_crd() => project.domain.to_string(),
            _ => BUILTIN_DOMAIN.into(),
        },
        external: matches!(r.flavor, Flavor::External { .. }),
        group: r.group.clone(),
        kind: r.kind.clone(),
        path: match &r.flavor {
            Flavor::External { path, .. } => Some(path.clone()),
            _ => None,
        },
        plural: Some(r.plural.clone()),
        short_names: r.short_names.clone(),
        version: r.version.clone(),
        webhooks: None,
    };
    let existing = project
        .resources
        .iter_mut()
        .find(|e| e.is(&r.group, &r.version, &r.kind));
    match existing {
        Some(old) => {
            // --resource=false on an existing resource keeps its API; --controller adds one.
            let (api, webhooks) = (old.api.clone(), old.webhooks.clone());
            *old = ResourceEntry {
                api: entry.api.or(api),
                controller: old.controller || entry.controller,
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
            .retain(|e| !r.is(&e.group, &e.version, &e.kind));
    }
    if let Flavor::DeployImage(d) = &r.flavor {
        let plugin = project
            .plugins
            .deploy_image
            .get_or_insert_with(DeployImagePlugin::default);
        plugin.resources.push(DeployImageEntry {
            domain: project.domain.to_string(),
            group: r.group.clone(),
            kind: r.kind.clone(),
            options: DeployImageOptions {
                image: d.image.clone(),
                container_command: (!d.command.is_empty()).then(|| d.command.join(",")),
                container_port: d.port,
                run_as_user: d.run_as_user,
            },
            version: r.version.clone(),
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
