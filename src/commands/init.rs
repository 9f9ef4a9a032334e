//! `rbuilder init`: a new operator project in the current folder.

use std::path::Path;

use anyhow::{Context as _, Result, bail};

use super::edit::{Plugin, parse_plugins};
use super::{autoupdate, finish, grafana, helm, owned_files};
use crate::cli::InitArgs;
use crate::license;
use crate::manifests::role_file;
use crate::model::{Domain, ProjectName};
use crate::project::{self, License, Project};
use crate::scaffold::context::context_with_header;
use crate::scaffold::lockfile::Lock;
use crate::scaffold::project_context;
use crate::scaffold::{Additions, Entry, IfExists, Order, Plan, Templates, paths};

/// Where init's templates live under `templates/`; each renders to the same path in the project.
const TEMPLATE_DIR: &str = "init/";

pub fn run(root: &Path, args: InitArgs) -> Result<()> {
    let name = match &args.project_name {
        Some(name) => ProjectName::parse(name)?,
        None => {
            let folder = root
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            ProjectName::parse(&folder).with_context(|| {
                format!(
                    "the project name comes from the folder's name '{folder}', which cannot be \
                     used; rename the folder or pass --project-name"
                )
            })?
        }
    };
    let domain = Domain::parse(&args.domain)?;
    if let Some(owner) = &args.owner {
        license::check_owner(owner)?;
    }
    let plugins = match &args.plugins {
        Some(list) => parse_plugins(list, "init")?,
        None => Vec::new(),
    };
    // Read before anything is written: a file that cannot be the header is refused first.
    let license_file = match &args.license_file {
        Some(path) => {
            if args.owner.is_some() {
                bail!("{}", license::OWNER_WITH_FILE);
            }
            Some(license::read_file(path)?)
        }
        None => None,
    };
    check_folder(root)?;

    let mut project = Project::new(&name, &domain);
    project.owner = args.owner.clone();
    // The file overrides --license, as kubebuilder's --license-file does.
    project.license = match license_file {
        Some(_) => License::Custom,
        None => args.license.into(),
    };
    project.namespaced = args.namespaced;
    project.multigroup = args.multigroup;

    let ctx = match license_file {
        Some(text) => context_with_header(&project, Some(text)),
        None => project_context(root, &project),
    };
    let mut plan = plan(root, &project, &ctx)?;
    let mut next = format!(
        "Next: add an API, then build and test:\n  \
         rbuilder create api --group <group> --version v1 --kind <Kind>\n  \
         make test        # unit tests, and integration tests on a real API server\n  \
         make manifests   # regenerate config/crd and config/rbac from the code\n\
         The project is named '{name}'; its manager binary is target/debug/{name}."
    );
    // The plugins' files, from the files just planned, as `edit --plugins` makes them.
    for plugin in plugins {
        match plugin {
            Plugin::Grafana => {
                grafana::plan(&mut plan, &ctx, None)?;
                project.plugins.grafana = Some(Default::default());
            }
            Plugin::Helm => {
                next.push('\n');
                next.push_str(&helm::plan(&mut plan, &project, &ctx, false)?);
                project.plugins.helm = Some(Default::default());
            }
            Plugin::Autoupdate => {
                next.push('\n');
                next.push_str(&autoupdate::plan(&mut plan, &ctx, false)?);
                project.plugins.autoupdate = Some(Default::default());
            }
        }
        plan.update(project::FILE, |_| project.to_yaml())?;
    }
    finish(plan, args.dry_run, &next)
}

/// The files of a new project at `root`, rendered with `ctx`.
pub(super) fn plan(root: &Path, project: &Project, ctx: &tera::Context) -> Result<Plan> {
    // Like every template, init's lay Rust out as rustfmt does, for any project name (the
    // golden trees check it): rbuilder runs no rustfmt.
    let prefixes = [&[TEMPLATE_DIR], owned_files::TEMPLATES].concat();
    let templates = Templates::load(&prefixes)?;
    let mut plan = Plan::new(root);
    // A new project: every file is created (the folder was checked to hold none of them).
    let mut add = Additions::new(Order::FilesFirst);
    for name in templates.names(TEMPLATE_DIR) {
        let out = name.strip_prefix(TEMPLATE_DIR).unwrap_or(&name).to_owned();
        add.add(Entry::template(out, name, IfExists::Refuse));
    }
    for (path, content) in owned_files::render(&templates, ctx, owned_files::Manifests::Package)? {
        add.add(Entry::text(path, content, IfExists::Refuse));
    }
    add.plan(&mut plan, &templates, ctx, false)?;
    // Written by the project's `manifests` binary from then on, with the same code: no
    // controller yet, so no rules.
    plan.create(paths::ROLE, role_file(project.namespaced, &[])?)?;
    plan.create(project::FILE, project.to_yaml()?)?;
    // The crate versions rbuilder's tests build with, so that the project builds them too
    // (`--locked`) rather than whatever is newest on the day it is first built.
    let lock = Lock::tested(project.project_name.as_ref())?;
    plan.record_crates(lock.external_versions().into_iter().collect());
    plan.create(paths::CARGO_LOCK, lock.render())?;
    Ok(plan)
}

/// init makes a new project: it refuses a folder that already holds one, or holds anything
/// but hidden files (.git, editor settings) and a license.
fn check_folder(root: &Path) -> Result<()> {
    for (file, what) in [
        (project::FILE, "an rbuilder (or kubebuilder) project"),
        (paths::CARGO_TOML, "a Cargo package"),
        ("src/main.rs", "a Rust program"),
    ] {
        if root.join(file).exists() {
            bail!(
                "{} already has {file}: it is already {what}; `rbuilder init` only creates new \
                 projects. Run it in a new, empty folder (use `rbuilder create api` to extend \
                 an rbuilder project)",
                root.display()
            );
        }
    }
    let entries = std::fs::read_dir(root)
        .with_context(|| format!("cannot read the folder {}", root.display()))?;
    let mut others: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.') && !n.starts_with("LICENSE"))
        .collect();
    if !others.is_empty() {
        others.sort();
        bail!(
            "{} is not empty (it has {}); `rbuilder init` needs an empty folder (hidden files \
             such as .git and a LICENSE are fine): make a new folder, or move those files away",
            root.display(),
            others.join(", ")
        );
    }
    Ok(())
}
