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

/// The exit status of a command line that does not parse, as clap's own.
const USAGE_STATUS: u8 = 2;

fn main() -> ExitCode {
    let cli = match cli::Cli::parse_args(std::env::args_os()) {
        Ok(cli) => cli,
        Err(e) => match kubebuilder::flags_hint(&e) {
            Some(hint) => {
                eprintln!("error: {hint}");
                return ExitCode::from(USAGE_STATUS);
            }
            None => e.exit(),
        },
    };
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
