//! `rbuilder update`: brings the files rbuilder owns (the runtime, the `manifests` binary) to
//! what the running rbuilder writes, and Cargo.lock to the crates it was tested with (keeping
//! the versions the user chose), records its version in PROJECT, and tells apart the user's
//! files that rbuilder's templates changed since (by the record, PROJECT.sum) from those the user
//! changed, for the user to port by hand. A hand-edited owned file is never overwritten without
//! `--force`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::{Result, anyhow, bail};

use super::generate::{Scratch, replay};
use super::{dry_run_with_report, finish, owned_files};
use crate::cli::UpdateArgs;
use crate::project::{self, CLI_VERSION, Project};
use crate::scaffold::lockfile::Lock;
use crate::scaffold::owned::{self, State};
use crate::scaffold::project_context;
use crate::scaffold::record::{self, Record};
use crate::scaffold::{Plan, Templates, paths};

/// Files a new scaffold writes differently from the project's by design: they are generated
/// from the code (`make manifests`), or record the project's history.
const NOT_COMPARED: &[&str] = &[project::FILE, record::FILE, paths::ROLE, paths::CARGO_LOCK];

pub fn run(root: &Path, args: UpdateArgs) -> Result<()> {
    let mut project = Project::load(root)?;
    refuse_a_project_made_before_the_runtime(root, &project)?;
    let record = match std::fs::read_to_string(root.join(record::FILE)) {
        Ok(text) => Record::parse(&text)?,
        Err(_) => Record::default(),
    };
    let templates = Templates::load(owned_files::TEMPLATES)?;
    let ctx = project_context(root, &project);
    let rendered = owned_files::render(&templates, &ctx, owned_files::Manifests::of(root))?;

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

    let from = project.cli_version.clone();
    project.cli_version = Some(CLI_VERSION.to_owned());
    plan.update(project::FILE, |_| project.to_yaml())?;

    // A dry run says all that the run would, in the conditional.
    let dry_run = args.dry_run;
    let would =
        |done: &str, planned: &str| -> String { if dry_run { planned } else { done }.to_owned() };
    let mut report = match &from {
        Some(from) if from != CLI_VERSION => format!(
            "{} the rbuilder-owned files from rbuilder {from} to rbuilder {CLI_VERSION}.\n",
            would("Updated", "Would update")
        ),
        Some(_) => format!("The rbuilder-owned files are those of rbuilder {CLI_VERSION}.\n"),
        None => format!(
            "{} the rbuilder-owned files to rbuilder {CLI_VERSION} (PROJECT named no version).\n",
            would("Updated", "Would update")
        ),
    };
    report.push_str(&plan_lock(root, &project, &record, &mut plan, dry_run)?);
    let refused = !edited.is_empty() && !args.force;
    if !edited.is_empty() {
        report.push_str(&match (args.force, dry_run) {
            (true, false) => format!("--force overwrote your changes to: {}\n", edited.join(", ")),
            (true, true) => format!(
                "--force would overwrite your changes to: {}\n",
                edited.join(", ")
            ),
            (false, _) => format!(
                "Refused (without --force): {} changed since rbuilder wrote {}.\n",
                edited.join(", "),
                if edited.len() == 1 { "it" } else { "them" },
            ),
        });
    }
    // A project can outgrow a replay (e.g. `edit --multigroup` after its first APIs): then the
    // comparison is skipped, not the update.
    match compare_user_files(root, &project, &record, &mut plan) {
        Err(error) => report.push_str(&format!(
            "Could not compare your files with a new scaffold: {error:#}"
        )),
        Ok(comparison) => report.push_str(&comparison.describe()),
    }
    report.push_str(&ported_by_hand(root)?);
    if refused {
        let refusal = anyhow!(
            "{} changed since rbuilder wrote {}; update would overwrite {}: move your changes \
             out (into your own files, or the runtime's hooks), then run `rbuilder update` \
             again, or `rbuilder update --force` to overwrite",
            edited.join(", "),
            if edited.len() == 1 { "it" } else { "them" },
            if edited.len() == 1 { "it" } else { "them" },
        );
        // The dry run shows all it found first; both exit non-zero, and neither writes.
        if dry_run {
            super::say(&format!("{}\n{report}\n\n", plan.describe()));
        }
        return Err(refusal);
    }
    if dry_run {
        dry_run_with_report(plan, &report)
    } else {
        finish(plan, false, &report)
    }
}

/// Plans Cargo.lock brought to this rbuilder's tested resolution, keeping the versions the
/// user chose (see `Lock::merged`); says what changed, in a line or two.
fn plan_lock(
    root: &Path,
    project: &Project,
    record: &Record,
    plan: &mut Plan,
    dry_run: bool,
) -> Result<String> {
    let tested = Lock::tested(project.project_name.as_ref())?;
    let manifest = std::fs::read_to_string(root.join(paths::CARGO_TOML)).unwrap_or_default();
    let current = plan.read(paths::CARGO_LOCK)?;
    let theirs = match current.as_deref().map(Lock::parse) {
        None => Lock::default(),
        Some(Ok(lock)) => lock,
        Some(Err(error)) => {
            return Ok(format!(
                "Cargo.lock left as it is: {error:#}; `cargo update --workspace` repairs it.\n"
            ));
        }
    };
    let (merged, kept) = match theirs.merged(&tested, &record.crates, &manifest) {
        Ok(merged) => merged,
        Err(error) => {
            return Ok(format!(
                "Cargo.lock left as it is: {error:#}; run `cargo update --workspace`, then \
                 `rbuilder update` again.\n"
            ));
        }
    };
    let text = merged.render();
    let mut said = String::new();
    if current.as_deref() != Some(text.as_str()) {
        let (before, after) = (by_name(&theirs), by_name(&merged));
        let moved: Vec<String> = after
            .iter()
            .filter_map(|(name, versions)| match before.get(name) {
                Some(old) if old != versions => Some(format!("{name} {old} -> {versions}")),
                None => Some(format!("{name} {versions} (new)")),
                _ => None,
            })
            .collect();
        said.push_str(&format!(
            "Cargo.lock: {} the crates this rbuilder was tested with{}.\n",
            if dry_run { "would take" } else { "took" },
            match moved.is_empty() {
                true => String::new(),
                false => format!(" ({})", moved.join(", ")),
            }
        ));
        match current {
            Some(_) => plan.update(paths::CARGO_LOCK, |_| Ok(text))?,
            None => plan.create(paths::CARGO_LOCK, text)?,
        }
    } else {
        said.push_str("Cargo.lock: the crates this rbuilder was tested with already.\n");
    }
    plan.record_crates(tested.external_versions().into_iter().collect());
    if !kept.is_empty() {
        // After a `cargo update`, nearly every crate: the first few say what happened.
        const SHOWN: usize = 8;
        let mut shown = kept
            .iter()
            .take(SHOWN)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if kept.len() > SHOWN {
            shown.push_str(&format!(" and {} more", kept.len() - SHOWN));
        }
        said.push_str(&format!(
            "Cargo.lock keeps the versions you chose: {shown} (rbuilder was tested with others; \
             should a build say the lock needs updating, `cargo update --workspace` settles it \
             with the fewest changes).\n"
        ));
    }
    Ok(said)
}

/// The versions of each crate from a registry in `lock`, by name ("0.21.7, 0.22.1" where it
/// holds several).
fn by_name(lock: &Lock) -> BTreeMap<String, String> {
    let mut versions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, version) in lock.external_versions() {
        versions.entry(name).or_default().push(version);
    }
    versions
        .into_iter()
        .map(|(name, versions)| (name, versions.join(", ")))
        .collect()
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
    for dir in ["runtime", "src", "manifests"] {
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

/// How the user's files compare with what a scaffold of `project` writes today, told apart by
/// the record of what rbuilder last wrote (PROJECT.sum).
#[derive(Debug, Default)]
struct Comparison {
    /// rbuilder's templates changed since it wrote these, which the user has not edited.
    templates_changed: Vec<String>,
    /// rbuilder's templates changed these, and so did the user.
    both_changed: Vec<String>,
    /// A scaffold writes these today; the project lacks them.
    new_files: Vec<String>,
    /// These differ from a scaffold, and the record does not say by whom.
    unrecorded: Vec<String>,
    /// These differ by the user's changes alone: rbuilder's templates write them as before.
    yours: Vec<String>,
}

impl Comparison {
    fn describe(&self) -> String {
        let list = |files: &[String]| format!("  {}\n", files.join("\n  "));
        let mut out = String::new();
        if !self.templates_changed.is_empty() {
            out.push_str(&format!(
                "rbuilder's templates changed these of your files since rbuilder wrote them, and \
                 you have not edited them: take the new version from a new scaffold if you want \
                 it (update leaves your files alone):\n{}",
                list(&self.templates_changed)
            ));
        }
        if !self.both_changed.is_empty() {
            out.push_str(&format!(
                "rbuilder's templates changed these, and so did you: port the templates' change \
                 by hand:\n{}",
                list(&self.both_changed)
            ));
        }
        if !self.new_files.is_empty() {
            out.push_str(&format!(
                "A new scaffold also writes these, which the project lacks:\n{}",
                list(&self.new_files)
            ));
        }
        if !self.unrecorded.is_empty() {
            out.push_str(&format!(
                "These differ from a new scaffold, by your changes or by rbuilder's templates: \
                 {} has no record of them:\n{}",
                record::FILE,
                list(&self.unrecorded)
            ));
        }
        if !self.yours.is_empty() {
            out.push_str(&format!(
                "Changed by you alone, as rbuilder's templates still write them (nothing to \
                 port):\n{}",
                list(&self.yours)
            ));
        }
        if out.is_empty() {
            return "Your files are as a new scaffold writes them.".to_owned();
        }
        out.push_str("To see how: rbuilder alpha generate --output-dir <new folder>, then diff.");
        out
    }
}

/// Compares the user's files with a scaffold of `project` today; each file that is as the
/// scaffold writes it is recorded so in `plan`.
fn compare_user_files(
    root: &Path,
    project: &Project,
    record: &Record,
    plan: &mut Plan,
) -> Result<Comparison> {
    let scratch = Scratch::new()?;
    replay(root, project, scratch.path())?;
    let mut fresh = Vec::new();
    walk(scratch.path(), scratch.path(), &mut fresh)?;
    fresh.sort();
    let mut comparison = Comparison::default();
    for path in fresh {
        if NOT_COMPARED.contains(&path.as_str()) || Path::new(&path).starts_with(paths::CRD_BASES) {
            continue;
        }
        let Ok(new) = std::fs::read_to_string(scratch.path().join(&path)) else {
            continue;
        };
        if owned::is_owned(&new) {
            continue;
        }
        let current = std::fs::read_to_string(root.join(&path)).ok();
        if current.as_deref() == Some(new.as_str()) {
            plan.record_base(path, &new);
            continue;
        }
        let current_digest = current.as_deref().map(record::digest);
        match (record.files.get(&path), current_digest) {
            (Some(base), _) if *base == record::digest(&new) => comparison.yours.push(path),
            (Some(_), None) => comparison.yours.push(path),
            (Some(base), Some(now)) if *base == now => comparison.templates_changed.push(path),
            (Some(_), Some(_)) => comparison.both_changed.push(path),
            (None, None) => comparison.new_files.push(path),
            (None, Some(_)) => comparison.unrecorded.push(path),
        }
    }
    Ok(comparison)
}
