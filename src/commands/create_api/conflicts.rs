//! What `create api` refuses because of what the project already has: the same resource again
//! (without --force), a kind name another group uses, names another kind of the group has, a
//! second API group in a project that is not multigroup.

use anyhow::{Result, bail};

use crate::model::layout::{self, Controller};
use crate::model::{Plural, Resource};
use crate::project::Project;

/// Refuses what would clash with the project. `adds_resource` is false for
/// `--resource=false` on one of the project's resources (which only adds its controller).
pub fn check(project: &Project, r: &Resource, adds_resource: bool, force: bool) -> Result<()> {
    check_kind_is_free(project, r)?;
    if !r.has_crd() {
        let exists = project
            .resources
            .iter()
            .any(|e| e.is_builtin() && e.controller && e.group == r.group && e.kind == r.kind);
        if exists && !force {
            bail!(
                "a controller for {} already exists (use --force to scaffold it again)",
                r.gvk()
            );
        }
        return Ok(());
    }
    let exists = project.find(&r.group, &r.version, &r.kind).is_some();
    if exists && !force && adds_resource {
        bail!(
            "{} already exists in this project; use --force to rewrite its scaffolded files \
             (the types, controller, CRD version, sample and roles; nothing else)",
            r.gvk()
        );
    }
    check_names_are_free(project, r)?;
    if !project.multigroup
        && let Some(other) = project.groups().into_iter().find(|g| **g != r.group)
    {
        bail!(
            "group '{}' would be this project's second API group (it has '{other}'); a project \
             with several groups keeps each in its own module: run `rbuilder edit --multigroup` \
             first, then create the API again",
            r.group
        );
    }
    Ok(())
}

/// In a project that is not multigroup, a kind's controller, webhooks, tests and user roles
/// are named after the kind alone (`src/controller/<kind>.rs`), so a kind name can live in one
/// group only (a multigroup project keeps each group's in a folder of its own). A controller
/// must not take another's file or name, and a kind has one controller, which reconciles all
/// its versions.
fn check_kind_is_free(project: &Project, r: &Resource) -> Result<()> {
    let kind = &r.kind;
    if !project.multigroup
        && let Some(other) = project
            .resources
            .iter()
            .find(|e| e.kind == *kind && e.group != r.group)
    {
        bail!(
            "kind {kind} already exists in group '{}' of this project: in a project that is not \
             multigroup, a kind's controller, webhooks, tests and roles are named after the kind \
             alone (src/controller/{}.rs), so a kind name can be used in one group only; choose \
             another kind name",
            other.group.display_name(),
            kind.module().file
        );
    }
    if r.controller {
        let ours = Controller::own(&r.layout, kind);
        let clash = layout::controllers(project)?
            .into_iter()
            .filter(|c| c.kind != *kind || c.group != r.group || c.second.is_some())
            .find_map(|c| ours.clash(&c));
        if let Some(clash) = clash {
            bail!("{kind}'s controller would take {clash}; choose another kind name");
        }
    }
    if r.controller
        && let Some(other) = project.controller_elsewhere(&r.group, kind, &r.version)
    {
        bail!(
            "{kind} already has a controller, scaffolded with version {}: one controller \
             reconciles a kind in all its versions; drop --controller",
            other.version
        );
    }
    Ok(())
}

/// A new kind's names must not be taken by another kind of its group: the API server would
/// refuse the CRD (NamesAccepted=False), and `Foo` next to `FooSpec` would clash in Rust.
fn check_names_are_free(project: &Project, r: &Resource) -> Result<()> {
    let kind = r.kind.as_str();
    let others = project
        .custom_resources()
        .filter(|e| e.group == r.group && e.kind != r.kind);
    let ours: Vec<String> = [r.plural.to_string(), r.kind.lower()]
        .into_iter()
        .chain(r.short_names.iter().map(ToString::to_string))
        .collect();
    for other in others {
        let plural = match &other.plural {
            Some(plural) => plural.to_string(),
            None => Plural::of(&other.kind)?.to_string(),
        };
        let theirs: Vec<String> = [plural, other.kind.lower()]
            .into_iter()
            .chain(other.short_names.iter().map(ToString::to_string))
            .collect();
        if let Some(name) = ours.iter().find(|n| theirs.contains(n)) {
            bail!(
                "the name '{name}' is already used by kind {} in group {}: a kind's plural, \
                 singular and short names must be unique in its group; choose another --plural \
                 or --short-name",
                other.kind,
                r.api_group
            );
        }
        let theirs = other.kind.as_str();
        for suffix in ["Spec", "Status", "List"] {
            if kind == format!("{theirs}{suffix}") || theirs == format!("{kind}{suffix}") {
                bail!(
                    "kind {kind} would clash with kind {theirs} in group {}: the type \
                     {}{suffix} would be defined twice; choose another kind name",
                    r.api_group,
                    if kind.len() < theirs.len() {
                        kind
                    } else {
                        theirs
                    },
                );
            }
        }
    }
    Ok(())
}
