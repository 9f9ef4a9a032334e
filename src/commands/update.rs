//! `rbuilder update`: brings the files rbuilder owns (the runtime, the `manifests` binary) to
//! what the running rbuilder writes, records its version in PROJECT, and lists the user's files
//! that a new scaffold would write differently, for the user to port by hand. A hand-edited
//! owned file is never overwritten without `--force`.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Result, bail};

use super::generate::{Scratch, replay};
use super::{dry_run_with_report, finish, owned_files};
use crate::cli::UpdateArgs;
use crate::project::{self, CLI_VERSION, Project};
use crate::scaffold::owned::{self, State};
use crate::scaffold::project_context;
use crate::scaffold::{Plan, Templates, paths};

/// Files a new scaffold writes differently from the project's by design: they are generated
/// from the code (`make manifests`), or record the project's history.
const NOT_COMPARED: &[&str] = &[project::FILE, paths::ROLE, "Cargo.lock"];

pub fn run(root: &Path, args: UpdateArgs) -> Result<()> {
    let mut project = Project::load(root)?;
    refuse_a_project_made_before_the_runtime(root, &project)?;
    let templates = Templates::load(owned_files::TEMPLATES)?;
    let ctx = project_context(root, &project);
    let rendered = owned_files::render(&templates, &ctx)?;

    let mut plan = Plan::new(root);
    let mut edited = Vec::new();
    for (path, content) in &rendered {
        match plan.read(path)? {
            None => plan.create(path.clone(), content.clone())?,
            Some(current) if current == *content => {}
            Some(current) => {
                if owned::state(&current) == State::Edited {
                    edited.push(path.clone());
                }
                plan.update(path.clone(), |_| Ok(content.clone()))?;
            }
        }
    }
    // Owned files this rbuilder no longer writes (e.g. a runtime module that was merged into
    // another) go, unless edited: those are the user's now.
    let current: BTreeSet<&str> = rendered.iter().map(|(path, _)| path.as_str()).collect();
    for path in owned_files_on_disk(root)? {
        if current.contains(path.as_str()) {
            continue;
        }
        match plan.read(&path)?.map(|text| owned::state(&text)) {
            Some(State::AsWritten) => plan.delete(path)?,
            _ => edited.push(path),
        }
    }
    if !edited.is_empty() && !args.force {
        bail!(
            "{} changed since rbuilder wrote {}; update would overwrite {}: move your changes \
             out (into your own files, or the runtime's hooks), then run `rbuilder update` \
             again, or `rbuilder update --force` to overwrite",
            edited.join(", "),
            if edited.len() == 1 { "it" } else { "them" },
            if edited.len() == 1 { "it" } else { "them" },
        );
    }

    let from = project.cli_version.clone();
    project.cli_version = Some(CLI_VERSION.to_owned());
    plan.update(project::FILE, |_| project.to_yaml())?;

    // A project can outgrow a replay (e.g. `edit --multigroup` after its first APIs): then the
    // comparison is skipped, not the update.
    let differing = user_files_that_differ(root, &project);
    // A dry run says all that the run would, in the conditional.
    let dry_run = args.dry_run;
    let mut report = match &from {
        Some(from) if from != CLI_VERSION => format!(
            "{} the rbuilder-owned files from rbuilder {from} to {CLI_VERSION}.\n",
            if dry_run { "Would update" } else { "Updated" }
        ),
        _ => format!("The rbuilder-owned files are those of rbuilder {CLI_VERSION}.\n"),
    };
    if !edited.is_empty() {
        report.push_str(&format!(
            "--force {} your changes to: {}\n",
            if dry_run {
                "would overwrite"
            } else {
                "overwrote"
            },
            edited.join(", ")
        ));
    }
    match differing {
        Err(error) => report.push_str(&format!(
            "Could not compare your files with a new scaffold: {error:#}"
        )),
        Ok(differing) if differing.is_empty() => {
            report.push_str("Your files are as a new scaffold writes them.")
        }
        Ok(differing) => report.push_str(&format!(
            "A new scaffold writes these of your files differently (they are yours: update \
             leaves them alone):\n  {}\nTo see how: rbuilder alpha generate --output-dir <new \
             folder>, then diff.",
            differing.join("\n  ")
        )),
    }
    report.push_str(&ported_by_hand(root)?);
    if dry_run {
        dry_run_with_report(plan, &report)
    } else {
        finish(plan, false, &report)
    }
}

/// A project made before rbuilder owned any of its files (before the operator runtime): its
/// manager, the controllers' machinery and `src/bin/manifests.rs` are the user's own files,
/// with no ownership header, and its PROJECT records no `cliVersion` (`init`, `alpha generate`
/// and `update` have written one since). There is nothing `update` may rewrite: without this,
/// it took the old `src/bin/manifests.rs` for an owned file edited by hand. Such a project is
/// scaffolded anew, and its code moved over.
fn refuse_a_project_made_before_the_runtime(root: &Path, project: &Project) -> Result<()> {
    if project.cli_version.is_some() || !owned_files_on_disk(root)?.is_empty() {
        return Ok(());
    }
    let name = &project.project_name;
    bail!(
        "this project was made by an rbuilder from before the operator runtime (PROJECT records \
         no cliVersion, and no file says rbuilder owns it): its manager and controller \
         machinery are files of your own, which update does not rewrite, so nothing was \
         changed. Scaffold it anew in a new folder with `rbuilder alpha generate --output-dir \
         ../{name}-new`, then move your code (API types, reconcile logic, tests) into it: see \
         \"Projects made before the runtime\" in rbuilder's docs/upgrading.md"
    );
}

/// What the user must port by hand where the runtime's API changed since the project was made:
/// the files that still use the former API, and how.
fn ported_by_hand(root: &Path) -> Result<String> {
    let mut hints = String::new();
    let lib = std::fs::read_to_string(root.join(paths::LIB)).unwrap_or_default();
    if lib.contains("Operator {") && !lib.contains("webhooks:") {
        hints.push_str(
            "\nThe runtime's `Operator` has a `webhooks` field since rbuilder made this \
             project: add `webhooks: webhook::WEBHOOKS,` to OPERATOR and `pub mod webhook;` to \
             src/lib.rs, with src/webhook/mod.rs as alpha generate writes it (`rbuilder create \
             webhook` adds the webhooks to it).",
        );
    }
    if lib.contains("Operator {") {
        hints.push_str(
            "\nOPERATOR in src/lib.rs is written out field by field (`Operator { ... }`), which \
             breaks when a later runtime gives `Operator` a field: write it with \
             `Operator::new(name)` and its methods (`.version(..)`, `.controllers(..)`, \
             `.webhooks(..)`, `.crds(..)`, `.scope(..)`), as alpha generate does, and it keeps \
             compiling.",
        );
    }
    let old_conversions = old_conversion_files(root)?;
    if !old_conversions.is_empty() {
        hints.push_str(&format!(
            "\nThe runtime's conversion webhooks are now one per spoke: \
             `webhook::conversion::<Hub, Spoke>()` in src/webhook/<spoke>/<kind>_conversion.rs, \
             and `webhook::spoke` is gone. Move the `From`s of {} there, one file per spoke \
             (alpha generate writes them), and list each spoke's CONVERSION in \
             src/webhook/mod.rs.",
            old_conversions.join(", ")
        ));
    }
    Ok(hints)
}

/// The user's conversion files written for the runtime's conversion API of rbuilder 0.1.0
/// before spokes had files of their own (one registration listing every spoke).
fn old_conversion_files(root: &Path) -> Result<Vec<String>> {
    let mut files = Vec::new();
    walk(root, &root.join("src/webhook"), &mut files)?;
    files.retain(|path| {
        std::fs::read_to_string(root.join(path)).is_ok_and(|t| t.contains("webhook::spoke::<"))
    });
    files.sort();
    Ok(files)
}

/// The files under the project that carry rbuilder's ownership header.
fn owned_files_on_disk(root: &Path) -> Result<Vec<String>> {
    let mut found = Vec::new();
    for dir in ["runtime", "src"] {
        walk(root, &root.join(dir), &mut found)?;
    }
    found
        .retain(|path| std::fs::read_to_string(root.join(path)).is_ok_and(|t| owned::is_owned(&t)));
    Ok(found)
}

/// Every file under `dir`, relative to `root` with '/' separators; `target` folders skipped.
fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if entry.file_name() != "target" {
                walk(root, &path, out)?;
            }
        } else if let Ok(relative) = path.strip_prefix(root) {
            let parts: Vec<_> = relative.iter().map(|c| c.to_string_lossy()).collect();
            out.push(parts.join("/"));
        }
    }
    Ok(())
}

/// The user's files that a scaffold of `project` today would write differently (or that it
/// writes and the project lacks), sorted.
fn user_files_that_differ(root: &Path, project: &Project) -> Result<Vec<String>> {
    let scratch = Scratch::new()?;
    replay(root, project, scratch.path())?;
    let mut fresh = Vec::new();
    walk(scratch.path(), scratch.path(), &mut fresh)?;
    let mut differing: Vec<String> = fresh
        .into_iter()
        .filter(|path| !NOT_COMPARED.contains(&path.as_str()))
        .filter(|path| !Path::new(path).starts_with(paths::CRD_BASES))
        .filter(|path| {
            let new = std::fs::read(scratch.path().join(path)).ok();
            let new_is_owned = new
                .as_deref()
                .is_some_and(|text| owned::is_owned(&String::from_utf8_lossy(text)));
            !new_is_owned && std::fs::read(root.join(path)).ok() != new
        })
        .collect();
    differing.sort();
    Ok(differing)
}
