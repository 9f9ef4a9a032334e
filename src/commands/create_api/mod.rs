//! `rbuilder create api`: a custom resource (types, CRD, sample, RBAC roles) and its
//! controller, registered at the project's markers; or a controller for a built-in type.
//!
//! The steps, in order: the arguments become a validated [`Resource`] (`resolve`), which must
//! not clash with the project (`conflicts`); what it adds is declared as data (`files`) and
//! planned, with the manager's role (`rules`); PROJECT records it (`record`).

mod conflicts;
mod files;
mod record;
mod resolve;
mod rules;

use std::path::Path;

use anyhow::Result;

use super::finish;
use crate::cli::CreateApiArgs;
use crate::model::{Flavor, Resource};
use crate::project::{self, Project};
use crate::scaffold::{Plan, Templates, project_context};
use files::Additions;

/// The template folders `create api` renders from.
const TEMPLATES: &[&str] = &[
    "api/",
    "controller/",
    "crd/",
    "e2e/",
    "inserts/",
    "integration/",
    "rbac/",
    "samples/",
];

pub fn run(root: &Path, args: CreateApiArgs) -> Result<()> {
    let (plan, next) = plan(root, &args)?;
    finish(plan, args.dry_run, &next)
}

/// What `create api` with `args` writes in the project at `root`, and what to do next.
pub(super) fn plan(root: &Path, args: &CreateApiArgs) -> Result<(Plan, String)> {
    let mut project = Project::load(root)?;
    let resource = resolve::resource(&project, args)?;
    // --resource=false on one of the project's resources adds only its controller.
    let adds_resource = args.resource;
    conflicts::check(&project, &resource, adds_resource, args.force)?;

    let first_version = project
        .versions_of(&resource.group, &resource.kind)
        .all(|e| e.version == resource.version);
    let templates = Templates::load(TEMPLATES)?;
    let ctx = context(root, &project, &resource, first_version);
    let mut plan = Plan::new(root);
    let additions = Additions::of(&resource, adds_resource, first_version);
    additions.plan(&mut plan, &templates, &ctx, &resource, args.force)?;
    if resource.controller {
        rules::grant(&mut plan, &project, &resource, &templates, &ctx)?;
    }
    record::record(&mut project, &resource);
    plan.update(project::FILE, |_| project.to_yaml())?;

    let next = next_steps(&plan, &resource);
    Ok((plan, next))
}

/// The template variables of `resource`.
fn context(root: &Path, project: &Project, r: &Resource, first_version: bool) -> tera::Context {
    let mut ctx = project_context(root, project);
    ctx.insert("resource", r);
    // The kind's first version is its CRD's storage version.
    ctx.insert("storage", &first_version);
    if project.multigroup || matches!(r.flavor, Flavor::External { .. }) {
        ctx.insert("group_module", &r.group.module().unwrap_or_default());
    }
    ctx.insert("api_file", &r.api_file());
    ctx
}

/// What to do after `create api`.
fn next_steps(plan: &Plan, r: &Resource) -> String {
    let mut next = String::new();
    let overwritten = plan.overwritten().join(", ");
    if !overwritten.is_empty() {
        next.push_str(&format!("--force rewrote: {overwritten}\n"));
    }
    let gvk = r.gvk();
    if let Flavor::External { crd_name, .. } = &r.flavor {
        next.push_str(&format!(
            "Added the types of {gvk} (from CRD {crd_name}: not installed by this project){}. \
             Next:\n  ",
            if r.controller {
                " and its controller"
            } else {
                ""
            },
        ));
        if r.controller {
            next.push_str(&format!(
                "write the logic in {}, and grant what it calls in its rbac_rules\n  ",
                r.controller_file()
            ));
        }
        next.push_str(
            "make test\n  \
             make run   # against a cluster where the CRD is installed",
        );
    } else if r.has_crd() {
        next.push_str(&format!(
            "Added {gvk}. Next:\n  \
             edit the types in {}, then `make manifests` to regenerate the CRD\n  \
             write the logic in {}\n  \
             make test\n  \
             make install && make run   # against the cluster in your kubeconfig",
            r.api_file(),
            r.controller_file(),
        ));
    } else {
        next.push_str(&format!(
            "Added a controller for {gvk} (Kubernetes' own type: no CRD). Next:\n  \
             write the logic in {}, and grant what it calls in its rbac_rules\n  \
             make test\n  \
             make run   # against the cluster in your kubeconfig",
            r.controller_file(),
        ));
    }
    next
}
