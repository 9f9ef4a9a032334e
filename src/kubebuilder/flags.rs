//! kubebuilder's flags that a Rust project has no use for. A kubebuilder user types them out of
//! habit (`init --repo`); clap alone would answer "unexpected argument", which says nothing of
//! why the flag is missing or what to do instead.

/// Each flag with why rbuilder has none and what to do instead.
const GO_ONLY: &[(&str, &str)] = &[
    (
        "--repo",
        "it is kubebuilder's Go module path, which a Rust project has no use for; the crate is \
         named by --project-name (default: the folder's name)",
    ),
    (
        "--fetch-deps",
        "rbuilder downloads nothing while scaffolding; the first `cargo build` fetches the crates",
    ),
    (
        "--skip-go-version-check",
        "a Rust project needs no Go; leave it out",
    ),
    (
        "--project-version",
        "rbuilder writes PROJECT version 3, the only one kubebuilder v4 writes; leave it out",
    ),
    (
        "--make",
        "rbuilder runs no make while scaffolding: the command writes config/ itself (`make \
         manifests` is for after you change the types); leave it out",
    ),
    (
        "--manifests",
        "rbuilder writes the CRD and RBAC manifests while scaffolding (`make manifests` is for \
         after you change the types); leave it out",
    ),
    (
        "--ssa",
        "rbuilder's controllers always write with server-side apply; leave it out",
    ),
    (
        "--external-api-module",
        "a Go module is of no use to Rust; give the type's CRD file to --external-api-path \
         instead, and rbuilder generates its Rust types from it",
    ),
];

/// The message for clap's error `e` if it is about one of kubebuilder's Go-only flags.
pub fn hint(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    // `--repo=x` is reported as typed.
    let flag = arg.split('=').next().unwrap_or(arg);
    let (_, why) = GO_ONLY.iter().find(|(name, _)| *name == flag)?;
    Some(format!("{flag} is one of kubebuilder's flags: {why}"))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Cli;

    fn error(args: &[&str]) -> clap::Error {
        match Cli::try_parse_from(args) {
            Ok(_) => panic!("{args:?} parsed"),
            Err(e) => e,
        }
    }

    #[test]
    fn every_go_only_flag_is_unknown_to_rbuilder() {
        // A flag rbuilder gains must leave this list, or its hint would never show.
        for (flag, _) in GO_ONLY {
            for command in [&["rbuilder", "init"][..], &["rbuilder", "create", "api"]] {
                let args = [command, &[flag]].concat();
                let e = error(&args);
                assert!(hint(&e).is_some(), "{args:?}: {e}");
            }
        }
    }

    #[test]
    fn a_value_given_with_equals_is_recognized() {
        let e = error(&["rbuilder", "init", "--repo=github.com/acme/op"]);
        let message = hint(&e).unwrap_or_default();
        assert!(
            message.starts_with("--repo is one of kubebuilder's flags"),
            "{message}"
        );
    }

    #[test]
    fn other_errors_keep_clap_s_message() {
        assert!(hint(&error(&["rbuilder", "init", "--no-such-flag"])).is_none());
        assert!(hint(&error(&["rbuilder", "create", "api", "--group"])).is_none());
    }
}
