//! The RBAC rules the runtime grants each controller template from what the controller
//! declares, in one table per family, merged into the manager's role (`config/rbac/role.yaml`)
//! with the runtime's, as `make manifests` would merge them, when a controller is added or
//! replaced. A controller that `--force` replaces takes back the rules that only it needed.

use anyhow::Result;

use crate::manifests::role::{self, ROLE_FILE, Rule};
use crate::manifests::role_with_rules;
use crate::model::Resource;
use crate::project::{Project, Record, ResourceEntry};
use crate::scaffold::Plan;

/// One rule the runtime grants a controller of a template: `{group}` and `{plural}` stand for
/// the controller's kind.
#[derive(Clone, Copy)]
struct Row {
    /// The API group.
    group: &'static str,
    /// The one resource the rule names (none of rbuilder's names more).
    resource: &'static str,
    verbs: &'static [&'static str],
}

const fn rule(group: &'static str, resource: &'static str, verbs: &'static [&'static str]) -> Row {
    Row {
        group,
        resource,
        verbs,
    }
}

/// What a controller of a kind rbuilder defines needs on it: to read and watch it, patch it
/// (its finalizer), apply its status, and set blockOwnerDeletion in what it owns.
const OWN_KIND: &[Row] = &[
    rule("{group}", "{plural}", &["get", "list", "watch", "patch"]),
    rule("{group}", "{plural}/status", &["patch"]),
    rule("{group}", "{plural}/finalizers", &["update"]),
];

/// The deploy-image controller's own Deployments (`Owns::kind::<Deployment>()`).
const DEPLOYMENTS: &[Row] = &[rule(
    "apps",
    "deployments",
    &["get", "list", "watch", "create", "patch", "delete"],
)];

/// A controller of a type the project does not define only watches it.
const WATCH_ONLY: &[Row] = &[rule("{group}", "{plural}", &["get", "list", "watch"])];

/// The rules the runtime grants a controller of the template `family`
/// (`templates/controller/<family>.rs.tera`) from what it declares (`rbac::declared` in the
/// runtime: its kind, its finalizer, the kinds it owns), for a kind of the project's own
/// (`own_kind`) or not. The templates write no `rbac_rules` of their own; `manifests --check`
/// in every generated project checks that the role rbuilder scaffolds from these tables is the
/// one the runtime derives.
fn rows(family: &str, own_kind: bool) -> Vec<Row> {
    match family {
        "deploy_image" => [OWN_KIND, DEPLOYMENTS].concat(),
        "builtin" => WATCH_ONLY.to_vec(),
        "named" if !own_kind => WATCH_ONLY.to_vec(),
        _ => OWN_KIND.to_vec(),
    }
}

/// Grants the controller of `added` its rules in the role; takes back those of the controller
/// it replaces, unless another controller of the project needs them.
pub fn grant(plan: &mut Plan, project: &Project, added: &Record) -> Result<()> {
    let mut rules = controller_rules(added)?;
    let mut revoked = Vec::new();
    let entry = &added.entry;
    let replaced = project
        .find(&entry.group, &entry.version, &entry.kind)
        .filter(|existing| existing.controller);
    if let Some(replaced) = replaced {
        revoked = controller_rules(&project.record_of(replaced))?;
        let others = project
            .resources
            .iter()
            .filter(|e| e.controller && !e.is(&entry.group, &entry.version, &entry.kind));
        for other in others {
            rules.extend(controller_rules(&project.record_of(other))?);
        }
        for other in &project.resources {
            for _ in other.named_controllers() {
                rules.extend(second_controller_rules(other)?);
            }
        }
    }
    let namespaced = project.namespaced;
    plan.update(ROLE_FILE, |role| {
        role_with_rules(role, &rules, &revoked, namespaced, ROLE_FILE)
    })
}

/// Grants a second controller of the kind `added` describes its rules in the role.
pub fn grant_second(plan: &mut Plan, project: &Project, added: &Record) -> Result<()> {
    let rules = second_controller_rules(&added.entry)?;
    let namespaced = project.namespaced;
    plan.update(ROLE_FILE, |role| {
        role_with_rules(role, &rules, &[], namespaced, ROLE_FILE)
    })
}

/// The RBAC rules rbuilder scaffolds for a second controller of `entry`'s kind, and the
/// runtime's.
fn second_controller_rules(entry: &ResourceEntry) -> Result<Vec<Rule>> {
    rules_of(entry, rows("named", !entry.is_builtin()))
}

/// The RBAC rules rbuilder scaffolds for the controller of the resource `record` describes,
/// and the runtime's. They name only its API group and plural, so they are made from those
/// alone (an external resource's CRD need not be read again).
fn controller_rules(record: &Record) -> Result<Vec<Rule>> {
    let family = Resource::templates_of(record);
    rules_of(&record.entry, rows(family, !record.entry.is_builtin()))
}

/// `rows` for the kind of `entry`, and the runtime's rules.
fn rules_of(entry: &ResourceEntry, rows: Vec<Row>) -> Result<Vec<Rule>> {
    let (group, plural) = (entry.api_group(), entry.plural_or_derived()?.to_string());
    let fill = |s: &str| s.replace("{group}", &group).replace("{plural}", &plural);
    let mut rules: Vec<Rule> = rows
        .into_iter()
        .map(|row| Rule::new(&fill(row.group), &[&fill(row.resource)], row.verbs))
        .collect();
    rules.extend(role::runtime_rules());
    Ok(rules)
}
