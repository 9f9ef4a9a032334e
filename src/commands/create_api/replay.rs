//! A resource of a PROJECT being replayed (`alpha generate`, `update`, a migrated kubebuilder
//! project), as `create api` adds it: its record taken from PROJECT as it is, without flags.

use std::path::Path;

use anyhow::{Context as _, Result, bail};
use serde_json::Value;

use super::Request;
use crate::external;
use crate::external::own::{self, OwnTypes};
use crate::model::ControllerName;
use crate::project::{Project, ResourceEntry};

/// What `create api` adds to replay `entry` of `project`, read from the folder `input` (an
/// external resource's CRD file is relative to it).
pub fn request(input: &Path, project: &Project, entry: &ResourceEntry) -> Result<Request> {
    let mut record = project.record_of(entry);
    // The webhooks are `create webhook`'s, replayed after every API; an entry written before
    // plurals were recorded gets its plural, as `create api` records it today.
    record.entry.webhooks = None;
    record.entry.plural = Some(entry.plural_or_derived()?);
    // The kind's second controllers are replayed once every API is (`second_controller`).
    record.entry.controllers.truncate(1);
    let external = if entry.external {
        Some(external_types(input, entry)?)
    } else {
        None
    };
    Ok(Request {
        record,
        external,
        own: own_types(input, entry)?,
        adds_resource: !entry.is_builtin(),
        force: false,
        second_controller: None,
    })
}

/// What `create api --controller-name name` adds to replay the second controller `name` of
/// `entry` (of the project read from `input`) in `project`, the replay so far.
pub fn second_controller(
    input: &Path,
    project: &Project,
    entry: &ResourceEntry,
    name: &ControllerName,
) -> Result<Request> {
    let Some(replayed) = project.find(&entry.group, &entry.version, &entry.kind) else {
        bail!(
            "{} has a controller named {name}, but no controller of its own",
            entry.kind
        );
    };
    let mut request = super::second::adding(project, replayed, name.clone())?;
    if entry.external {
        request.external = Some(external_types(input, entry)?);
    }
    request.own = own_types(input, entry)?;
    Ok(request)
}

/// The types of the external resource `entry`, translated again from its CRD file (its PROJECT
/// path, relative to the folder `input`).
pub fn external_types(input: &Path, entry: &ResourceEntry) -> Result<external::External> {
    let (kind, version) = (&entry.kind, &entry.version);
    let path = match entry.path.as_deref() {
        Some("-") => bail!(
            "the CRD of {kind} was read from stdin (path: - in PROJECT), which cannot be read \
             again; save the CRD to a file in the project and set its path in PROJECT"
        ),
        Some(path) => path,
        None => bail!(
            "{kind} is an external resource without the path of its CRD in PROJECT; set `path` \
             to the CRD file its types were generated from"
        ),
    };
    let text = external::read(&input.join(path).display().to_string())?;
    let wanted = external::Wanted {
        group: entry.group.as_ref(),
        domain: Some(&entry.domain),
        version: version.as_ref(),
        kind: kind.as_str(),
    };
    external::generate(&text, path, &wanted, path)
}

/// The types of `entry`, one of the project's own kinds, if they are made from a CRD (a kind
/// migrated from kubebuilder: PROJECT's `path`, relative to the folder `input`).
pub fn own_types(input: &Path, entry: &ResourceEntry) -> Result<Option<OwnTypes>> {
    let Some(path) = entry.path.as_deref().filter(|_| entry.types_from_crd()) else {
        return Ok(None);
    };
    let (kind, version) = (&entry.kind, &entry.version);
    let full = input.join(path);
    let text = std::fs::read_to_string(&full).with_context(|| {
        format!(
            "cannot read {}, the CRD the types of {kind} are made from (its `path` in PROJECT)",
            full.display()
        )
    })?;
    let documents: Vec<Option<Value>> = serde_saphyr::from_multiple(&text).map_err(|e| {
        anyhow::anyhow!(
            "{path}, the CRD of {kind}, is not YAML ({})",
            crate::project::yaml_error(&e)
        )
    })?;
    let api_group = entry.api_group();
    let Some(crd) = documents.iter().flatten().find(|doc| {
        doc["kind"] == "CustomResourceDefinition"
            && doc["spec"]["group"] == api_group.as_str()
            && doc["spec"]["names"]["kind"] == kind.as_str()
    }) else {
        bail!(
            "{path} holds no CRD of kind {kind} in group {api_group}, which PROJECT makes its types from"
        );
    };
    own::types(crd, version.as_ref(), path).map(Some)
}
