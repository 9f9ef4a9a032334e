//! `rbuilder alpha generate`: the project scaffolded anew from its PROJECT file, replaying
//! `init` and every `create api` in the order PROJECT lists them, into another folder. A user
//! diffs their project against it to see what rbuilder would write today. `update` uses the
//! same replay to tell which of the user's files a new scaffold would write differently.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::{create_api, create_webhook, grafana, init, say};
use crate::cli::GenerateArgs;
use crate::project::Project;
use crate::scaffold::{Plan, project_context};

pub fn run(root: &Path, args: GenerateArgs) -> Result<()> {
    let input = root.join(&args.input_dir);
    let project = Project::load(&input)?;
    let output = root.join(&args.output_dir);
    check_output(&input, &output)?;
    if args.dry_run {
        let scratch = Scratch::new()?;
        replay(&input, &project, scratch.path())?;
        say(&format!(
            "would generate {} from {}: {}\ndry run: nothing was written\n",
            args.output_dir.display(),
            args.input_dir.join(crate::project::FILE).display(),
            commands(&project)
        ));
        return Ok(());
    }
    std::fs::create_dir_all(&output)
        .with_context(|| format!("cannot create {}", output.display()))?;
    if let Err(error) = replay(&input, &project, &output) {
        // Leave no half-made project behind.
        let _ = std::fs::remove_dir_all(&output);
        return Err(error);
    }
    say(&format!(
        "generated {} from {}: {}\nCompare: diff -r {} {}\n",
        args.output_dir.display(),
        args.input_dir.join(crate::project::FILE).display(),
        commands(&project),
        args.input_dir.display(),
        args.output_dir.display(),
    ));
    Ok(())
}

/// The commands a replay runs: `init and 3 create api`, `init, 1 create api and 1 create webhook`.
fn commands(project: &Project) -> String {
    let apis = project
        .resources
        .iter()
        .filter(|e| e.made_by_create_api())
        .count();
    match project
        .resources
        .iter()
        .filter(|r| r.webhooks.is_some())
        .count()
    {
        0 => format!("init and {apis} create api"),
        webhooks => format!("init, {apis} create api and {webhooks} create webhook"),
    }
}

/// The output folder must be new or empty: it is never merged with anything.
fn check_output(input: &Path, output: &Path) -> Result<()> {
    let same = match (input.canonicalize(), output.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        bail!(
            "--output-dir is the project itself; alpha generate writes a fresh copy to compare \
             with, so give a new folder, e.g. --output-dir ../{}-generated",
            input
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "project".into())
        );
    }
    match std::fs::read_dir(output) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                bail!(
                    "{} is not empty; alpha generate writes into a new or empty folder",
                    output.display()
                );
            }
            Ok(())
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error).with_context(|| format!("cannot read {}", output.display())),
    }
}

/// Scaffolds `project` (read from `input`) into the empty folder `output`: init with its
/// settings and `input`'s license header, then one `create api` per PROJECT entry, then their
/// webhooks. Each command gets its request from the entry itself, typed: no command line is
/// rebuilt and parsed again.
pub(super) fn replay(input: &Path, project: &Project, output: &Path) -> Result<()> {
    let mut fresh = project.clone();
    fresh.resources.clear();
    fresh.plugins = Default::default();
    fresh.cli_version = Some(crate::project::CLI_VERSION.to_owned());
    // The license header of the project's files, not this year's.
    let ctx = project_context(input, &fresh);
    init::plan(output, &fresh, &ctx)?.apply()?;
    for entry in project.resources.iter().filter(|e| e.made_by_create_api()) {
        let replayed = || -> Result<()> {
            let request = create_api::replay_request(input, project, entry)?;
            let (plan, _) = create_api::plan_request(output, Project::load(output)?, request)?;
            plan.apply()
        };
        replayed().with_context(|| {
            format!(
                "cannot replay `create api` for {}/{} {}",
                entry.group, entry.version, entry.kind
            )
        })?;
    }
    // Webhooks after every API, as kubebuilder replays them: a conversion needs its spokes.
    for entry in &project.resources {
        let Some(webhooks) = &entry.webhooks else {
            continue;
        };
        let request = create_webhook::Request::replaying(entry, webhooks);
        let replayed = || -> Result<()> {
            let (plan, _) = create_webhook::plan(output, Project::load(output)?, &request, false)?;
            plan.apply()
        };
        replayed().with_context(|| {
            format!(
                "cannot replay `create webhook` for {}/{} {}",
                entry.group, entry.version, entry.kind
            )
        })?;
    }
    if project.plugins.grafana.is_some() {
        // With the project's own list of custom metrics, so that their dashboard comes too.
        let config = std::fs::read_to_string(input.join(grafana::CONFIG)).ok();
        let mut plan = Plan::new(output);
        grafana::plan(&mut plan, &ctx, config)?;
        let mut replayed = Project::load(output)?;
        replayed.plugins.grafana = Some(Default::default());
        plan.update(crate::project::FILE, |_| replayed.to_yaml())?;
        plan.apply()?;
    }
    Ok(())
}

/// A temporary folder, deleted when dropped.
pub(super) struct Scratch(PathBuf);

impl Scratch {
    pub(super) fn new() -> Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!("rbuilder-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&dir)
            .with_context(|| format!("cannot create a temporary folder {}", dir.display()))?;
        Ok(Self(dir))
    }

    pub(super) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
