//! A resource of a PROJECT being replayed (`alpha generate`, `update`, a migrated kubebuilder
//! project), as `create api` adds it: its record taken from PROJECT as it is, without flags.

use std::path::Path;

use anyhow::{Result, bail};

use super::Request;
use crate::external;
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
