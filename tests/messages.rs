//! Every bad input a user can type, in one reviewable file (`tests/messages.txt`): the folder
//! it is tried in, the command, and the whole message rbuilder answers with. Each case must
//! fail with a non-zero exit, print exactly that message, and leave the folder as it was.
//!
//! `RBUILDER_MESSAGES=overwrite cargo test --test messages` rewrites the messages as rbuilder
//! prints them today; review the change with `git diff tests/messages.txt`.

mod common;

use std::collections::BTreeMap;

use common::{project_dir, repo, run, snapshot, two_at_a_time, words};

const FILE: &str = "tests/messages.txt";

/// The file, parsed: folders to try commands in, and the cases.
struct Messages {
    /// By name: the rbuilder commands that make the folder, run in an empty one named
    /// `example`.
    setups: BTreeMap<String, Vec<String>>,
    cases: Vec<Case>,
}

struct Case {
    /// The line as written: `[setup] command`.
    line: String,
    setup: String,
    command: String,
    /// The message, without its final newline.
    message: String,
}

/// `setup NAME` starts a folder, its indented lines are its commands; `[NAME] COMMAND` starts a
/// case, and the lines after it up to the next case, comment (`#`) or setup are its message
/// (clap's messages hold blank lines), without the blank lines at its end.
fn parse(text: &str) -> Messages {
    let mut setups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut cases: Vec<Case> = Vec::new();
    let mut current_setup: Option<String> = None;
    let mut in_message = false;
    for line in text.lines() {
        if in_message && !starts_a_section(line) {
            let case = cases.last_mut().expect("a case before its message");
            case.message.push_str(line);
            case.message.push('\n');
            continue;
        }
        in_message = false;
        if line.is_empty() || line.starts_with('#') {
            current_setup = None;
        } else if let Some(name) = line.strip_prefix("setup ") {
            setups.insert(name.to_owned(), Vec::new());
            current_setup = Some(name.to_owned());
        } else if let Some(command) = line.strip_prefix("    ") {
            let name = current_setup
                .as_ref()
                .expect("an indented line belongs to a setup");
            setups
                .get_mut(name)
                .expect("declared")
                .push(command.to_owned());
        } else if let Some(rest) = line.strip_prefix('[') {
            let (setup, command) = rest.split_once("] ").expect("[setup] command");
            cases.push(Case {
                line: line.to_owned(),
                setup: setup.to_owned(),
                command: command.to_owned(),
                message: String::new(),
            });
            in_message = true;
        } else {
            panic!("{FILE}: cannot read the line `{line}`");
        }
    }
    for case in &mut cases {
        case.message = case.message.trim_end().to_owned();
    }
    Messages { setups, cases }
}

/// Whether `line` ends the message before it.
fn starts_a_section(line: &str) -> bool {
    line.starts_with('[') || line.starts_with('#') || line.starts_with("setup ")
}

/// What rbuilder prints for `case` (the folder's path as `<folder>`); asserts it failed and
/// changed nothing.
fn answer(messages: &Messages, case: &Case) -> String {
    let setup = messages
        .setups
        .get(&case.setup)
        .unwrap_or_else(|| panic!("{FILE}: no setup {}", case.setup));
    let (_tmp, dir) = project_dir("example");
    for command in setup {
        run(&dir, command).success();
    }
    let before = snapshot(&dir);
    let out = run(&dir, &case.command).failure().get_output().clone();
    assert_eq!(
        before,
        snapshot(&dir),
        "`{}` changed the folder although it failed",
        case.line
    );
    // The folder is a new temporary one each time: shown as `<folder>`.
    String::from_utf8_lossy(&out.stderr)
        .trim_end()
        .replace(&dir.display().to_string(), "<folder>")
}

#[test]
fn every_bad_input_gets_its_message_and_changes_nothing() {
    let path = repo().join(FILE);
    let text = std::fs::read_to_string(&path).expect("tests/messages.txt");
    let messages = parse(&text);
    assert!(messages.cases.len() > 40, "{FILE} has too few cases");
    let answers = two_at_a_time(&messages.cases, |case| answer(&messages, case));
    if std::env::var("RBUILDER_MESSAGES").is_ok_and(|v| v == "overwrite") {
        std::fs::write(&path, rewrite(&text, &answers)).expect("rewrite tests/messages.txt");
        return;
    }
    let wrong: Vec<String> = messages
        .cases
        .iter()
        .zip(&answers)
        .filter(|(case, answer)| case.message != **answer)
        .map(|(case, answer)| {
            format!(
                "{}\n  expected: {}\n  printed:  {answer}",
                case.line, case.message
            )
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} messages are not what {FILE} says (RBUILDER_MESSAGES=overwrite rewrites \
         them for review):\n{}",
        wrong.len(),
        messages.cases.len(),
        wrong.join("\n")
    );
}

/// `text` with each case's message replaced by `answers`, in order.
fn rewrite(text: &str, answers: &[String]) -> String {
    let mut out = String::new();
    let mut answers = answers.iter();
    let mut in_message = false;
    for line in text.lines() {
        if in_message && !starts_a_section(line) {
            continue;
        }
        in_message = false;
        out.push_str(line);
        out.push('\n');
        if line.starts_with('[') {
            out.push_str(answers.next().expect("an answer per case"));
            out.push_str("\n\n");
            in_message = true;
        }
    }
    out
}

#[test]
fn a_case_reads_as_its_folder_and_command() {
    let text = "setup p\n    init\n\n[p] create api --kind \"A b\"\nerror: x\n\ny\n\n# next\n";
    let messages = parse(text);
    assert_eq!(messages.setups["p"], ["init"]);
    let case = &messages.cases[0];
    assert_eq!(
        (case.setup.as_str(), case.message.as_str()),
        ("p", "error: x\n\ny")
    );
    assert_eq!(
        rewrite(text, &["error: z".to_owned()]),
        text.replace("x\n\ny", "z")
    );
    assert_eq!(words(&case.command), ["create", "api", "--kind", "A b"]);
}
