//! `rbuilder update` keeps the projects of an earlier rbuilder compiling: it rewrites only the
//! files rbuilder owns (the runtime), so the runtime's API must accept the user's files as an
//! earlier rbuilder wrote them. Two checks:
//!
//! - the golden trees of an earlier commit, updated by this rbuilder, compile (their tests too);
//! - the golden trees of this commit compile with a runtime whose `Operator` has one more field,
//!   as a later rbuilder's may: `src/lib.rs` builds OPERATOR with `Operator::new` and its
//!   methods, so a field it does not name takes its default.
//!
//! Slow (minutes), so `#[ignore]`d like tests/generated.rs, whose target folder
//! (`common::shared_target_dir`) they share, so the dependencies compile once. Needs cargo, git and tar.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{
    as_a_users_build, is_runtime_file, project_files, rbuilder, repo, share_runtime_build,
};

/// Runs `program args` in `dir`; panics with its output if it fails.
fn run(dir: &Path, program: &str, args: &[&str]) {
    // As tests/generated.rs builds, so that each reuses what the other compiled.
    let out = as_a_users_build(&mut Command::new(program))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} (is it installed?): {e}"));
    assert!(
        out.status.success(),
        "`{program} {}` failed in {}:\n{}\n{}",
        args.join(" "),
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Type-checks the project at `dir` with every target (the manager, `manifests`, the unit,
/// integration and e2e tests), with the Cargo.lock `rbuilder update` wrote (the tested crates),
/// as tests/generated.rs builds it. `cargo check`, not `cargo build`: whether the user's files
/// compile against the runtime is what is asked, and checking skips code generation and the
/// linking of every test binary of every tree (several minutes on 2 cores).
fn check(dir: &Path) {
    // Only a runtime of another version (`later_version`) changes the lock: cargo takes it
    // from the path, with the other crates as locked.
    run(
        dir,
        "cargo",
        &["metadata", "--format-version", "1", "--quiet"],
    );
    run(dir, "cargo", &["check", "--locked", "--all-targets"]);
}

/// The golden trees of the repository checked out at `root`: the folders that
/// `testdata/variants.txt` lists (its lines without indentation).
fn golden_trees(root: &Path) -> Vec<PathBuf> {
    let variants = std::fs::read_to_string(root.join("testdata/variants.txt"));
    let variants = variants.expect("testdata/variants.txt");
    variants
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with(['#', ' ']))
        .map(|line| root.join(line.trim()))
        .collect()
}

/// The commit whose golden trees the compatibility test updates and builds by default: the
/// last one that landed before the runtime's owned-objects API and its `manifests` feature
/// (2026-12-02), whose deploy-image controllers are the 588-line form, written before
/// `rbuilder_runtime::owned` existed, and whose Cargo.toml names the runtime with its default
/// features. Move it forward when a release of rbuilder's makes older projects unsupported.
const PREVIOUS: &str = "a06277a";

/// The golden trees of the commit `RBUILDER_COMPAT_BASE` names (default [`PREVIOUS`]), updated
/// by this rbuilder, compile: what a user who upgrades rbuilder and runs `rbuilder update` gets.
#[test]
#[ignore = "slow: compiles the golden trees of an earlier commit against crates.io"]
fn update_keeps_the_projects_of_an_earlier_commit_compiling() {
    let base = std::env::var("RBUILDER_COMPAT_BASE").unwrap_or_else(|_| PREVIOUS.to_owned());
    let tmp = tempfile::tempdir().expect("temp dir");
    let archive = tmp.path().join("base.tar");
    let archive_arg = format!("--output={}", archive.display());
    let git_args = ["archive", &archive_arg, &base, "testdata", "examples"];
    run(repo(), "git", &git_args);
    // Extracted with the time of now (`-m`), not the commit's: the trees share a target
    // folder with the other tests, and cargo tells a package apart by its name and its path
    // in its workspace, so a tree whose files are older than the build of another project of
    // its name (the example today) would be taken as built, and that build checked instead.
    let tar_args = ["-xmf", "base.tar"];
    run(tmp.path(), "tar", &tar_args);
    let projects = golden_trees(tmp.path());
    assert!(!projects.is_empty(), "no golden tree in {base}");
    for dir in projects {
        println!("{base}: {}", dir.display());
        let out = rbuilder(&dir, &["update"]).success().get_output().clone();
        println!("{}", String::from_utf8_lossy(&out.stdout));
        // With the workspace's file times, so that the trees share one build of the runtime.
        share_runtime_build(&dir);
        check(&dir);
        if dir.ends_with("examples/demo-microservice") {
            // Its controller lists its rules by hand (rbac_rules, the 588-line form); the
            // runtime now also derives them from what it declares: the role stays the same.
            // (Made before the `manifests` feature: the runtime's default features have it.)
            let manifests = ["run", "--locked", "--bin", "manifests", "--", "--check"];
            run(&dir, "cargo", &manifests);
        }
    }
}

/// What a later runtime may add: one more field in `Operator`, which `Operator::new` defaults.
fn add_an_operator_field(runtime_lib: &str) -> String {
    let patches = [
        (
            "    pub scope: WatchScope,\n}\n\n/// Where an operator works.",
            "    pub scope: WatchScope,\n    /// A later field.\n    pub later: Option<&'static str>,\n}\n\n/// Where an operator works.",
        ),
        (
            "            scope: WatchScope::Cluster,\n        }\n",
            "            scope: WatchScope::Cluster,\n            later: None,\n        }\n",
        ),
    ];
    let mut lib = runtime_lib.to_owned();
    for (before, after) in patches {
        assert_eq!(
            lib.matches(before).count(),
            1,
            "runtime/core/src/operator.rs changed: adapt this test's patch ({before:?})"
        );
        lib = lib.replace(before, after);
    }
    lib
}

/// The projects this rbuilder makes survive a field added to `Operator`: the example (an
/// operator of the whole cluster, with webhooks) and the namespaced tree (its scope said with
/// a comment) compile with it. Every tree's `src/lib.rs` comes from the same template.
#[test]
#[ignore = "slow: compiles two golden trees against crates.io"]
fn a_new_operator_field_keeps_todays_projects_compiling() {
    for tree in ["examples/demo-microservice", "testdata/namespaced"] {
        let tmp = tempfile::tempdir().expect("temp dir");
        let dir = tmp
            .path()
            .join(Path::new(tree).file_name().expect("a name"));
        for (path, bytes) in project_files(&repo().join(tree)) {
            let target = dir.join(path);
            std::fs::create_dir_all(target.parent().expect("a parent")).expect("create folder");
            std::fs::write(target, bytes).expect("write a file");
        }
        // The example's runtime, for both trees (this test patches it).
        for (path, bytes) in project_files(&repo().join("examples/demo-microservice")) {
            if is_runtime_file(&path) {
                std::fs::create_dir_all(dir.join(&path).parent().expect("a parent"))
                    .expect("mkdir");
                std::fs::write(dir.join(path), bytes).expect("write a runtime file");
            }
        }
        let lib = dir.join("runtime/core/src/operator.rs");
        let later = add_an_operator_field(&std::fs::read_to_string(&lib).expect("the runtime"));
        std::fs::write(&lib, later).expect("write the runtime");
        for folder in RUNTIME_CRATES {
            let manifest = dir.join(folder).join("Cargo.toml");
            let later = later_version(&std::fs::read_to_string(&manifest).expect("the manifest"));
            std::fs::write(&manifest, later).expect("write the manifest");
        }
        println!("{tree}, its runtime's Operator with one more field");
        check(&dir);
    }
}

/// The runtime's crates, each of which a later rbuilder writes at its version.
const RUNTIME_CRATES: [&str; 4] = [
    "runtime",
    "runtime/core",
    "runtime/manifests",
    "runtime/testing",
];

/// A runtime crate's manifest at a later version, as a later rbuilder's would be. It also keeps
/// the patched runtime apart in the shared target folder: cargo names a path dependency's
/// build by its name, version and path within the workspace (`runtime/`, the same in every
/// tree), so at the same version another tree's build could take this one for its own.
fn later_version(runtime_manifest: &str) -> String {
    let before = "\nversion = \"";
    assert_eq!(
        runtime_manifest.matches(before).count(),
        1,
        "a runtime crate's Cargo.toml changed: adapt this test's patch"
    );
    runtime_manifest.replacen(before, "\nversion = \"999.0.0-later+", 1)
}

/// The patches apply to this runtime (checked fast, so that a change to runtime/core/src/operator.rs
/// or a runtime crate's Cargo.toml shows here rather than in the slow test).
#[test]
fn the_later_runtime_patches_apply() {
    let lib = repo().join("runtime/core/src/operator.rs");
    let lib = std::fs::read_to_string(lib).expect("the runtime");
    assert!(add_an_operator_field(&lib).contains("later: None,"));
    for folder in RUNTIME_CRATES {
        let manifest = repo().join(folder).join("Cargo.toml");
        let manifest = std::fs::read_to_string(manifest).expect("manifest");
        let later = later_version(&manifest);
        assert!(later.contains("\nversion = \"999.0.0-later+"), "{later}");
    }
}

/// The trees the slow test updates are the golden trees, each a project.
#[test]
fn the_golden_trees_are_found() {
    let trees = golden_trees(repo());
    assert_eq!(trees.len(), common::variants().len());
    for tree in trees {
        assert!(tree.join("PROJECT").is_file(), "{}", tree.display());
    }
}
