//! docs/commands.md documents every command and every flag, each under its own command: the
//! flags `--help` lists are compared with the section of each command (its tables' first column
//! and its usage lines), both ways.

use std::collections::{BTreeMap, BTreeSet};

use crate::common::{commands, flags_of, repo};

/// The flags each command's section of docs/commands.md documents, by command (`create api`):
/// those in the first column of its tables and in its usage lines (`    rbuilder update
/// [--dry-run]`). A section runs from its `## `rbuilder <command>`` heading to the next `## `;
/// its `###` subsections are part of it.
fn documented() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(repo().join("docs/commands.md")).expect("docs/commands.md");
    let mut sections: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            // `rbuilder completion <bash|zsh|...>`: the command is the words before `<`.
            current = heading
                .trim_matches('`')
                .strip_prefix("rbuilder ")
                .map(|c| c.split(" <").next().unwrap_or(c).trim().to_owned());
            if let Some(command) = &current {
                sections.entry(command.clone()).or_default();
            }
            continue;
        }
        let Some(command) = &current else { continue };
        let documenting = if let Some(row) = line.strip_prefix('|') {
            row.split('|').next().unwrap_or_default()
        } else if line.starts_with(&format!("    rbuilder {command}")) {
            line
        } else {
            continue;
        };
        let flags = sections.get_mut(command).expect("entered above");
        for word in documenting.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
            // A flag, not a table's `|---|` line.
            if word.starts_with("--") && word[2..].starts_with(|c: char| c.is_ascii_lowercase()) {
                flags.insert(word.to_owned());
            }
        }
    }
    sections
}

#[test]
fn every_flag_is_documented_under_its_command() {
    let documented = documented();
    let mut wrong = Vec::new();
    for command in commands() {
        let name = command.join(" ");
        let words: Vec<&str> = command.iter().map(String::as_str).collect();
        let flags: BTreeSet<String> = flags_of(&words)
            .into_iter()
            .filter(|flag| flag != "--help")
            .collect();
        let Some(section) = documented.get(&name) else {
            wrong.push(format!(
                "`rbuilder {name}` has no section (## `rbuilder {name}`)"
            ));
            continue;
        };
        for flag in flags.difference(section) {
            wrong.push(format!("{flag} of `rbuilder {name}` is not in its section"));
        }
        for flag in section.difference(&flags) {
            wrong.push(format!(
                "{flag} is documented under `rbuilder {name}`, which has no such flag"
            ));
        }
    }
    let commands: BTreeSet<String> = commands().iter().map(|c| c.join(" ")).collect();
    for name in documented.keys().filter(|name| !commands.contains(*name)) {
        wrong.push(format!(
            "## `rbuilder {name}` documents a command rbuilder does not have"
        ));
    }
    assert!(
        wrong.is_empty(),
        "docs/commands.md and `--help` disagree (document each flag in a table row or usage \
         line of its command's section):\n  {}",
        wrong.join("\n  ")
    );
}
