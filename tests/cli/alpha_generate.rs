//! `rbuilder alpha generate`: a PROJECT file replayed into a new folder.

use crate::common::{
    assert_rejected, assert_same_tree, initialized, project_dir, project_files, rbuilder, snapshot,
};
use crate::demo_project;
use predicates::str::contains;

#[test]
fn alpha_generate_replays_the_project_into_a_new_folder() {
    let (tmp, dir) = demo_project();
    rbuilder(
        &dir,
        &["create", "api", "--group", "devops", "--kind", "Guestbook"],
    )
    .success();
    rbuilder(
        &dir,
        &[
            "create",
            "api",
            "--group",
            "apps",
            "--kind",
            "Deployment",
            "--resource=false",
        ],
    )
    .success();
    let out = tmp.path().join("fresh");
    rbuilder(&dir, &["alpha", "generate", "--output-dir", "../fresh"])
        .success()
        .stdout(contains("init and 3 create api"));
    assert_same_tree(&snapshot(&dir), &snapshot(&out), "the replayed project");

    // Never over the project itself, nor into a folder with files.
    assert_rejected(
        &dir,
        &["alpha", "generate", "--output-dir", "."],
        &["new folder"],
    );
    assert_rejected(
        &dir,
        &["alpha", "generate", "--output-dir", "../fresh"],
        &["not empty"],
    );
    // A dry run writes nothing.
    rbuilder(
        &dir,
        &["alpha", "generate", "--output-dir", "../other", "--dry-run"],
    )
    .success()
    .stdout(contains("nothing was written"));
    assert!(!tmp.path().join("other").exists());
}

#[test]
fn alpha_generate_reproduces_the_checked_in_example() {
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo-microservice");
    let (tmp, _dir) = project_dir("unused");
    let out = tmp.path().join("demo-microservice");
    let args = [
        "alpha",
        "generate",
        "--input-dir",
        example.to_str().unwrap(),
        "--output-dir",
    ];
    rbuilder(tmp.path(), &[&args[..], &[out.to_str().unwrap()]].concat()).success();
    // Files only (a snapshot's folders too), as the golden test compares them.
    let files = |dir: &std::path::Path| -> std::collections::BTreeMap<_, _> {
        project_files(dir)
            .into_iter()
            .map(|(path, bytes)| (path, Some(bytes)))
            .collect()
    };
    assert_same_tree(&files(&example), &files(&out), "the replayed example");
}

#[test]
fn alpha_generate_replays_webhooks() {
    let (tmp, dir) = initialized("example");
    let guestbook = |version: &'static str| {
        vec![
            "create",
            "api",
            "--group",
            "devops",
            "--version",
            version,
            "--kind",
            "Guestbook",
        ]
    };
    rbuilder(&dir, &guestbook("v1")).success();
    rbuilder(&dir, &guestbook("v2")).success();
    let webhook = [
        "create",
        "webhook",
        "--group",
        "devops",
        "--version",
        "v1",
        "--kind",
        "Guestbook",
    ];
    let admission = ["--defaulting", "--programmatic-validation"];
    rbuilder(&dir, &[&webhook[..], &admission[..]].concat()).success();
    let conversion = ["--conversion", "--spoke", "v2"];
    rbuilder(&dir, &[&webhook[..], &conversion[..]].concat()).success();
    rbuilder(&dir, &["alpha", "generate", "--output-dir", "../fresh"])
        .success()
        .stdout(contains("init, 2 create api and 1 create webhook"));
    let fresh = tmp.path().join("fresh");
    assert_same_tree(&snapshot(&dir), &snapshot(&fresh), "the replayed project");
}
