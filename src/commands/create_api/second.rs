//! `create api --resource=false --controller-name NAME`: a second controller for a kind that
//! has its own, as kubebuilder 4.16 scaffolds one (its testdata's `Captain` has `captain` and
//! `captain-backup`). It gets a file of its own (`src/controller/<name>.rs`, with its unit
//! tests, and an integration test for one of the project's own kinds), its RBAC rules merged
//! into the manager's role, and its registration in `src/controller/mod.rs`; PROJECT records
//! it under the kind's `controllers`, as kubebuilder does.
//!
//! A second controller is a plain skeleton whatever the kind's own controller is (a
//! deploy-image kind's second controller runs no Deployment): its logic is the user's.

use std::path::Path;

use anyhow::{Result, bail};
use serde::Serialize;

use super::files;
use super::{Request, TEMPLATES, context, rules};
use crate::cli::CreateApiArgs;
use crate::model::layout;
use crate::model::rust_names::RustModule;
use crate::model::{ControllerName, GroupLayout, Kind, Resource, Version};
use crate::project::{self, Project, ResourceEntry};
use crate::scaffold::{Plan, Templates};

/// What the templates of a second controller read as `controller`.
#[derive(Serialize)]
struct Controller {
    /// `captain-backup` (multigroup `crew-captain-backup`): its name in logs and metrics.
    name: String,
    /// `captain_backup`: its module and file.
    module: RustModule,
    /// `CaptainBackupReconciler`.
    reconciler: String,
    /// `crew.my.domain/captain-backup`: a finalizer of its own, so that its cleanup runs
    /// whatever the kind's own controller does with its finalizer.
    finalizer: String,
}

/// The request for `args`, which add the second controller `name`.
pub fn request(project: &Project, args: &CreateApiArgs, name: ControllerName) -> Result<Request> {
    let version = Version::parse(&args.version)?;
    let kind = Kind::parse(&args.kind)?;
    let ignored = [
        ("--plural", args.plural.is_some()),
        ("--short-name", !args.short_names.is_empty()),
        ("--namespaced", args.namespaced.is_some()),
        (
            "--image",
            args.image.is_some()
                || args.plugins.is_some()
                || args.image_container_port.is_some()
                || args.image_container_command.is_some()
                || args.run_as_user.is_some(),
        ),
        ("--external-api-path", args.external_api_path.is_some()),
        ("--external-api-domain", args.external_api_domain.is_some()),
        ("--force", args.force),
    ];
    if let Some((flag, _)) = ignored.iter().find(|(_, given)| *given) {
        bail!(
            "{flag} does not apply with --controller-name {name}: a second controller takes its \
             kind as PROJECT records it, and writes only its own new files; drop {flag}"
        );
    }
    let same_kind = |e: &&ResourceEntry| {
        e.kind == kind && (e.group.display_name() == args.group || e.api_group() == args.group)
    };
    let entry = project
        .resources
        .iter()
        .filter(same_kind)
        .find(|e| e.version == version && e.controller);
    let Some(entry) = entry else {
        let create = format!(
            "rbuilder create api --group {} --version {version} --kind {kind}",
            args.group
        );
        if let Some(other) = project
            .resources
            .iter()
            .filter(same_kind)
            .find(|e| e.controller)
        {
            bail!(
                "{kind}'s controller is in version {}, and a second controller goes beside it: \
                 use --version {}",
                other.version,
                other.version
            );
        }
        bail!(
            "--controller-name {name} adds a second controller beside a kind's own, and \
             {}/{version} {kind} has no controller in this project: create {kind}'s own \
             controller first (`{create}`, with --resource=false for a built-in type or a kind \
             that exists), then add {name}",
            args.group
        );
    };
    if args.resource {
        bail!(
            "--controller-name {name} adds a second controller to {kind}, which exists (its own \
             controller is named '{}'): add --resource=false",
            kind.lower()
        );
    }
    adding(project, entry, name)
}

/// The request that adds the second controller `name` to the kind of `entry`, one of
/// `project`'s resources with a controller; what a replay of PROJECT asks too.
pub fn adding(project: &Project, entry: &ResourceEntry, name: ControllerName) -> Result<Request> {
    let kind = &entry.kind;
    let own = kind.lower();
    let taken =
        std::iter::once(own.clone()).chain(entry.named_controllers().map(|n| n.to_string()));
    for taken in taken {
        if taken == name.as_ref() {
            bail!(
                "{}/{} {kind} already has a controller named '{name}'; choose another \
                 --controller-name",
                entry.group.display_name(),
                entry.version
            );
        }
        if taken.replace('-', "") == name.normalized() {
            bail!(
                "--controller-name {name} differs from {kind}'s controller '{taken}' only in \
                 '-': names so alike are hard to tell apart in logs and metrics, and kubebuilder \
                 refuses them too; choose another name"
            );
        }
    }
    let layout = GroupLayout::of(project.multigroup, &entry.group)?;
    let ours = layout::Controller::second(&layout, kind, &name);
    if let Some(clash) = layout::controllers(project)?
        .iter()
        .find_map(|c| ours.clash(c))
    {
        bail!(
            "--controller-name {name} would take {clash}; choose another name, e.g. \
             '{own}-{name}'"
        );
    }
    let mut record = project.record_of(entry);
    record.entry.add_named_controller(name.clone())?;
    Ok(Request {
        record,
        external: None,
        own: None,
        adds_resource: false,
        force: false,
        second_controller: Some(name),
    })
}

/// What adding the second controller `name` of `request` to `project` (at `root`) writes,
/// and what to do next.
pub fn plan(
    root: &Path,
    mut project: Project,
    request: Request,
    name: &ControllerName,
) -> Result<(Plan, String)> {
    let resource = Resource::of(
        &request.record,
        project.multigroup,
        request.external.as_ref(),
        request.own.as_ref(),
    )?;
    let own_kind = resource.has_crd();
    let controller = Controller {
        name: resource.second_controller_name(name),
        module: name.module(),
        reconciler: name.reconciler(),
        finalizer: format!("{}/{name}", resource.api_group),
    };
    let templates = Templates::load(TEMPLATES)?;
    let mut ctx = context(root, &project, &resource, false);
    ctx.insert("own_kind", &own_kind);
    ctx.insert("controller", &controller);
    let mut plan = Plan::new(root);
    files::of_second_controller(&resource, name).plan(&mut plan, &templates, &ctx, false)?;
    rules::grant_second(&mut plan, &project, &request.record)?;

    let added = request.record.entry;
    if let Some(entry) = project
        .resources
        .iter_mut()
        .find(|e| e.is(&added.group, &added.version, &added.kind))
    {
        *entry = added;
    }
    plan.update(project::FILE, |_| project.to_yaml())?;

    let mut next = format!(
        "Added the controller {name} for {}, beside the kind's own. Next:\n  \
         write its logic in {}, and grant what it calls in its rbac_rules\n  \
         make test\n  \
         make run   # against the cluster in your kubeconfig",
        resource.gvk(),
        resource.second_controller_file(name),
    );
    if let Some(line) = super::super::helm::follow(&mut plan, &project, false)? {
        next.push('\n');
        next.push_str(&line);
    }
    Ok((plan, next))
}
