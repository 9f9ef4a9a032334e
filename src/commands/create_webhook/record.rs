//! The PROJECT entry's `webhooks:`.

use super::Request;
use crate::project::{Project, WebhooksEntry};

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
    if !request.spokes.is_empty() {
        webhooks.conversion = true;
        for spoke in &request.spokes {
            if !webhooks.spoke.contains(spoke) {
                webhooks.spoke.push(spoke.clone());
            }
        }
    }
}
