//! The command line as a user meets it: what each command writes, and how each bad input is
//! refused (one message, non-zero exit, nothing written).

#[path = "../common/mod.rs"]
mod common;

mod alpha_generate;
mod conventions;
mod create_api;
mod create_webhook;
mod docs;
mod edit;
mod external;
mod init;
mod migrate;
mod setup_envtest;
mod update;

use std::fs;

use common::{initialized, rbuilder};

pub(crate) const DEMO: &[&str] = &[
    "create",
    "api",
    "--group",
    "devops",
    "--version",
    "v1",
    "--kind",
    "DemoMicroService",
];

pub(crate) fn read(dir: &std::path::Path, file: &str) -> String {
    fs::read_to_string(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// Makes `dir` unwritable: chmod for a normal user, the immutable attribute for root (whom
/// permissions do not stop). Returns false where neither works on this file system.
pub(crate) fn make_unwritable(dir: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(dir, fs::Permissions::from_mode(0o555)).unwrap();
    if fs::write(dir.join(".probe"), "").is_err() {
        return true;
    }
    let _ = fs::remove_file(dir.join(".probe"));
    let chattr = std::process::Command::new("chattr")
        .arg("+i")
        .arg(dir)
        .status();
    matches!(chattr, Ok(s) if s.success()) && fs::write(dir.join(".probe"), "").is_err()
}

pub(crate) fn make_writable(dir: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::process::Command::new("chattr")
        .arg("-i")
        .arg(dir)
        .status();
    fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A project with the DemoMicroService, as the tutorial makes it.
pub(crate) fn demo_project() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = initialized("demo");
    let args = [
        DEMO,
        &[
            "--image",
            "stefanprodan/podinfo:6.7.1",
            "--image-container-port",
            "9898",
            "--short-name",
            "dms",
        ],
    ]
    .concat();
    rbuilder(&dir, &args).success();
    (tmp, dir)
}

/// `create webhook` for DemoMicroService v1 with `flags`.
pub(crate) fn webhook_args<'a>(version: &'a str, flags: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "create",
        "webhook",
        "--group",
        "devops",
        "--version",
        version,
        "--kind",
        "DemoMicroService",
    ];
    args.extend_from_slice(flags);
    args
}
