//! `rbuilder alpha generate`: the project scaffolded anew from its PROJECT file, replaying
//! `init` and every `create api` in the order PROJECT lists them, into another folder. A user
//! diffs their project against it to see what rbuilder would write today. `update` uses the
//! same replay to tell which of the user's files a new scaffold would write differently.
//!
//! Given a kubebuilder project, it migrates it: its PROJECT becomes an rbuilder PROJECT
//! (`crate::kubebuilder`), replayed the same way, and what could not be carried over is listed
//! at the end, with the exit status [`Outcome::LeftOut`] (the project is written all the same).

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::{Outcome, autoupdate, create_api, create_webhook, grafana, helm, init, say};
use crate::cli::GenerateArgs;
use crate::kubebuilder::{self, GO_V4};
use crate::project::{FILE, Project, ResourceEntry};
use crate::scaffold::{Plan, context_with_header, project_context};

pub fn run(root: &Path, args: GenerateArgs) -> Result<Outcome> {
    let input = root.join(&args.input_dir);
    let source = Source::read(root, &input, &args.external_api_path)?;
    let project = source.project();
    let output = root.join(&args.output_dir);
    check_output(&input, &output)?;
    let from = match &source {
        Source::Rbuilder(_) => args.input_dir.join(FILE).display().to_string(),
        Source::Kubebuilder(_) => format!(
            "the kubebuilder project {} ({GO_V4})",
            args.input_dir.join(FILE).display()
        ),
    };
    let boilerplate = source.boilerplate();
    if args.dry_run {
        let scratch = Scratch::new()?;
        let files = source.files(&input)?;
        replay_with(&input, project, scratch.path(), boilerplate, &files)?;
        say(&format!(
            "would generate {} from {from}: {}\n{}dry run: nothing was written\n",
            args.output_dir.display(),
            commands(project),
            source.left_out_report(),
        ));
        return Ok(source.outcome());
    }
    let existed = output.exists();
    std::fs::create_dir_all(&output)
        .with_context(|| format!("cannot create {}", output.display()))?;
    let files = source.files(&input)?;
    if let Err(error) = replay_with(&input, project, &output, boilerplate, &files) {
        // Leave no half-made project behind, and the folder as it was.
        if existed {
            empty(&output);
        } else {
            let _ = std::fs::remove_dir_all(&output);
        }
        return Err(error);
    }
    let next = match &source {
        Source::Rbuilder(_) => format!(
            "Compare: diff -r {} {}\n",
            args.input_dir.display(),
            args.output_dir.display(),
        ),
        Source::Kubebuilder(_) => format!(
            "{}The Go code is not translated: rbuilder's docs/migrating-from-kubebuilder.md \
             says where each Go file's logic goes in the Rust project.\n\
             Next: cd {} && make test\n",
            source.left_out_report(),
            args.output_dir.display(),
        ),
    };
    say(&format!(
        "generated {} from {from}: {}\n{next}",
        args.output_dir.display(),
        commands(project),
    ));
    Ok(source.outcome())
}

/// What `alpha generate` scaffolds: an rbuilder project's PROJECT, or a kubebuilder project's,
/// migrated.
enum Source {
    Rbuilder(Project),
    Kubebuilder(kubebuilder::Migration),
}

impl Source {
    /// The project at `input`: a kubebuilder project if its PROJECT says so, else rbuilder's
    /// (with rbuilder's messages when it is neither). `crds` are the CRD files of a
    /// kubebuilder project's external kinds, relative to `root`.
    fn read(root: &Path, input: &Path, crds: &[String]) -> Result<Self> {
        if let Ok(text) = std::fs::read_to_string(input.join(FILE))
            && kubebuilder::is_kubebuilder(&text)
        {
            let mut files = Vec::new();
            for path in crds {
                let text = crate::external::read(&root.join(path).display().to_string())?;
                files.push(kubebuilder::CrdFile {
                    path: path.clone(),
                    text,
                });
            }
            return Ok(Self::Kubebuilder(kubebuilder::migrate(
                input, &text, &files,
            )?));
        }
        if !crds.is_empty() {
            bail!(
                "--external-api-path is for migrating a kubebuilder project, whose external \
                 kinds have no CRD file; an rbuilder project's PROJECT names its own: drop it"
            );
        }
        Ok(Self::Rbuilder(Project::load(input)?))
    }

    /// Files to write into the new project before its APIs: the CRD files of other projects'
    /// kinds that it keeps (a migration's, or those an rbuilder project's PROJECT names inside
    /// it, read from `input`).
    fn files(&self, input: &Path) -> Result<Vec<(String, String)>> {
        match self {
            Source::Rbuilder(project) => external_crds(input, project),
            Source::Kubebuilder(migration) => Ok(migration.files.clone()),
        }
    }

    fn project(&self) -> &Project {
        match self {
            Source::Rbuilder(project) => project,
            Source::Kubebuilder(migration) => &migration.project,
        }
    }

    /// The license header to scaffold with.
    fn boilerplate(&self) -> Header {
        match self {
            Source::Rbuilder(_) => Header::Input,
            Source::Kubebuilder(migration) => match &migration.boilerplate {
                Some(text) => Header::Text(text.clone()),
                None => Header::Settings,
            },
        }
    }

    /// What a migration left out, listed; nothing for an rbuilder project.
    fn left_out_report(&self) -> String {
        match self {
            Source::Rbuilder(_) => String::new(),
            Source::Kubebuilder(migration) => kubebuilder::report(&migration.left_out),
        }
    }

    fn outcome(&self) -> Outcome {
        match self {
            Source::Kubebuilder(migration) if !migration.left_out.is_empty() => Outcome::LeftOut,
            _ => Outcome::Done,
        }
    }
}

/// Deletes what is in `dir`, keeping `dir`.
fn empty(dir: &Path) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let _ = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
    }
}

/// The commands a replay runs: `init and 3 create api`, `init, 1 create api and 1 create webhook`.
fn commands(project: &Project) -> String {
    // A kind's second controllers are one `create api --controller-name` each.
    let apis = project
        .resources
        .iter()
        .filter(|e| e.made_by_create_api())
        .map(|e| 1 + e.named_controllers().count())
        .sum::<usize>();
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
    let files = external_crds(input, project)?;
    replay_with(input, project, output, Header::Input, &files)
}

/// The CRD files of `project`'s kinds whose types are made from one (external kinds, and kinds
/// migrated from kubebuilder) that the project at `input` holds (a `path` in PROJECT inside
/// it), which a replay copies, so that the new project has what its types are made from. One
/// outside (`../crds/...`) stays where it is, and is read from there. A migrated kind's sample
/// is copied too: it was the kubebuilder project's, which its API comes from.
fn external_crds(input: &Path, project: &Project) -> Result<Vec<(String, String)>> {
    let mut files: Vec<(String, String)> = Vec::new();
    for entry in project.resources.iter().filter(|e| e.types_from_crd()) {
        let sample = format!(
            "config/samples/{}_{}_{}.yaml",
            entry.group,
            entry.version,
            entry.kind.lower()
        );
        if let Ok(text) = std::fs::read_to_string(input.join(&sample)) {
            files.push((sample, text));
        }
    }
    for entry in project
        .resources
        .iter()
        .filter(|e| e.external || e.types_from_crd())
    {
        let Some(path) = entry.path.as_deref() else {
            continue;
        };
        let inside = Path::new(path)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !inside || files.iter().any(|(p, _)| p == path) {
            continue;
        }
        let full = input.join(path);
        let text = std::fs::read_to_string(&full).with_context(|| {
            format!("cannot read {}, the CRD of {}", full.display(), entry.kind)
        })?;
        files.push((path.to_owned(), text));
    }
    Ok(files)
}

/// The license header a replay writes.
enum Header {
    /// The input's `hack/boilerplate.txt` (an rbuilder project's, which every command reads).
    Input,
    /// This text (a migrated project's, from its `hack/boilerplate.go.txt`).
    Text(String),
    /// The header made from the project's settings.
    Settings,
}

/// [`replay`], with the license header `header`, and `files` (path, text) written after init:
/// the CRD files of external kinds that the project keeps, which its types are then made from
/// (the others are read relative to `input`).
fn replay_with(
    input: &Path,
    project: &Project,
    output: &Path,
    header: Header,
    files: &[(String, String)],
) -> Result<()> {
    let mut fresh = project.clone();
    fresh.resources.clear();
    fresh.plugins = Default::default();
    fresh.cli_version = Some(crate::project::CLI_VERSION.to_owned());
    // The license header of the project's files, not this year's.
    let ctx = match header {
        Header::Input => project_context(input, &fresh),
        Header::Text(text) => context_with_header(&fresh, Some(text)),
        Header::Settings => context_with_header(&fresh, None),
    };
    init::plan(output, &fresh, &ctx)?.apply()?;
    // Where an external kind's CRD file is read from: the new project, if it keeps it (a
    // migration's are only there).
    let crds_in = |entry: &ResourceEntry| {
        let kept = files
            .iter()
            .any(|(path, _)| entry.path.as_deref() == Some(path));
        if kept { output } else { input }
    };
    if !files.is_empty() {
        let mut plan = Plan::new(output);
        for (path, text) in files {
            plan.create(path.clone(), text.clone())?;
        }
        plan.apply()?;
    }
    for entry in project.resources.iter().filter(|e| e.made_by_create_api()) {
        let replayed = || -> Result<()> {
            let request = create_api::replay_request(crds_in(entry), project, entry)?;
            let (mut plan, _) = create_api::plan_request(output, Project::load(output)?, request)?;
            plan.apply()
        };
        replayed().with_context(|| {
            format!(
                "cannot replay `create api` for {}/{} {}",
                entry.group, entry.version, entry.kind
            )
        })?;
    }
    // Second controllers after every API, as kubebuilder replays controllers.
    for entry in &project.resources {
        for name in entry.named_controllers() {
            let replayed = || -> Result<()> {
                let replayed = Project::load(output)?;
                let request =
                    create_api::replay_second_controller(crds_in(entry), &replayed, entry, name)?;
                let (mut plan, _) = create_api::plan_request(output, replayed, request)?;
                plan.apply()
            };
            replayed().with_context(|| {
                format!(
                    "cannot replay `create api --controller-name {name}` for {}/{} {}",
                    entry.group, entry.version, entry.kind
                )
            })?;
        }
    }
    // Webhooks after every API, as kubebuilder replays them: a conversion needs its spokes.
    for entry in &project.resources {
        let Some(webhooks) = &entry.webhooks else {
            continue;
        };
        let replayed = || -> Result<()> {
            let request = create_webhook::Request::replaying(crds_in(entry), entry, webhooks)?;
            let (mut plan, _) =
                create_webhook::plan(output, Project::load(output)?, request, false)?;
            plan.apply()
        };
        replayed().with_context(|| {
            format!(
                "cannot replay `create webhook` for {}/{} {}",
                entry.group, entry.version, entry.kind
            )
        })?;
    }
    if project.plugins.helm.is_some() {
        // Last, as kubebuilder's users run it: values.yaml is read from config/ as the replay
        // leaves it.
        let mut plan = Plan::new(output);
        let mut replayed = Project::load(output)?;
        helm::plan(&mut plan, &replayed, &ctx, false)?;
        replayed.plugins.helm = Some(Default::default());
        plan.update(crate::project::FILE, |_| replayed.to_yaml())?;
        plan.apply()?;
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
    if project.plugins.autoupdate.is_some() {
        let mut plan = Plan::new(output);
        autoupdate::plan(&mut plan, &ctx, false)?;
        let mut replayed = Project::load(output)?;
        replayed.plugins.autoupdate = Some(Default::default());
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
