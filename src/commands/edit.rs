//! `rbuilder edit`: change project-wide settings recorded in PROJECT, and the files that
//! follow from them.
//!
//! - `--multigroup`: where new APIs go, and how their controllers and roles are named;
//!   existing ones stay.
//! - `--license`, `--owner`: the license header of files scaffolded from then on
//!   (`hack/boilerplate.txt`) and Cargo.toml's `license`; `rbuilder update` then gives
//!   rbuilder's own files the new header.
//! - `--namespaced`: the operator's scope. The files that depend on it are rewritten where
//!   they are as rbuilder wrote them; one edited by hand is refused (named), unless `--force`.

use std::path::Path;

use anyhow::{Result, bail};

use super::create_webhook::{
    MANAGER_NEEDS, REPLACEMENTS, plan_replacements, plan_webhook_configurations,
};
use super::{autoupdate, create_api, finish, grafana, helm};
use crate::cli::EditArgs;
use crate::external;
use crate::license;
use crate::manifests::role_with_scope;
use crate::model::{Resource, builtin};
use crate::project::{self, License, Project};
use crate::scaffold::context::BOILERPLATE;
use crate::scaffold::paths::{CARGO_TOML, LIB, MANAGER, ROLE};
use crate::scaffold::{Plan, Templates, project_context};

pub fn run(root: &Path, args: EditArgs) -> Result<()> {
    let before = Project::load(root)?;
    if args.multigroup.is_none()
        && args.namespaced.is_none()
        && args.license.is_none()
        && args.license_file.is_none()
        && args.owner.is_none()
        && args.plugins.is_none()
    {
        bail!(
            "nothing to edit: pass a setting to change, e.g. `rbuilder edit --multigroup`, \
             --namespaced, --license, --license-file, --owner or --plugins {}",
            KNOWN_PLUGINS
        );
    }
    let plugins = match &args.plugins {
        Some(list) => parse_plugins(list, "edit")?,
        None => Vec::new(),
    };
    let mut after = before.clone();
    let mut plan = Plan::new(root);
    let mut next = Vec::new();
    if let Some(multigroup) = args.multigroup {
        next.push(multigroup_change(&mut after, multigroup)?);
        describe_layout(root, &mut plan, &before, &after)?;
    }
    if args.license_file.is_some() && args.owner.is_some() {
        bail!("{}", license::OWNER_WITH_FILE);
    }
    if args.owner.is_some()
        && args.license.is_none()
        && args.license_file.is_none()
        && before.license == License::Custom
    {
        // rbuilder would rewrite the header from the owner, and the user's text would be lost.
        bail!(
            "the project's license header is its own (hack/boilerplate.txt, from \
             --license-file), which --owner cannot change: edit that file, or give --license \
             with --owner for one of rbuilder's headers"
        );
    }
    // Read before anything is planned: a file that cannot be the header is refused first.
    let license_file = match &args.license_file {
        Some(path) => Some(license::read_file(path)?),
        None => None,
    };
    if args.license.is_some() || license_file.is_some() || args.owner.is_some() {
        if let Some(owner) = &args.owner {
            license::check_owner(owner)?;
        }
        if let Some(license) = args.license {
            after.license = license.into();
        }
        if license_file.is_some() {
            // The file overrides --license, as at init and in kubebuilder.
            after.license = License::Custom;
        }
        if args.owner.is_some() {
            after.owner = args.owner.clone();
        }
        next.push(license_change(&mut plan, &before, &after, license_file)?);
    }
    if let Some(namespaced) = args.namespaced
        && namespaced != before.namespaced
    {
        after.namespaced = namespaced;
        next.push(scope_change(root, &mut plan, &before, &after, args.force)?);
    }
    for plugin in plugins {
        match plugin {
            Plugin::Grafana => {
                grafana::plan(&mut plan, &project_context(root, &after), None)?;
                after.plugins.grafana = Some(Default::default());
                next.push(
                    "Grafana dashboards for the operator's metrics are in grafana/: import them \
                     in Grafana. List your own metrics in grafana/custom-metrics/config.yaml and \
                     run this again for a dashboard of them."
                        .into(),
                );
            }
            Plugin::Helm => {
                let ctx = project_context(root, &after);
                next.push(helm::plan(&mut plan, &after, &ctx, args.force)?);
                after.plugins.helm = Some(Default::default());
            }
            Plugin::Autoupdate => {
                let ctx = project_context(root, &after);
                next.push(autoupdate::plan(&mut plan, &ctx, args.force)?);
                after.plugins.autoupdate = Some(Default::default());
            }
        }
    }
    plan.update(project::FILE, |_| after.to_yaml())?;
    finish(plan, args.dry_run, &next.join("\n"))
}

/// An optional plugin of kubebuilder's that rbuilder has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Plugin {
    Grafana,
    Helm,
    Autoupdate,
}

/// The plugins `--plugins` accepts, as the messages list them.
const KNOWN_PLUGINS: &str = "grafana/v1-alpha (Grafana dashboards), helm/v2-alpha (a Helm chart) \
                             or autoupdate/v1-alpha (a weekly rbuilder update workflow)";

/// The plugins of `--plugins` (comma-separated, as kubebuilder takes them, by their short name
/// or kubebuilder's full one), each once, for `command`.
pub(super) fn parse_plugins(list: &str, command: &str) -> Result<Vec<Plugin>> {
    let mut plugins = Vec::new();
    for name in list.split(',').map(str::trim) {
        let plugin = match name {
            grafana::PLUGIN | "grafana.kubebuilder.io/v1-alpha" => Plugin::Grafana,
            helm::PLUGIN | "helm.kubebuilder.io/v2-alpha" => Plugin::Helm,
            autoupdate::PLUGIN | "autoupdate.kubebuilder.io/v1-alpha" => Plugin::Autoupdate,
            "go/v4" | "go.kubebuilder.io/v4" => bail!(
                "--plugins {list}: {name} is kubebuilder's Go layout; rbuilder writes Rust \
                 projects, so leave it out (e.g. --plugins {})",
                helm::PLUGIN
            ),
            "" => bail!("--plugins {list:?} names no plugin: give {KNOWN_PLUGINS}"),
            unknown => bail!(
                "unknown plugin '{unknown}': `{command} --plugins` knows {KNOWN_PLUGINS}, \
                 comma-separated"
            ),
        };
        if !plugins.contains(&plugin) {
            plugins.push(plugin);
        }
    }
    Ok(plugins)
}

fn multigroup_change(project: &mut Project, multigroup: bool) -> Result<String> {
    let groups: Vec<String> = project.groups().iter().map(ToString::to_string).collect();
    if !multigroup && groups.len() > 1 {
        bail!(
            "the project has APIs in several groups ({}), so it must stay multigroup",
            groups.join(", ")
        );
    }
    let before = std::mem::replace(&mut project.multigroup, multigroup);
    Ok(match (before, multigroup) {
        (false, true) => "The project is now multigroup: new APIs go to \
                          src/api/<group>/<version>/, their controllers, webhooks and tests to \
                          folders of the group's (src/controller/<group>/, ...), named after \
                          the group as kubebuilder names them. Existing APIs stay where they \
                          are."
            .into(),
        (true, false) => "The project is now single-group: new APIs go to \
                          src/api/<version>/, and all must share one group."
            .into(),
        _ => "The project's layout is unchanged.".into(),
    })
}

/// The README and the modules that list controllers and webhooks describe how the project is
/// laid out, which `--multigroup` changes for the APIs made from then on: their descriptions
/// follow, where they are as rbuilder wrote them.
fn describe_layout(root: &Path, plan: &mut Plan, before: &Project, after: &Project) -> Result<()> {
    let templates = Templates::load(&["init/"])?;
    let (old_ctx, new_ctx) = (project_context(root, before), project_context(root, after));
    for path in ["README.md", "src/controller/mod.rs", "src/webhook/mod.rs"] {
        let template = format!("init/{path}");
        let old = templates.render(&template, &old_ctx)?;
        let new = templates.render(&template, &new_ctx)?;
        let (old, new) = changed_lines(&old, &new);
        if old.is_empty() || !plan.read(path)?.is_some_and(|text| text.contains(&old)) {
            continue;
        }
        plan.update(path.to_owned(), |text| Ok(text.replacen(&old, &new, 1)))?;
    }
    Ok(())
}

/// The lines of `old` that `new` writes differently, and those it writes instead: what lies
/// between the lines both start with and those both end with.
fn changed_lines(old: &str, new: &str) -> (String, String) {
    let (old, new): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let start = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let end = old[start..]
        .iter()
        .rev()
        .zip(new[start..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let block = |lines: &[&str]| lines.iter().map(|l| format!("{l}\n")).collect::<String>();
    (
        block(&old[start..old.len() - end]),
        block(&new[start..new.len() - end]),
    )
}

/// A new license header: hack/boilerplate.txt (what every later command writes at the top of
/// a Rust file) and Cargo.toml's `license` field.
/// `custom` is the text of `--license-file`, which is the header as it is.
fn license_change(
    plan: &mut Plan,
    before: &Project,
    after: &Project,
    custom: Option<String>,
) -> Result<String> {
    let owner = after
        .owner
        .clone()
        .unwrap_or_else(|| format!("The {} Authors", after.project_name));
    let boilerplate = custom
        .unwrap_or_else(|| license::boilerplate(after.license, &owner, license::copyright_year()));
    if plan.exists(BOILERPLATE) {
        plan.update(BOILERPLATE, |_| Ok(boilerplate))?;
    } else {
        plan.create(BOILERPLATE, boilerplate)?;
    }
    let (old, new) = (license::spdx(before.license), license::spdx(after.license));
    if old != new {
        plan.update(CARGO_TOML, |text| Ok(with_spdx(text, old, new)))?;
    }
    Ok(match after.license {
        License::None => "Files scaffolded from now on get no license header.".into(),
        _ => "Files scaffolded from now on get the new license header (hack/boilerplate.txt); \
              `rbuilder update` gives rbuilder's own files the new header too. Your files \
              keep theirs: change them by hand."
            .into(),
    })
}

/// `manifest` (a Cargo.toml) with its package's `license` field `old` replaced by `new`.
fn with_spdx(manifest: &str, old: Option<&str>, new: Option<&str>) -> String {
    let old_line = old.map(|spdx| format!("license = \"{spdx}\""));
    let new_line = new.map(|spdx| format!("license = \"{spdx}\""));
    let mut lines: Vec<String> = Vec::new();
    let mut replaced = false;
    for line in manifest.lines() {
        if old_line.as_deref() == Some(line.trim()) {
            replaced = true;
            if let Some(new_line) = &new_line {
                lines.push(new_line.clone());
            }
            continue;
        }
        lines.push(line.to_owned());
        // No license field before: it goes after `publish`, where init puts it.
        if !replaced
            && old.is_none()
            && line.trim() == "publish = false"
            && let Some(new_line) = &new_line
        {
            lines.push(new_line.clone());
            replaced = true;
        }
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// The operator's scope changes: the files that depend on it follow.
fn scope_change(
    root: &Path,
    plan: &mut Plan,
    before: &Project,
    after: &Project,
    force: bool,
) -> Result<String> {
    if after.namespaced {
        let mut cluster_scoped: Vec<String> = Vec::new();
        for r in &after.resources {
            let refused = if r.external {
                // Another project's kind needs a role only for its controller; its scope is its
                // CRD's (the file PROJECT names), as `create api` read it.
                r.controller && !super::create_api::external_types(root, r)?.namespaced
            } else if r.is_builtin() {
                // A built-in type needs a role only for its controller (webhooks need none).
                r.controller
                    && builtin::find(r.group.display_name(), r.version.as_ref(), r.kind.as_str())
                        .is_some_and(|b| !b.namespaced)
            } else {
                !r.namespaced()
            };
            if refused {
                cluster_scoped.push(r.kind.to_string());
            }
        }
        if !cluster_scoped.is_empty() {
            bail!(
                "the project has cluster-scoped kinds ({}), which an operator scoped to one \
                 namespace cannot be granted (a Role grants only namespaced resources); remove \
                 them first, or keep the operator cluster-wide",
                cluster_scoped.join(", ")
            );
        }
        refuse_webhooks_a_namespace_cannot_have(root, after)?;
    }
    let templates = Templates::load(&["init/", "rbac/"])?;
    let (old_ctx, new_ctx) = (project_context(root, before), project_context(root, after));
    // Each file as rbuilder writes it for the old scope and the new one.
    let mut files: Vec<(String, String, String)> = Vec::new();
    for path in ["config/rbac/role_binding.yaml", MANAGER] {
        let template = format!("init/{path}");
        let old = templates.render(&template, &old_ctx)?;
        let new = templates.render(&template, &new_ctx)?;
        files.push((path.to_owned(), old, new));
    }
    // src/lib.rs keeps the license header it was written with, which may not be today's
    // (`edit --license` changes only what later commands write): it is compared, and
    // rewritten, under its own header.
    if let Some(current) = plan.read(LIB)? {
        let (header, _) = split_license_header(&current);
        let (mut old_ctx, mut new_ctx) = (old_ctx.clone(), new_ctx.clone());
        old_ctx.insert("header", header);
        new_ctx.insert("header", header);
        let template = format!("init/{LIB}");
        let old = templates.render(&template, &old_ctx)?;
        let new = templates.render(&template, &new_ctx)?;
        files.push((LIB.to_owned(), old, new));
    }
    for r in after.custom_resources().filter(|r| r.namespaced()) {
        // A kind migrated from kubebuilder is described by its CRD, which is read for it.
        let own = create_api::own_types(root, r)?;
        let resource = Resource::of(&after.record_of(r), after.multigroup, None, own.as_ref())?;
        let (mut old_ctx, mut new_ctx) = (old_ctx.clone(), new_ctx.clone());
        old_ctx.insert("resource", &resource);
        new_ctx.insert("resource", &resource);
        for role in ["admin", "editor", "viewer"] {
            let template = format!("rbac/{role}_role.yaml");
            let old = templates.render(&template, &old_ctx)?;
            let new = templates.render(&template, &new_ctx)?;
            files.push((resource.role_file(role), old, new));
        }
    }

    let mut edited = Vec::new();
    for (path, old, new) in files {
        let Some(current) = plan.read(&path)? else {
            continue;
        };
        if current == new {
            continue;
        }
        if current != old {
            edited.push(path.clone());
            if !force {
                continue;
            }
        }
        plan.update(path, |_| Ok(new))?;
    }
    if !edited.is_empty() && !force {
        bail!(
            "{} changed since rbuilder wrote {}, so rbuilder cannot tell how to change the \
             operator's scope there: run again with --force to rewrite {} (your changes in \
             {} are lost), or make the change by hand",
            edited.join(", "),
            if edited.len() == 1 { "it" } else { "them" },
            if edited.len() == 1 { "it" } else { "them" },
            if edited.len() == 1 { "it" } else { "them" },
        );
    }
    if plan.exists(ROLE) {
        plan.update(ROLE, |role| role_with_scope(role, after.namespaced, ROLE))?;
    }
    // What the webhooks see, and the names of their configurations, follow the scope.
    plan_webhook_configurations(plan, after)?;
    if plan.exists(REPLACEMENTS) {
        let templates = Templates::load(&["webhook/"])?;
        let mut ctx = project_context(root, after);
        plan_replacements(plan, &templates, &mut ctx, after)?;
    }
    let mut next = if after.namespaced {
        "The operator now watches one namespace (WATCH_NAMESPACE, the manager's own in the \
         cluster) with Roles instead of ClusterRoles."
            .to_owned()
    } else {
        "The operator now watches the whole cluster, with ClusterRoles.".to_owned()
    };
    if force && !edited.is_empty() {
        next.push_str(&format!("\n--force rewrote: {}", edited.join(", ")));
    }
    Ok(next)
}

/// Refuses the scope of one namespace to a project with webhooks for built-in types that
/// `create webhook` refuses such an operator: a cluster-scoped type's webhook would see the
/// whole cluster, and one for a type the manager is made of in its namespace (its certificate
/// Secret, its ServiceAccount...) would, failing closed while the manager is down, keep the
/// manager from ever starting. The same for other projects' kinds (their scope read from the
/// CRD file PROJECT names, relative to `root`): cert-manager's Issuer and Certificate issue the
/// manager's certificate in its namespace.
fn refuse_webhooks_a_namespace_cannot_have(root: &Path, project: &Project) -> Result<()> {
    let mut refused = Vec::new();
    for entry in project.resources.iter().filter(|e| e.webhooks.is_some()) {
        if entry.external {
            if external::manager_needs(&entry.api_group(), entry.kind.as_str()) {
                refused.push(format!(
                    "{} (the manager's certificate is issued with one in its namespace: \
                     failing closed while the manager is down, its webhooks would keep it from \
                     starting)",
                    entry.kind
                ));
            } else if !super::create_api::external_types(root, entry)?.namespaced {
                refused.push(format!(
                    "{} (cluster-scoped: its webhooks would see every {} of the cluster)",
                    entry.kind, entry.kind
                ));
            }
            continue;
        }
        let Some(b) = builtin::find(
            entry.group.display_name(),
            entry.version.as_ref(),
            entry.kind.as_str(),
        )
        .filter(|_| entry.is_builtin()) else {
            continue;
        };
        if !b.namespaced {
            refused.push(format!(
                "{} (cluster-scoped: its webhooks would see every {} of the cluster)",
                b.kind, b.kind
            ));
        } else if MANAGER_NEEDS.contains(&b.kind) {
            refused.push(format!(
                "{} (the manager's own are in its namespace: failing closed while the manager \
                 is down, its webhooks would keep it from starting)",
                b.kind
            ));
        }
    }
    if !refused.is_empty() {
        bail!(
            "the project has webhooks for types it does not define that an operator scoped to \
             one namespace cannot have: {}; remove them first (their files under src/webhook/, \
             their registrations in src/webhook/mod.rs and their entries in PROJECT), or keep \
             the operator cluster-wide",
            refused.join(", ")
        );
    }
    Ok(())
}

/// `text` (a Rust file) split after its license header: the `//` comment lines before the
/// first line of code or doc comment (`//!`), with the blank line after them.
fn split_license_header(text: &str) -> (&str, &str) {
    let mut end = 0;
    for line in text.split_inclusive('\n') {
        let comment = line.starts_with("//") && !line.starts_with("//!");
        if !comment {
            if end > 0 && line.trim().is_empty() {
                end += line.len();
            }
            break;
        }
        end += line.len();
    }
    text.split_at(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_license_header_is_the_comment_before_the_code() {
        let text = "// Copyright 2026 Jane Doe.\n//\n// MIT\n\n//! The operator.\n\npub mod api;\n";
        assert_eq!(
            split_license_header(text),
            (
                "// Copyright 2026 Jane Doe.\n//\n// MIT\n\n",
                "//! The operator.\n\npub mod api;\n"
            )
        );
        let bare = "//! The operator.\npub mod api;\n";
        assert_eq!(split_license_header(bare), ("", bare));
    }

    #[test]
    fn cargo_license_field_follows_the_license() {
        let manifest = "[package]\nname = \"x\"\npublish = false\nlicense = \"Apache-2.0\"\n";
        let mit = with_spdx(manifest, Some("Apache-2.0"), Some("MIT"));
        assert_eq!(
            mit,
            "[package]\nname = \"x\"\npublish = false\nlicense = \"MIT\"\n"
        );
        let none = with_spdx(&mit, Some("MIT"), None);
        assert_eq!(none, "[package]\nname = \"x\"\npublish = false\n");
        assert_eq!(with_spdx(&none, None, Some("MIT")), mit);
    }
}
