//! The RBAC rules of each controller template, in one table per family: written as Rust into
//! the body of the generated controller's `rbac_rules` (`rbac_rules_body`), and merged into the
//! manager's role (`config/rbac/role.yaml`) with the runtime's, as `make manifests` would merge
//! them, when a controller is added or replaced. A controller that `--force` replaces takes
//! back the rules that only it needed.

use anyhow::Result;

use crate::manifests::role::{self, ROLE_FILE, Rule};
use crate::manifests::role_with_rules;
use crate::model::{Resource, with_article};
use crate::project::{Project, Record, ResourceEntry};
use crate::scaffold::Plan;
use crate::scaffold::rust_layout::{MAX_WIDTH, ONE_LINE_WIDTH};

/// One rule of a controller template's `rbac_rules`: `{group}` and `{plural}` stand for the
/// controller's kind, as `group` and `plural` do in the generated code.
#[derive(Clone, Copy)]
struct Row {
    /// The API group.
    group: &'static str,
    /// The one resource the rule names (none of rbuilder's names more).
    resource: &'static str,
    verbs: &'static [&'static str],
    /// Why the controller needs the rule, where its code does not show it: the comment above
    /// the rule in `rbac_rules`, `{a_kind}` standing for the kind after its article.
    why: Option<&'static str>,
}

/// A rule with nothing to explain.
const fn rule(group: &'static str, resource: &'static str, verbs: &'static [&'static str]) -> Row {
    Row {
        group,
        resource,
        verbs,
        why: None,
    }
}

impl Row {
    /// The rule, with the comment `why` above it.
    const fn because(self, why: &'static str) -> Row {
        Row {
            why: Some(why),
            ..self
        }
    }
}

/// What every controller of a kind rbuilder defines needs on it: to read and watch it, apply
/// its status, and set its finalizer (and blockOwnerDeletion on what it owns, which
/// `why_finalizers`, the comment above that rule, names).
const fn own_kind_rules(why_finalizers: &'static str) -> [Row; 3] {
    [
        rule("{group}", "{plural}", &["get", "list", "watch", "patch"]),
        rule("{group}", "{plural}/status", &["patch"]),
        rule("{group}", "{plural}/finalizers", &["update"]).because(why_finalizers),
    ]
}

/// The plain controller owns whatever the user's code gives an owner reference to.
const OWNS_OBJECTS: &str = "Needed to set blockOwnerDeletion on objects owned by {a_kind}.";

/// The deploy-image controller owns its Deployment.
const OWNS_THE_DEPLOYMENT: &str =
    "Needed to set blockOwnerDeletion in the Deployment's owner reference.";

/// The deploy-image controller's own Deployments.
const DEPLOYMENTS: &[Row] = &[rule(
    "apps",
    "deployments",
    &["get", "list", "watch", "create", "patch", "delete"],
)];

/// A controller of a type the project does not define only watches it.
const WATCH_ONLY: &[Row] = &[rule("{group}", "{plural}", &["get", "list", "watch"])];

/// A second controller of one of the project's kinds (`create api --controller-name`): to
/// watch it, and to patch it (its finalizer).
const SECOND_OF_OWN_KIND: &[Row] = &[rule(
    "{group}",
    "{plural}",
    &["get", "list", "watch", "patch"],
)];

/// The rules of the controller template `family` (`templates/controller/<family>.rs.tera`),
/// in the order its `rbac_rules` lists them; for `named`, the second controller's template, of
/// one of the project's kinds (`own_kind`) or not. `manifests --check` in every generated
/// project checks that the role holds what the generated code declares.
fn rows(family: &str, own_kind: bool) -> Vec<Row> {
    match family {
        "deploy_image" => [&own_kind_rules(OWNS_THE_DEPLOYMENT)[..], DEPLOYMENTS].concat(),
        "builtin" => WATCH_ONLY.to_vec(),
        "named" if own_kind => SECOND_OF_OWN_KIND.to_vec(),
        "named" => WATCH_ONLY.to_vec(),
        _ => own_kind_rules(OWNS_OBJECTS).to_vec(),
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

/// The indentation of `rbac_rules`' body, a method of `impl Reconciler`.
const BODY_INDENT: &str = "        ";

/// The body of the generated controller's `rbac_rules` after its `let group` and `let plural`:
/// the rules of the template `family` (see `rows`) as a `vec!` of `policy_rule` calls, each
/// after the comment that says why it is needed, if any (`kind` names the controller's kind
/// there). The templates print it, so that a rule added to a table is granted in both the
/// code and the role. Laid out as rustfmt lays it out, so that a project passes `cargo fmt
/// --check` as scaffolded: on one line if it fits, else a lone rule's arguments one a line
/// inside `vec![...]` (rustfmt overflows a last item), else one rule a line. An argument is
/// never broken: rustfmt would break a list of verbs over 60 columns, which no table has
/// (tests/golden.rs runs rustfmt on what the templates write).
pub fn rbac_rules_body(family: &str, own_kind: bool, kind: &str) -> String {
    let rows = rows(family, own_kind);
    let calls: Vec<Vec<String>> = rows.iter().map(arguments).collect();
    // A comment puts each rule on a line of its own.
    let explained = rows.iter().any(|row| row.why.is_some());
    let items: Vec<String> = calls
        .iter()
        .map(|args| format!("policy_rule({})", args.join(", ")))
        .collect();
    let items = items.join(", ");
    let one_line = format!("{BODY_INDENT}vec![{items}]");
    if !explained && items.len() <= ONE_LINE_WIDTH && one_line.len() <= MAX_WIDTH {
        return one_line;
    }
    if let ([args], false) = (&calls[..], explained) {
        return format!("{BODY_INDENT}vec![{}]", vertical_call(args, BODY_INDENT));
    }
    let indent = format!("{BODY_INDENT}    ");
    let mut body = format!("{BODY_INDENT}vec![\n");
    for (row, args) in rows.iter().zip(&calls) {
        if let Some(why) = row.why {
            let why = why.replace("{a_kind}", &with_article(kind));
            body.push_str(&format!("{indent}// {why}\n"));
        }
        let joined = args.join(", ");
        let line = format!("{indent}policy_rule({joined}),");
        if joined.len() <= ONE_LINE_WIDTH && line.len() <= MAX_WIDTH {
            body.push_str(&line);
        } else {
            body.push_str(&format!("{indent}{},", vertical_call(args, &indent)));
        }
        body.push('\n');
    }
    body.push_str(BODY_INDENT);
    body.push(']');
    body
}

/// `policy_rule(` and `args` one a line, each with a comma, then `)` at `indent`, that of the
/// line the call starts on.
fn vertical_call(args: &[String], indent: &str) -> String {
    let mut call = String::from("policy_rule(\n");
    for arg in args {
        call.push_str(&format!("{indent}    {arg},\n"));
    }
    call.push_str(indent);
    call.push(')');
    call
}

/// The arguments of `row`'s `policy_rule` call: API group, resources and verbs.
fn arguments(row: &Row) -> Vec<String> {
    let verbs: Vec<String> = row.verbs.iter().map(|verb| format!("{verb:?}")).collect();
    vec![
        expression(row.group),
        format!("&[{}]", expression(row.resource)),
        format!("&[{}]", verbs.join(", ")),
    ]
}

/// A string of the tables as a `&str` in `rbac_rules`: the variable `group` or `plural` for the
/// kind's, `format!` for a string that holds one (`{plural}/status`), else a literal.
fn expression(text: &str) -> String {
    match text {
        "{group}" => "&group".to_owned(),
        "{plural}" => "&plural".to_owned(),
        _ if text.contains('{') => format!("&format!({text:?})"),
        _ => format!("{text:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values `group` and `plural` take in the generated code of the tests.
    const GROUP: &str = "webapp.my.domain";
    const PLURAL: &str = "guestbooks";

    /// A rule as the role grants it, with the comment above it in `rbac_rules`.
    type Granted = (Option<String>, String, String, Vec<String>);

    /// What `rbac_rules` grants, read back from its generated `body`: each `policy_rule` call's
    /// (group, resource, verbs), with `group` and `plural` as `GROUP` and `PLURAL`, and the
    /// comment above it.
    fn granted(body: &str) -> Vec<Granted> {
        let mut calls: Vec<(Option<String>, String)> = Vec::new();
        let mut comment = None;
        for line in body.lines() {
            if let Some(text) = line.trim().strip_prefix("// ") {
                comment = Some(text.to_owned());
                continue;
            }
            // rustfmt may break a call over lines: read it without whitespace.
            for (i, part) in line.split("policy_rule(").enumerate() {
                if i > 0 {
                    calls.push((comment.take(), String::new()));
                }
                if let Some((_, call)) = calls.last_mut() {
                    call.extend(part.split_whitespace());
                }
            }
        }
        let value = |expression: &str| {
            let text = match expression {
                "&group" => GROUP,
                "&plural" => PLURAL,
                other => other
                    .strip_prefix("&format!(")
                    .and_then(|e| e.strip_suffix(')'))
                    .unwrap_or(other)
                    .trim_matches('"'),
            };
            text.replace("{group}", GROUP).replace("{plural}", PLURAL)
        };
        calls
            .into_iter()
            .map(|(comment, call)| {
                let (group, rest) = call.split_once(",&[").expect("no resources");
                let (resource, rest) = rest.split_once("],&[").expect("no verbs");
                let verbs = &rest[..rest.find(']').expect("verbs do not end")];
                let verbs = verbs.split(',').map(|v| v.trim_matches('"').to_owned());
                (comment, value(group), value(resource), verbs.collect())
            })
            .collect()
    }

    #[test]
    fn rbac_rules_grants_each_rule_of_the_table_with_its_comment() {
        let families = [
            ("plain", true),
            ("deploy_image", true),
            ("builtin", false),
            ("named", true),
            ("named", false),
        ];
        for (family, own_kind) in families {
            let fill = |s: &str| s.replace("{group}", GROUP).replace("{plural}", PLURAL);
            let expected: Vec<Granted> = rows(family, own_kind)
                .into_iter()
                .map(|row| {
                    (
                        row.why.map(|why| why.replace("{a_kind}", "an Issuer")),
                        fill(row.group),
                        fill(row.resource),
                        row.verbs.iter().map(|v| v.to_string()).collect(),
                    )
                })
                .collect();
            let body = rbac_rules_body(family, own_kind, "Issuer");
            assert_eq!(
                granted(&body),
                expected,
                "{family} (own kind: {own_kind}):\n{body}"
            );
        }
    }
}
