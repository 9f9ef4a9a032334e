//! Helpers shared by the integration tests: run rbuilder in a folder, and snapshot a tree so
//! a test can assert that a rejected command left it exactly as it was.

#![allow(dead_code)] // each test binary uses its own subset

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// `rbuilder <args>` run in `dir`.
pub fn rbuilder(dir: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    Command::cargo_bin("rbuilder")
        .expect("the rbuilder binary is built")
        .current_dir(dir)
        .env("SOURCE_DATE_EPOCH", "1780000000")
        .args(args)
        .assert()
}

/// Every file under `dir` with its bytes, and every folder (as an empty entry).
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("readable folder") {
            let path = entry.expect("entry").path();
            let rel = path.strip_prefix(dir).expect("inside").to_owned();
            if path.is_dir() {
                out.insert(rel, None);
                stack.push(path);
            } else {
                out.insert(rel, Some(std::fs::read(&path).expect("readable file")));
            }
        }
    }
    out
}

/// A new folder named `name` (the project name comes from it) inside a temporary folder.
pub fn project_dir(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join(name);
    std::fs::create_dir(&dir).expect("create project folder");
    (tmp, dir)
}

/// A folder with `rbuilder init --domain my.domain` done.
pub fn initialized(name: &str) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = project_dir(name);
    rbuilder(&dir, &["init", "--domain", "my.domain"]).success();
    (tmp, dir)
}

/// Asserts the command failed with one `error:` line containing each of `needles`, and
/// that the folder is exactly as before.
pub fn assert_rejected(dir: &Path, args: &[&str], needles: &[&str]) {
    let before = snapshot(dir);
    let out = rbuilder(dir, args).failure().get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "one error line expected for {args:?}, got:\n{stderr}"
    );
    assert!(lines[0].starts_with("error:"), "{stderr}");
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "the error for {args:?} should mention {needle:?}:\n{stderr}"
        );
    }
    assert_eq!(before, snapshot(dir), "{args:?} changed the folder");
}

/// Asserts that the trees `expected` and `actual` (snapshots) hold the same files with the same
/// bytes, naming the first path that differs.
pub fn assert_same_tree(
    expected: &BTreeMap<PathBuf, Option<Vec<u8>>>,
    actual: &BTreeMap<PathBuf, Option<Vec<u8>>>,
    what: &str,
) {
    for path in expected.keys().chain(actual.keys()) {
        let (a, b) = (expected.get(path), actual.get(path));
        assert!(
            a == b,
            "{what}: {} differs (or is missing on one side)",
            path.display()
        );
    }
}
