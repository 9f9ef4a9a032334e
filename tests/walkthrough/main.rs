//! The documents that walk a reader through rbuilder, walked (`WALKED`): each command run in
//! order, as the reader types it, in an empty folder with the rbuilder these tests built on
//! PATH, and each output, file excerpt and listing the document shows compared with what the
//! command printed or wrote (`matching.rs`). How a document marks its blocks: `markup.rs`.
//! What the walk does its own way, where this machine lacks something (a container engine,
//! GitHub) or where the reader has something before the page starts (a cluster, a kubebuilder
//! project): `stand_ins.rs`.
//!
//! - docs/tutorial.md: from `rbuilder init` to a deployed operator, on a real cluster (the
//!   control plane of the end-to-end tests, scripts/control-plane: etcd, kube-apiserver,
//!   kube-controller-manager, and kube-scheduler with two Nodes that KWOK simulates, so that
//!   the Pods of the tutorial's Deployments are scheduled and become Ready as on a cluster,
//!   without a kubelet or a container engine).
//! - docs/migrating-from-kubebuilder.md: kubebuilder's test project project-v4 as the reader's
//!   `../my-go-operator`, cert-manager's CRDs read with `kubectl get crd` from a control plane
//!   without Nodes, the migration, and `make test` in the Rust project.
//!
//! A walk is slow (it builds and tests the project it makes), so it is `#[ignore]`d, and
//! `make test` runs it; its builds share rbuilder's target folder with the other generated
//! projects' (tests/generated.rs), so that the crates from crates.io, and the runtime, compile
//! once. That every block of every walked document says what the walk does with it is checked
//! by a fast test.

#[path = "../common/mod.rs"]
mod common;

mod markup;
mod matching;
mod session;
mod stand_ins;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{repo, shared_target_dir};
use markup::{Block, Role};
use session::Session;

/// The documents walked, from the repository's root.
const WALKED: &[&str] = &["docs/tutorial.md", "docs/migrating-from-kubebuilder.md"];

/// How long a `run eventually` block is tried: a manager's build included, on a loaded
/// machine.
const EVENTUALLY: Duration = Duration::from_secs(6 * 60);

/// How often it is tried.
const RETRY: Duration = Duration::from_millis(500);

#[test]
fn every_block_of_a_walked_document_says_what_the_walk_does_with_it() {
    for doc in WALKED {
        let text = std::fs::read_to_string(repo().join(doc)).expect("the document");
        if let Err(error) = markup::parse(&text) {
            panic!("{doc}: {error}");
        }
    }
}

#[test]
#[ignore = "slow: builds and tests the tutorial's project on a real control plane (make test runs it)"]
fn the_tutorial() {
    walk("docs/tutorial.md");
}

#[test]
#[ignore = "slow: migrates a kubebuilder project and tests the Rust project (make test runs it)"]
fn the_migration_from_kubebuilder() {
    walk("docs/migrating-from-kubebuilder.md");
}

/// Walks `doc` (a path from the repository's root); panics at the first block whose command
/// fails or whose output, excerpt or listing differs from the document's, saying which.
fn walk(doc: &str) {
    let text = std::fs::read_to_string(repo().join(doc)).expect("the document");
    let blocks = markup::parse(&text).unwrap_or_else(|error| panic!("{doc}: {error}"));
    let start = Instant::now();
    let mut session = Session::start(
        &envtest_assets(),
        Path::new(env!("CARGO_BIN_EXE_rbuilder")),
        &shared_target_dir(),
    );
    let root = session.root.display().to_string();
    let mut last: Option<(usize, String, bool)> = None; // (line, output, checked)
    for (i, block) in blocks.iter().enumerate() {
        let began = Instant::now();
        let at = format!("{doc}:{}", block.line);
        if let Some(background) = session.background()
            && !background.is_running()
        {
            panic!(
                "{at}: the command started at line {} stopped:\n{}",
                background.line,
                background.output()
            );
        }
        match &block.role {
            Role::Run {
                eventually,
                fails,
                xfail,
            } => {
                let next = blocks.get(i + 1);
                last = Some(match (xfail, eventually, next) {
                    (Some(expected), _, _) => {
                        let ran = session.run(&block.text);
                        assert!(
                            !ran.success,
                            "{at}: the known failure ({expected}) is fixed: remove xfail from \
                             the block, and check its output:\n{}",
                            ran.output
                        );
                        assert!(
                            ran.output.contains(expected.as_str()),
                            "{at}: failed, but not with '{expected}':\n{}",
                            ran.output
                        );
                        (block.line, ran.output, false)
                    }
                    (
                        None,
                        true,
                        Some(Block {
                            role: Role::Output { ignore },
                            text,
                            ..
                        }),
                    ) => {
                        let output = eventually_prints(&mut session, block, text, ignore, &at);
                        (block.line, output, true)
                    }
                    (None, _, _) => {
                        let ran = session.run(&block.text);
                        match fails {
                            false => {
                                assert!(ran.success, "{at}: failed:\n{}{}", block.text, ran.output)
                            }
                            true => assert!(
                                !ran.success,
                                "{at}: succeeded, where the document shows it failing:\n{}",
                                ran.output
                            ),
                        }
                        (block.line, ran.output, false)
                    }
                });
            }
            Role::Background => {
                session.start_background(&block.text, block.line);
                last = None;
            }
            Role::Stop => session.stop_background(),
            Role::StandIn(name) => {
                stand_ins::run(name, &mut session);
                last = None;
            }
            Role::Output { ignore } => match blocks[i - 1].role {
                Role::Background => {
                    background_prints(&mut session, &block.text, ignore, &at);
                }
                _ => {
                    let Some((line, output, checked)) = &last else {
                        panic!("{at}: an output of nothing");
                    };
                    let xfail = matches!(blocks[i - 1].role, Role::Run { xfail: Some(_), .. });
                    if !checked && !xfail {
                        let expected = compared(&block.text, &root, ignore);
                        let actual = compared(output, &root, ignore);
                        assert!(
                            matching::matches(&expected, &actual),
                            "{at}: the commands of line {line} printed what the document does \
                             not show.\nThe document:\n{}\nThey printed:\n{output}",
                            block.text
                        );
                    }
                }
            },
            Role::Excerpt { path } => {
                let file = session.cwd.join(path);
                let text = std::fs::read_to_string(&file)
                    .unwrap_or_else(|error| panic!("{at}: cannot read {path}: {error}"));
                assert!(
                    matching::is_excerpt(&block.text, &text),
                    "{at}: {path} does not hold these lines (as shown, in order):\n{}\n\
                     {path} is:\n{text}",
                    block.text
                );
            }
            Role::Edit { path, after } => edit(&session.cwd.join(path), after, &block.text, &at),
            Role::Example => {}
        }
        let took = began.elapsed();
        if took > Duration::from_secs(5) {
            eprintln!("walk: {at}: {:.0?}", took);
        }
    }
    session.stop_background();
    eprintln!("walk: {doc} walked in {:.0?}", start.elapsed());
}

/// Runs `block` until it succeeds and prints what `expected` shows; its last output.
fn eventually_prints(
    session: &mut Session,
    block: &Block,
    expected: &str,
    ignore: &[String],
    at: &str,
) -> String {
    let root = session.root.display().to_string();
    let wanted = compared(expected, &root, ignore);
    let start = Instant::now();
    loop {
        let ran = session.run(&block.text);
        if ran.success && matching::matches(&wanted, &compared(&ran.output, &root, ignore)) {
            return ran.output;
        }
        let stopped = session
            .background()
            .and_then(|background| (!background.is_running()).then(|| background.output()));
        if start.elapsed() > EVENTUALLY || stopped.is_some() {
            panic!(
                "{at}: after {:.0?}, the commands still print what the document does not \
                 show.\nThe document:\n{expected}\nThey printed:\n{}{}",
                start.elapsed(),
                ran.output,
                stopped
                    .map(|log| format!("\nThe background command stopped:\n{log}"))
                    .unwrap_or_default()
            );
        }
        std::thread::sleep(RETRY);
    }
}

/// Waits until the background command has printed what `expected` shows (its log so far
/// matching, a `...` line at the end for what it prints later).
fn background_prints(session: &mut Session, expected: &str, ignore: &[String], at: &str) {
    let root = session.root.display().to_string();
    let wanted = compared(expected, &root, ignore);
    let start = Instant::now();
    loop {
        let Some(background) = session.background() else {
            panic!("{at}: no background command");
        };
        let log = background.output();
        if matching::matches(&wanted, &compared(&log, &root, ignore)) {
            return;
        }
        if start.elapsed() > EVENTUALLY || !background.is_running() {
            panic!(
                "{at}: the background command has not printed what the document shows.\n\
                 The document:\n{expected}\nIt printed:\n{log}"
            );
        }
        std::thread::sleep(RETRY);
    }
}

/// `text`'s lines as compared: normalized, without the `ignore`d columns.
fn compared(text: &str, root: &str, ignore: &[String]) -> Vec<String> {
    matching::without_columns(&matching::normalize(text, root), ignore)
}

/// The reader's edit: `insert` after the first line of `file` that is `after`.
fn edit(file: &Path, after: &str, insert: &str, at: &str) {
    let text = std::fs::read_to_string(file)
        .unwrap_or_else(|error| panic!("{at}: cannot read {}: {error}", file.display()));
    let mut out = String::new();
    let mut done = false;
    for line in text.split_inclusive('\n') {
        out.push_str(line);
        if !done && line.trim() == after.trim() {
            out.push_str(insert);
            done = true;
        }
    }
    assert!(done, "{at}: no line '{after}' in {}", file.display());
    std::fs::write(file, out).expect("write the edited file");
}

/// The folder of the control plane's binaries: KUBEBUILDER_ASSETS if set (`make test` sets
/// it), else what scripts/envtest-assets builds.
fn envtest_assets() -> String {
    if let Ok(assets) = std::env::var("KUBEBUILDER_ASSETS")
        && !assets.is_empty()
    {
        return assets;
    }
    let script = repo().join("scripts/envtest-assets");
    let out = Command::new(&script)
        .output()
        .unwrap_or_else(|error| panic!("cannot run {}: {error}", script.display()));
    assert!(
        out.status.success(),
        "scripts/envtest-assets failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
