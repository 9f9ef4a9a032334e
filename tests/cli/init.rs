//! `rbuilder init`: the project it writes and the folders it refuses.

use std::fs;

use crate::common::{assert_rejected, initialized, project_dir, rbuilder, snapshot};
use crate::{make_unwritable, make_writable, read};
use predicates::str::contains;

#[test]
fn init_writes_a_project_named_after_its_folder() {
    let (_tmp, dir) = initialized("example");
    let project = read(&dir, "PROJECT");
    assert!(project.contains("projectName: example"), "{project}");
    assert!(project.contains("domain: my.domain"), "{project}");
    assert!(project.contains("rbuilder.io/v1"), "{project}");
    for file in [
        "Cargo.toml",
        "Makefile",
        "Dockerfile",
        ".dockerignore",
        ".gitignore",
        "README.md",
        "hack/boilerplate.txt",
        "src/main.rs",
        "src/lib.rs",
        "manifests/src/main.rs",
        "manifests/Cargo.toml",
        "config/default/kustomization.yaml",
        "config/manager/manager.yaml",
        "config/rbac/role.yaml",
        ".github/workflows/ci.yml",
    ] {
        assert!(dir.join(file).is_file(), "init should write {file}");
    }
    assert!(read(&dir, "Cargo.toml").contains("name = \"example\""));
    assert!(read(&dir, "src/main.rs").starts_with("// Copyright 2026 The example Authors."));
}

#[test]
fn init_flags_are_recorded_in_project() {
    let (_tmp, dir) = project_dir("somewhere");
    rbuilder(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--project-name",
            "guestbook-operator",
            "--owner",
            "Jane Doe",
            "--license",
            "mit",
            "--namespaced",
        ],
    )
    .success();
    let project = read(&dir, "PROJECT");
    for expected in [
        "domain: example.com",
        "projectName: guestbook-operator",
        "owner: Jane Doe",
        "license: mit",
        "namespaced: true",
    ] {
        assert!(project.contains(expected), "{expected} in\n{project}");
    }
    assert!(read(&dir, "src/main.rs").starts_with("// Copyright 2026 Jane Doe."));
    assert!(read(&dir, "hack/boilerplate.txt").contains("SPDX-License-Identifier: MIT"));
    assert!(read(&dir, "Cargo.toml").contains("name = \"guestbook-operator\""));
    let role = read(&dir, "config/rbac/role.yaml");
    assert!(
        role.contains("kind: Role"),
        "a namespaced operator gets a Role:\n{role}"
    );
}

#[test]
fn license_none_writes_no_header() {
    let (_tmp, dir) = project_dir("example");
    rbuilder(&dir, &["init", "--license", "none"]).success();
    assert!(!read(&dir, "src/main.rs").contains("Copyright"));
    assert!(!read(&dir, "Cargo.toml").contains("license ="));
}

#[test]
fn init_dry_run_lists_files_and_writes_nothing() {
    let (_tmp, dir) = project_dir("example");
    rbuilder(&dir, &["init", "--dry-run"])
        .success()
        .stdout(contains("create src/main.rs"))
        .stdout(contains("create PROJECT"))
        .stdout(contains("nothing was written"));
    assert!(snapshot(&dir).is_empty());
}

/// Bad values of every flag are in tests/messages.txt; this one needs a folder of its own.
#[test]
fn a_folder_name_that_is_no_project_name_asks_for_one() {
    let (_tmp, dir) = project_dir("My_Project");
    assert_rejected(&dir, &["init"], &["'My_Project'", "--project-name"]);
}

#[test]
fn init_refuses_folders_that_are_not_empty() {
    for (file, needle) in [
        ("PROJECT", "already has PROJECT"),
        ("Cargo.toml", "already has Cargo.toml"),
        ("notes.txt", "not empty"),
    ] {
        let (_tmp, dir) = project_dir("example");
        fs::write(dir.join(file), "mine").unwrap();
        assert_rejected(&dir, &["init"], &[needle]);
    }
    let (_tmp, dir) = project_dir("example");
    fs::create_dir_all(dir.join("src")).unwrap();
    fs::write(dir.join("src/main.rs"), "fn main() {}").unwrap();
    assert_rejected(&dir, &["init"], &["already has src/main.rs"]);

    // Hidden files (a git checkout) and a license are fine.
    let (_tmp, dir) = project_dir("example");
    fs::create_dir(dir.join(".git")).unwrap();
    fs::write(dir.join("LICENSE"), "mine").unwrap();
    rbuilder(&dir, &["init"]).success();
    assert_eq!(read(&dir, "LICENSE"), "mine");
}

#[test]
fn init_in_a_folder_that_cannot_be_written_fails_cleanly() {
    // A file where init needs a folder makes a write fail midway; nothing may be left over.
    let (_tmp, dir) = project_dir("example");
    fs::write(dir.join(".github"), "in the way").unwrap();
    let before = snapshot(&dir);
    rbuilder(&dir, &["init"])
        .failure()
        .stderr(contains("error:"))
        .stderr(contains(".github"));
    assert_eq!(before, snapshot(&dir));
}

#[test]
fn init_in_an_unwritable_folder_says_so_and_leaves_it_empty() {
    let (_tmp, dir) = project_dir("example");
    if !make_unwritable(&dir) {
        eprintln!("skipped: cannot make a folder unwritable here (no chattr, running as root)");
        return;
    }
    let out = rbuilder(&dir, &["init"]).failure().get_output().clone();
    make_writable(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("error: nothing was changed"), "{stderr}");
    assert!(stderr.contains("cannot"), "{stderr}");
    assert!(snapshot(&dir).is_empty());
}
