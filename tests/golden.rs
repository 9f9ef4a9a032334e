//! The golden trees (`testdata/variants.txt`): each checked-in project is exactly what its
//! commands make today, and its Rust code is as `cargo fmt` leaves it. Fast and offline: no
//! generated project is built here (`tests/generated.rs` does that).
//!
//! The runtime (`runtime/`) that rbuilder writes into every project is checked against the
//! workspace's crate instead of a copy in each tree: only the example keeps one.
//!
//! `RBUILDER_GOLDEN=overwrite` rewrites the trees instead of comparing them; that is what
//! `testdata/regenerate.sh` does.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{
    Variant, is_runtime_file, project_dir, project_files, rbuilder, repo, runtime_files,
    two_at_a_time, variants,
};

/// Scaffolds `variant` in a temporary folder and compares it with its golden tree; returns
/// what differs, one line per file. With `overwrite`, rewrites the golden tree instead (its
/// Cargo.lock and target/ stay).
fn compare(variant: &Variant, overwrite: bool) -> Vec<String> {
    let (_tmp, dir) = project_dir(variant.name());
    variant.scaffold(&dir);
    let mut fresh = project_files(&dir);
    let mut differences = Vec::new();
    if !variant.holds_runtime() {
        differences = runtime_differences(variant, &fresh);
        fresh.retain(|path, _| !is_runtime_file(path));
    }
    let golden_dir = repo().join(&variant.path);
    // A variant new to variants.txt has no tree yet: every file is then a difference.
    let golden = if golden_dir.is_dir() {
        project_files(&golden_dir)
    } else {
        Default::default()
    };
    if overwrite {
        for path in golden.keys() {
            std::fs::remove_file(golden_dir.join(path)).expect("remove a golden file");
        }
        for (path, bytes) in &fresh {
            let target = golden_dir.join(path);
            std::fs::create_dir_all(target.parent().expect("parent")).expect("create folder");
            std::fs::write(target, bytes).expect("write a golden file");
        }
        if golden_dir.is_dir() {
            remove_empty_folders(&golden_dir);
        }
        return differences;
    }
    for (path, bytes) in &fresh {
        let shown = format!("{}/{}", variant.path, path.display());
        match golden.get(path) {
            None => differences.push(format!("{shown}: rbuilder writes it, the tree lacks it")),
            Some(old) if old != bytes => {
                differences.push(format!("{shown} differs: {}", first_difference(old, bytes)));
            }
            Some(_) => {}
        }
    }
    for path in golden.keys().filter(|path| !fresh.contains_key(*path)) {
        differences.push(format!(
            "{}/{}: rbuilder no longer writes it",
            variant.path,
            path.display()
        ));
    }
    differences
}

/// What differs between the runtime that `variant`'s commands wrote (in `fresh`) and the
/// workspace's `runtime/`, which rbuilder embeds: each file must be the workspace's under a
/// header of comments (the license, the ownership stamp), and no other file may be written
/// there. Fails on a stale embedding, or one that writes the runtime in part or elsewhere.
fn runtime_differences(variant: &Variant, fresh: &BTreeMap<PathBuf, Vec<u8>>) -> Vec<String> {
    let expected = runtime_files();
    let mut differences = Vec::new();
    for (path, source) in &expected {
        let shown = format!("{}/{}", variant.path, path.display());
        let workspace = std::fs::read(source).expect("a runtime file");
        let Some(written) = fresh.get(path) else {
            differences.push(format!("{shown}: rbuilder does not write it"));
            continue;
        };
        let header = written
            .strip_suffix(workspace.as_slice())
            .map(String::from_utf8_lossy);
        let only_comments = |header: &str| {
            header
                .lines()
                .all(|line| line.is_empty() || line.starts_with("//") || line.starts_with('#'))
        };
        if !header.is_some_and(|header| only_comments(&header)) {
            differences.push(format!(
                "{shown} is not the workspace's {} under a header of comments",
                source.strip_prefix(repo()).unwrap_or(source).display(),
            ));
        }
    }
    let extra = fresh
        .keys()
        .filter(|path| is_runtime_file(path) && !expected.contains_key(*path));
    for path in extra {
        differences.push(format!(
            "{}/{}: rbuilder writes it into the runtime, the workspace's runtime lacks it",
            variant.path,
            path.display()
        ));
    }
    differences
}

/// Where two versions of a file part, for the failure message.
fn first_difference(golden: &[u8], fresh: &[u8]) -> String {
    let golden = String::from_utf8_lossy(golden);
    let fresh = String::from_utf8_lossy(fresh);
    let mut lines = golden.lines().zip(fresh.lines()).enumerate();
    match lines.find(|(_, (a, b))| a != b) {
        Some((i, (a, b))) => format!("line {} is `{a}`, rbuilder writes `{b}`", i + 1),
        None => format!(
            "{} lines, rbuilder writes {}",
            golden.lines().count(),
            fresh.lines().count()
        ),
    }
}

fn remove_empty_folders(dir: &Path) {
    for entry in std::fs::read_dir(dir).expect("readable folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() && !path.ends_with("target") {
            remove_empty_folders(&path);
            let _ = std::fs::remove_dir(&path); // fails unless empty
        }
    }
}

#[test]
fn golden_trees_are_what_rbuilder_writes() {
    let overwrite = std::env::var("RBUILDER_GOLDEN").is_ok_and(|v| v == "overwrite");
    let variants = variants();
    assert!(
        variants.len() >= 9,
        "testdata/variants.txt lists too few trees"
    );
    let differences: Vec<String> = two_at_a_time(&variants, |variant| compare(variant, overwrite))
        .into_iter()
        .flatten()
        .collect();
    assert!(
        differences.is_empty(),
        "the golden trees are not what rbuilder writes:\n  {}\nIf the change is intended, run \
         testdata/regenerate.sh and review the diff (git diff testdata examples).",
        differences.join("\n  ")
    );
}

/// The files rustfmt starts from: it follows their `mod` declarations to the rest.
const CRATE_ROOTS: &[&str] = &[
    "src/lib.rs",
    "src/main.rs",
    "manifests/src/main.rs",
    "tests/e2e/main.rs",
    "tests/integration/main.rs",
    "runtime/src/lib.rs",
    "runtime/core/src/lib.rs",
    "runtime/manifests/src/lib.rs",
    "runtime/testing/src/lib.rs",
];

#[test]
fn golden_trees_are_rustfmt_clean() {
    for variant in variants() {
        let dir = repo().join(&variant.path);
        let roots: Vec<&str> = CRATE_ROOTS
            .iter()
            .copied()
            .filter(|root| dir.join(root).is_file())
            .collect();
        // As `cargo fmt --check` runs it: the edition of the generated Cargo.toml.
        let out = Command::new("rustfmt")
            .args(["--check", "--edition", "2024"])
            .args(&roots)
            .current_dir(&dir)
            .output()
            .expect("rustfmt runs (rustup component add rustfmt)");
        assert!(
            out.status.success(),
            "{} is not as `cargo fmt` leaves it; fix the templates:\n{}{}",
            variant.path,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// `alpha generate` replays each golden tree's PROJECT into the same files.
#[test]
fn alpha_generate_replays_every_golden_tree() {
    let tmp = tempfile::tempdir().expect("temp dir");
    for variant in variants() {
        let input = repo().join(&variant.path);
        let output = tmp.path().join(variant.name());
        let args = [
            "alpha",
            "generate",
            "--input-dir",
            input.to_str().expect("UTF-8 path"),
        ];
        let args = [
            &args[..],
            &["--output-dir", output.to_str().expect("UTF-8 path")],
        ]
        .concat();
        rbuilder(tmp.path(), &args).success();
        let mut output_files = project_files(&output);
        if !variant.holds_runtime() {
            output_files.retain(|path, _| !is_runtime_file(path));
        }
        assert!(
            project_files(&input) == output_files,
            "alpha generate does not reproduce {}",
            variant.path
        );
    }
}
