//! The manager's role (`config/rbac/role.yaml`) when a controller is added or replaced: the
//! RBAC rules each template's controller declares in its `rbac_rules`, plus the runtime's, as
//! `make manifests` would merge them. A controller that `--force` replaces takes back the
//! rules that only it needed.

use anyhow::Result;

use crate::manifests::role::{self, ROLE_FILE, Rule};
use crate::manifests::role_with_rules;
use crate::model::Resource;
use crate::project::{Project, Record, ResourceEntry};
use crate::scaffold::Plan;

/// One rule of a controller template's `rbac_rules`: (API group, resource, verbs), where
/// `{group}` and `{plural}` stand for the controller's kind, as `group` and `plural` do in the
/// template.
type Row = (&'static str, &'static str, &'static [&'static str]);

/// What every controller of a kind rbuilder defines needs on it: to read and watch it, apply
/// its status, and set its finalizer (and blockOwnerDeletion on what it owns).
const OWN_KIND: &[Row] = &[
    ("{group}", "{plural}", &["get", "list", "watch", "patch"]),
    ("{group}", "{plural}/status", &["patch"]),
    ("{group}", "{plural}/finalizers", &["update"]),
];

/// The deploy-image controller's own Deployments.
const DEPLOYMENTS: &[Row] = &[(
    "apps",
    "deployments",
    &["get", "list", "watch", "create", "patch", "delete"],
)];

/// A controller of a type the project does not define only watches it.
const WATCH_ONLY: &[Row] = &[("{group}", "{plural}", &["get", "list", "watch"])];

/// A second controller of one of the project's kinds (`create api --controller-name`): to
/// watch it, and to patch it (its finalizer).
const SECOND_OF_OWN_KIND: &[Row] = &[("{group}", "{plural}", &["get", "list", "watch", "patch"])];

/// The rules of the controller template `family` (`templates/controller/<family>.rs.tera`),
/// in the order its `rbac_rules` lists them; for `named`, the second controller's template, of
/// one of the project's kinds (`own_kind`) or not. The template writes them in Rust and this
/// table in data; `tests::the_tables_are_the_controller_templates_rules` reads the templates'
/// and fails on any difference, and `manifests --check` in every generated project is the
/// safety net.
fn rows(family: &str, own_kind: bool) -> Vec<Row> {
    match family {
        "deploy_image" => [OWN_KIND, DEPLOYMENTS].concat(),
        "builtin" => WATCH_ONLY.to_vec(),
        "named" if own_kind => SECOND_OF_OWN_KIND.to_vec(),
        "named" => WATCH_ONLY.to_vec(),
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
        .map(|(g, resource, verbs)| Rule::new(&fill(g), &[&fill(resource)], verbs))
        .collect();
    rules.extend(role::runtime_rules());
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `policy_rule(..)` calls of a controller template's `rbac_rules`, each as a row of
    /// the table (a rule naming one resource; none names more).
    fn template_rows(family: &str, own_kind: bool) -> Vec<(String, String, Vec<String>)> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/templates/controller");
        let path = format!("{dir}/{family}.rs.tera");
        let source = std::fs::read_to_string(&path).unwrap();
        let start = source.find("fn rbac_rules()").expect("no rbac_rules");
        let body = &source[start..];
        let mut body = &body[..body.find("\n    }\n").expect("rbac_rules does not end")];
        // A template that writes other rules for a kind the project does not define: the
        // branch that `own_kind` takes.
        if let Some((_, branches)) = body.split_once("{%- if own_kind %}") {
            let (own, other) = branches.split_once("{%- else %}").expect("no else");
            let other = &other[..other.find("{%- endif %}").expect("no endif")];
            body = if own_kind { own } else { other };
        }
        // rustfmt may break a call over lines: compare without whitespace.
        let flat: String = body.split_whitespace().collect();
        let mut rows = Vec::new();
        for call in flat.split("policy_rule(").skip(1) {
            let (group, rest) = call.split_once(",&[").expect("no resources");
            let (resources, rest) = rest.split_once("],&[").expect("no verbs");
            let verbs = &rest[..rest.find(']').expect("verbs do not end")];
            let group = match group {
                "&group" => "{group}".to_owned(),
                literal => literal.trim_matches('"').to_owned(),
            };
            let resource = match resources {
                "&plural" => "{plural}".to_owned(),
                other => other
                    .trim_start_matches("&format!(")
                    .trim_end_matches(')')
                    .trim_matches('"')
                    .to_owned(),
            };
            assert!(
                !resource.contains(','),
                "{path}: one resource per rule: {resource}"
            );
            let verbs = verbs.split(',').map(|v| v.trim_matches('"').to_owned());
            rows.push((group, resource, verbs.collect()));
        }
        assert!(!rows.is_empty(), "{path}: no policy_rule in rbac_rules");
        rows
    }

    #[test]
    fn the_tables_are_the_controller_templates_rules() {
        let families = [
            ("plain", true),
            ("deploy_image", true),
            ("builtin", false),
            ("named", true),
            ("named", false),
        ];
        for (family, own_kind) in families {
            let table: Vec<(String, String, Vec<String>)> = rows(family, own_kind)
                .into_iter()
                .map(|(g, r, v)| {
                    (
                        g.into(),
                        r.into(),
                        v.iter().map(|v| v.to_string()).collect(),
                    )
                })
                .collect();
            assert_eq!(
                table,
                template_rows(family, own_kind),
                "the RBAC rules of templates/controller/{family}.rs.tera (own_kind: {own_kind}) \
                 and of rules.rs differ"
            );
        }
    }
}
