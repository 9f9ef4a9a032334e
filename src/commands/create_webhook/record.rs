//! The PROJECT entry's `webhooks:`, and a built-in type's entry.

use anyhow::Result;

use super::Request;
use crate::model::builtin::Builtin;
use crate::project::{Project, ResourceEntry, WebhooksEntry};

/// A built-in type gets webhooks whether or not the project has a controller for it: its
/// PROJECT entry, without a controller, is made here if need be, as kubebuilder makes it.
pub(super) fn add_builtin_entry(
    project: &mut Project,
    request: &Request,
    b: &Builtin,
) -> Result<()> {
    if project
        .find(&request.group, &request.version, &request.kind)
        .is_some()
    {
        return Ok(());
    }
    project.resources.push(ResourceEntry::of_builtin(b, false)?);
    Ok(())
}

/// Records the webhooks in the resource's PROJECT entry, as kubebuilder does.
pub(super) fn record(project: &mut Project, request: &Request) {
    let Some(entry) = project
        .resources
        .iter_mut()
        .find(|e| e.is(&request.group, &request.version, &request.kind))
    else {
        return;
    };
    let webhooks = entry.webhooks.get_or_insert_with(|| WebhooksEntry {
        webhook_version: "v1".into(),
        ..WebhooksEntry::default()
    });
    webhooks.defaulting |= request.defaulting;
    webhooks.validation |= request.validation;
    let (defaulting_path, validation_path) = super::paths(request, webhooks);
    webhooks.defaulting_path = defaulting_path;
    webhooks.validation_path = validation_path;
    if !request.spokes.is_empty() {
        webhooks.conversion = true;
        for spoke in &request.spokes {
            if !webhooks.spoke.contains(spoke) {
                webhooks.spoke.push(spoke.clone());
            }
        }
    }
}
