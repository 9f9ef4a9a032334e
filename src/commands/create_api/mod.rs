//! `rbuilder create api`: a custom resource (types, CRD, sample, RBAC roles) and its
//! controller, registered at the project's markers; or a controller for a built-in type.
//!
//! The steps, in order: the arguments become a [`Request`], the resource as PROJECT will record
//! it (`resolve`; a replay of PROJECT makes one from its entry instead, `replay`); the
//! [`Resource`] templates read is derived from that record (`Resource::of`) and must not clash
//! with the project (`conflicts`); what it adds is declared as data (`files`) and planned, with
//! the manager's role (`rules`); PROJECT records it (`record`).

mod conflicts;
mod files;
mod record;
mod replay;
mod resolve;
mod rules;
mod second;

use std::path::Path;

use anyhow::Result;

use super::finish;
use crate::cli::CreateApiArgs;
use crate::external::External;
use crate::external::own::OwnTypes;
use crate::model::{ApiTypes, ControllerName, Flavor, Resource};
use crate::project::{self, Project, Record};
use crate::scaffold::{Plan, Templates, project_context};

pub(super) use replay::{
    external_types, own_types, request as replay_request,
    second_controller as replay_second_controller,
};
pub(super) use resolve::{ExternalImport, external_request};

/// The template folders `create api` renders from.
const TEMPLATES: &[&str] = &[
    "api/",
    "controller/",
    "e2e/",
    "inserts/",
    "integration/",
    "layout/",
    "rbac/",
    "samples/",
];

/// What `create api` is asked to add, checked and typed.
pub(super) struct Request {
    /// The resource as PROJECT is to record it.
    pub record: Record,
    /// An external resource's types, translated from its CRD.
    pub external: Option<External>,
    /// The types of one of the project's own kinds made from its CRD (migrated from
    /// kubebuilder).
    pub own: Option<OwnTypes>,
    /// False for `--resource=false` on one of the project's resources, which adds only its
    /// controller.
    pub adds_resource: bool,
    /// Rewrite the resource's own files if they exist.
    pub force: bool,
    /// A second controller of the kind (`--controller-name`), which is all this adds.
    pub second_controller: Option<ControllerName>,
}

pub fn run(root: &Path, args: CreateApiArgs) -> Result<()> {
    let (plan, next) = plan(root, &args)?;
    finish(plan, args.dry_run, &next)
}

/// What `create api` with `args` writes in the project at `root`, and what to do next.
fn plan(root: &Path, args: &CreateApiArgs) -> Result<(Plan, String)> {
    let project = Project::load(root)?;
    let mut request = resolve::request(&project, args)?;
    if request.second_controller.is_some() && request.record.entry.external {
        // Its types, for the controller to name, from the CRD PROJECT recorded.
        request.external = Some(replay::external_types(root, &request.record.entry)?);
    }
    if request.own.is_none() {
        request.own = replay::own_types(root, &request.record.entry)?;
    }
    plan_request(root, project, request)
}

/// What adding `request` to `project` (the project at `root`) writes, and what to do next.
pub(super) fn plan_request(
    root: &Path,
    mut project: Project,
    request: Request,
) -> Result<(Plan, String)> {
    if let Some(name) = request.second_controller.clone() {
        return second::plan(root, project, request, &name);
    }
    let resource = Resource::of(
        &request.record,
        project.multigroup,
        request.external.as_ref(),
        request.own.as_ref(),
    )?;
    conflicts::check(&project, &resource, request.adds_resource, request.force)?;

    let first_version = project
        .versions_of(&resource.group, &resource.kind)
        .all(|e| e.version == resource.version);
    let templates = Templates::load(TEMPLATES)?;
    let ctx = context(root, &project, &resource, first_version);
    let mut plan = Plan::new(root);
    let source = request.external.as_ref().map(|e| e.source.as_str());
    // The types made from a CRD, under the project's license header.
    let header = ctx
        .get("header")
        .and_then(|h| h.as_str())
        .unwrap_or_default();
    let own = request.own.as_ref().map(|types| files::OwnFiles {
        types,
        source: format!("{header}{}", types.source),
        sample: types.sample(project.project_name.as_ref()),
    });
    let additions = files::of(
        &resource,
        source,
        own.as_ref(),
        request.adds_resource,
        first_version,
    );
    additions.plan(&mut plan, &templates, &ctx, request.force)?;
    if resource.controller {
        rules::grant(&mut plan, &project, &request.record)?;
    }
    record::record(&mut project, request.record);
    plan.update(project::FILE, |_| project.to_yaml())?;

    let mut next = next_steps(&plan, &resource);
    if let Some(line) = super::helm::follow(&mut plan, &project, false)? {
        next.push('\n');
        next.push_str(&line);
    }
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
    ctx.insert("controller_module", &r.controller_module());
    ctx.insert("api_file", &r.api_file());
    if let Some(types) = ApiTypes::of(r) {
        ctx.insert("types", &types);
    }
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
