//! One module per command. Each validates its arguments into the model, builds a Plan, and
//! hands it to `finish`; none writes files itself.

mod create_api;
mod edit;
mod generate;
mod init;
mod manifests;
mod owned_files;
mod update;

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::CommandFactory;

use crate::cli::{AlphaCommand, Cli, Command, CreateCommand};
use crate::project::{License, Project};
use crate::scaffold::Plan;
use crate::versions::VERSIONS;

pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Init(args) => init::run(&current_dir()?, args),
        Command::Create(CreateCommand::Api(args)) | Command::CreateApi(args) => {
            create_api::run(&current_dir()?, args)
        }
        Command::Edit(args) => edit::run(&current_dir()?, args),
        Command::Update(args) => update::run(&current_dir()?, args),
        Command::Alpha(AlphaCommand::Generate(args)) => generate::run(&current_dir()?, args),
        Command::Version => {
            print!("{}", version_text());
            Ok(())
        }
        Command::Completion { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "rbuilder",
                &mut std::io::stdout(),
            );
            Ok(())
        }
    }
}

fn current_dir() -> Result<PathBuf> {
    std::env::current_dir().context("cannot read the current folder")
}

fn version_text() -> String {
    format!(
        "rbuilder {}\ngenerates projects for: kube {}, k8s-openapi {} (Kubernetes {}, feature {})\n",
        env!("CARGO_PKG_VERSION"),
        VERSIONS.kube,
        VERSIONS.k8s_openapi,
        VERSIONS.kubernetes,
        VERSIONS.k8s_openapi_feature,
    )
}

/// Applies the plan, or with --dry-run only lists it; then says what to do next.
fn finish(plan: Plan, dry_run: bool, next_steps: &str) -> Result<()> {
    if dry_run {
        // The same checks as a real run, so that a dry run that passes means the run would.
        plan.check()?;
        say(&format!(
            "{}dry run: nothing was written\n",
            plan.describe()
        ));
        return Ok(());
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

/// Prints to stdout. The files are written by now: a closed pipe (`rbuilder ... | head`) must
/// not turn that into a failure, so write errors are ignored.
fn say(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// The variables every template can use: the project's settings and the license header. The
/// header is the project's `hack/boilerplate.txt` when it has one (as in kubebuilder: edit it
/// to change the header of the files scaffolded from then on), else made from its settings.
fn project_context(root: &Path, project: &Project) -> tera::Context {
    let mut ctx = tera::Context::new();
    let owner = project
        .owner
        .clone()
        .unwrap_or_else(|| format!("The {} Authors", project.project_name));
    let boilerplate = std::fs::read_to_string(root.join(BOILERPLATE))
        .unwrap_or_else(|_| boilerplate(project.license, &owner, copyright_year()));
    let header: String = boilerplate
        .lines()
        .map(|l| {
            if l.is_empty() {
                "//\n".to_owned()
            } else {
                format!("// {l}\n")
            }
        })
        .collect();
    ctx.insert("project_name", &project.project_name);
    ctx.insert("crate_name", &project.project_name.replace('-', "_"));
    ctx.insert("domain", &project.domain);
    ctx.insert("namespaced", &project.namespaced);
    ctx.insert("multigroup", &project.multigroup);
    ctx.insert("license", &project.license);
    ctx.insert("spdx", &spdx(project.license));
    ctx.insert("owner", &owner);
    ctx.insert("boilerplate", &boilerplate);
    // Blank line after the header, so templates can start with `{{ header }}` either way.
    ctx.insert(
        "header",
        &if header.is_empty() {
            header
        } else {
            header + "\n"
        },
    );
    ctx.insert("versions", &VERSIONS);
    ctx.insert("rbuilder_version", env!("CARGO_PKG_VERSION"));
    ctx
}

/// The file holding the project's license header.
const BOILERPLATE: &str = "hack/boilerplate.txt";

fn spdx(license: License) -> Option<&'static str> {
    match license {
        License::Apache2 => Some("Apache-2.0"),
        License::Mit => Some("MIT"),
        License::None => None,
    }
}

/// hack/boilerplate.txt: the license header of generated source files.
fn boilerplate(license: License, owner: &str, year: u32) -> String {
    match license {
        License::Apache2 => format!(
            "Copyright {year} {owner}.\n\n\
             Licensed under the Apache License, Version 2.0 (the \"License\");\n\
             you may not use this file except in compliance with the License.\n\
             You may obtain a copy of the License at\n\n    \
             http://www.apache.org/licenses/LICENSE-2.0\n\n\
             Unless required by applicable law or agreed to in writing, software\n\
             distributed under the License is distributed on an \"AS IS\" BASIS,\n\
             WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.\n\
             See the License for the specific language governing permissions and\n\
             limitations under the License.\n"
        ),
        License::Mit => format!("Copyright {year} {owner}.\n\nSPDX-License-Identifier: MIT\n"),
        License::None => String::new(),
    }
}

/// The year for the copyright line. SOURCE_DATE_EPOCH (the reproducible-builds convention)
/// pins it, so a checked-in example regenerates identically in any year.
fn copyright_year() -> u32 {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
    year_of(secs)
}

/// The Gregorian year of a Unix timestamp (days-to-civil, Howard Hinnant's algorithm).
fn year_of(unix_secs: u64) -> u32 {
    let days = (unix_secs / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month_from_march_is_jan_or_feb = mp >= 10;
    (yoe + era * 400 + i64::from(month_from_march_is_jan_or_feb)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn years() {
        assert_eq!(year_of(0), 1970);
        assert_eq!(year_of(1_780_000_000), 2026); // 2026-05-28
        assert_eq!(year_of(1_798_761_599), 2026); // 2026-12-31T23:59:59Z
        assert_eq!(year_of(1_798_761_600), 2027);
        assert_eq!(year_of(951_782_400), 2000); // 2000-02-29
    }
}
