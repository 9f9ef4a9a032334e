//! The manager's role (`config/rbac/role.yaml`) when a controller is added or replaced: the
//! RBAC rules each template's controller declares in its `rbac_rules`, plus the runtime's, as
//! `make manifests` would merge them. A controller that `--force` replaces takes back the
//! rules that only it needed.

use anyhow::Result;

use crate::manifests::role_with_rules;
use crate::model::Resource;
use crate::project::{Project, ResourceEntry};
use crate::scaffold::{Plan, Templates};

/// The role file, as the `manifests` binary writes it.
const ROLE: &str = "config/rbac/role.yaml";

/// Grants `r`'s controller (rendered with `ctx`) its rules in the role; takes back those of the
/// controller it replaces, unless another controller of the project needs them.
pub fn grant(
    plan: &mut Plan,
    project: &Project,
    r: &Resource,
    templates: &Templates,
    ctx: &tera::Context,
) -> Result<()> {
    let flavor = match r.flavor {
        crate::model::Flavor::Plain => "plain",
        crate::model::Flavor::DeployImage(_) => "deploy_image",
        // A controller of a type the project does not define: the same rules.
        crate::model::Flavor::Builtin { .. } | crate::model::Flavor::External { .. } => "builtin",
    };
    let mut rules = templates.render(&format!("rbac/rules/{flavor}.yaml"), ctx)?;
    rules.push_str(&templates.render("rbac/rules/runtime.yaml", ctx)?);
    let mut revoked = String::new();
    let replaced = project
        .find(&r.group, &r.version, &r.kind)
        .filter(|entry| entry.controller);
    if let Some(replaced) = replaced {
        revoked = controller_rules(project, replaced, templates)?;
        let others = project
            .resources
            .iter()
            .filter(|e| e.controller && !r.is(&e.group, &e.version, &e.kind));
        for other in others {
            rules.push_str(&controller_rules(project, other, templates)?);
        }
    }
    plan.update(ROLE, |role| role_with_rules(role, &rules, &revoked, ROLE))
}

/// The RBAC rules rbuilder scaffolded for the controller of a PROJECT entry.
fn controller_rules(project: &Project, e: &ResourceEntry, templates: &Templates) -> Result<String> {
    // A type without a CRD here (built-in or external) gets the rules of the builtin flavor.
    let flavor = if e.is_builtin() {
        "builtin"
    } else if project.deploy_image(e).is_some() {
        "deploy_image"
    } else {
        "plain"
    };
    let api_group = e.api_group();
    let plural = e.plural_or_derived()?;
    let mut ctx = tera::Context::new();
    ctx.insert(
        "resource",
        &serde_json::json!({ "api_group": api_group, "plural": plural }),
    );
    let rules = templates.render(&format!("rbac/rules/{flavor}.yaml"), &ctx)?;
    Ok(rules + &templates.render("rbac/rules/runtime.yaml", &ctx)?)
}
