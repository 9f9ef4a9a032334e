//! rbuilder: kubebuilder for Rust. Parses the command line, runs the command, and turns an
//! error into one message on stderr and a non-zero exit.

mod cli;
mod commands;
mod external;
mod kubebuilder;
mod license;
mod manifests;
mod model;
mod project;
mod scaffold;
mod versions;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(commands::Outcome::Done) => ExitCode::SUCCESS,
        Ok(commands::Outcome::LeftOut) => ExitCode::from(commands::Outcome::LEFT_OUT_STATUS),
        Err(e) => {
            // `{:#}` prints the whole chain on one line: "context: cause: cause".
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
