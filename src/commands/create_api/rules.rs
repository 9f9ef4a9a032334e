//! The manager's role (`config/rbac/role.yaml`) when a controller is added or replaced: the
//! RBAC rules each template's controller declares in its `rbac_rules`, plus the runtime's, as
//! `make manifests` would merge them. A controller that `--force` replaces takes back the
//! rules that only it needed.

use anyhow::Result;

use crate::manifests::role_with_rules;
use crate::model::Resource;
use crate::project::{Project, Record, ResourceEntry};
use crate::scaffold::{Plan, Templates};

/// The role file, as the `manifests` binary writes it.
const ROLE: &str = "config/rbac/role.yaml";

/// Grants the controller of `added` its rules in the role; takes back those of the controller
/// it replaces, unless another controller of the project needs them.
pub fn grant(
    plan: &mut Plan,
    project: &Project,
    added: &Record,
    templates: &Templates,
) -> Result<()> {
    let mut rules = controller_rules(added, templates)?;
    let mut revoked = String::new();
    let entry = &added.entry;
    let replaced = project
        .find(&entry.group, &entry.version, &entry.kind)
        .filter(|existing| existing.controller);
    if let Some(replaced) = replaced {
        revoked = controller_rules(&project.record_of(replaced), templates)?;
        let others = project
            .resources
            .iter()
            .filter(|e| e.controller && !e.is(&entry.group, &entry.version, &entry.kind));
        for other in others {
            rules.push_str(&controller_rules(&project.record_of(other), templates)?);
        }
        for other in &project.resources {
            for _ in other.named_controllers() {
                rules.push_str(&second_controller_rules(other, templates)?);
            }
        }
    }
    plan.update(ROLE, |role| role_with_rules(role, &rules, &revoked, ROLE))
}

/// Grants a second controller of the kind `added` describes its rules in the role.
pub fn grant_second(plan: &mut Plan, added: &Record, templates: &Templates) -> Result<()> {
    let rules = second_controller_rules(&added.entry, templates)?;
    plan.update(ROLE, |role| role_with_rules(role, &rules, "", ROLE))
}

/// The RBAC rules rbuilder scaffolds for a second controller of `entry`'s kind: to watch it,
/// and for one of the project's own kinds to patch it (its finalizer).
fn second_controller_rules(entry: &ResourceEntry, templates: &Templates) -> Result<String> {
    let template = if entry.is_builtin() {
        "builtin"
    } else {
        "named"
    };
    let ctx = rules_context(entry)?;
    let rules = templates.render(&format!("rbac/rules/{template}.yaml"), &ctx)?;
    Ok(rules + &templates.render("rbac/rules/runtime.yaml", &ctx)?)
}

/// What the rules' templates read: the kind's API group and plural.
fn rules_context(entry: &ResourceEntry) -> Result<tera::Context> {
    let mut ctx = tera::Context::new();
    ctx.insert(
        "resource",
        &serde_json::json!({
            "api_group": entry.api_group(),
            "plural": entry.plural_or_derived()?,
        }),
    );
    Ok(ctx)
}

/// The RBAC rules rbuilder scaffolds for the controller of the resource `record` describes.
/// They name only its API group and plural, so they are rendered from those alone (an
/// external resource's CRD need not be read again).
fn controller_rules(record: &Record, templates: &Templates) -> Result<String> {
    let ctx = rules_context(&record.entry)?;
    let template = Resource::templates_of(record);
    let rules = templates.render(&format!("rbac/rules/{template}.yaml"), &ctx)?;
    Ok(rules + &templates.render("rbac/rules/runtime.yaml", &ctx)?)
}
