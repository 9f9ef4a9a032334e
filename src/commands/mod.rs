//! One module per command. Each validates its arguments into the model, builds a Plan, and
//! hands it to `finish`; none writes files itself.

mod autoupdate;
mod create_api;
mod create_webhook;
mod edit;
mod generate;
mod grafana;
mod group_dirs;
mod helm;
mod init;
mod owned_files;
mod update;

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::CommandFactory;

use crate::cli::{AlphaCommand, Cli, Command, CreateCommand};
use crate::scaffold::Plan;
use crate::versions::VERSIONS;

/// How a command that succeeded ended, for the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything asked for was done: exit status 0.
    Done,
    /// `alpha generate` migrated a kubebuilder project and wrote it, but left out what it
    /// lists: exit status [`Outcome::LEFT_OUT_STATUS`], so that a script notices.
    LeftOut,
}

impl Outcome {
    /// The exit status of [`Outcome::LeftOut`]; 1 is an error (and then nothing was written).
    pub const LEFT_OUT_STATUS: u8 = 3;
}

pub fn run(cli: Cli) -> Result<Outcome> {
    // Every command but a migration either does all it is asked or fails.
    let done = |result: Result<()>| result.map(|()| Outcome::Done);
    match cli.command {
        Command::Init(args) => done(init::run(&current_dir()?, args)),
        Command::Create(CreateCommand::Api(args)) => done(create_api::run(&current_dir()?, *args)),
        Command::Create(CreateCommand::Webhook(args)) => {
            done(create_webhook::run(&current_dir()?, args))
        }
        Command::Edit(args) => done(edit::run(&current_dir()?, args)),
        Command::Update(args) => done(update::run(&current_dir()?, args)),
        Command::Alpha(AlphaCommand::Generate(args)) => generate::run(&current_dir()?, args),
        Command::Version => {
            print!("{}", version_text());
            Ok(Outcome::Done)
        }
        Command::Completion { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "rbuilder",
                &mut std::io::stdout(),
            );
            Ok(Outcome::Done)
        }
    }
}

fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().context("cannot read the current folder")
}

fn version_text() -> String {
    format!(
        "rbuilder {}\ngenerates projects for: kube {}, k8s-openapi {} (Kubernetes {}, feature {})\n",
        crate::versions::RBUILDER,
        VERSIONS.kube,
        VERSIONS.k8s_openapi,
        VERSIONS.kubernetes,
        VERSIONS.k8s_openapi_feature,
    )
}

/// Applies the plan, or with --dry-run only lists it; then says what to do next.
fn finish(mut plan: Plan, dry_run: bool, next_steps: &str) -> Result<()> {
    if dry_run {
        return dry_run_with_report(plan, "");
    }
    plan.apply()?;
    let done = plan.describe();
    let next = match (done.is_empty(), next_steps.is_empty()) {
        (_, true) => String::new(),
        (true, false) => format!("{next_steps}\n"),
        (false, false) => format!("\n{next_steps}\n"),
    };
    say(&format!("{done}{next}"));
    Ok(())
}

/// Lists what the plan would do, then `report` (what the command found, as its run says it),
/// and writes nothing.
fn dry_run_with_report(mut plan: Plan, report: &str) -> Result<()> {
    // The same checks as a real run, so that a dry run that passes means the run would.
    plan.check()?;
    let planned = plan.describe();
    let report = match (report, planned.is_empty()) {
        ("", _) => String::new(),
        (report, true) => format!("{report}\n\n"),
        (report, false) => format!("\n{report}\n\n"),
    };
    say(&format!("{planned}{report}dry run: nothing was written\n"));
    Ok(())
}

/// Prints to stdout. The files are written by now: a closed pipe (`rbuilder ... | head`) must
/// not turn that into a failure, so write errors are ignored.
pub(super) fn say(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}
