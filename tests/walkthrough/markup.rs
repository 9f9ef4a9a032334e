//! How a walked document marks what the walk does with each of its code blocks: the words
//! after a fenced block's language (GitHub shows only the language, and uses it to colour the
//! block), and `<!-- walk: ... -->` comments (which GitHub does not show) for what the reader
//! does without typing it.
//!
//! ````text
//! ```sh run                 commands the reader types, run in order (in one folder: a `cd`
//!                           carries over to the next block); each must succeed
//! ```sh run eventually      the same, run again (for up to six minutes) until what the next
//!                           `output` block shows is what it prints: a state that takes a
//!                           moment (a controller's work, a manager starting)
//! ```sh run fails          run, and must fail: the reader is shown an error (its output is
//!                           checked as any other)
//! ```sh run xfail="TEXT"    run, and must fail with TEXT in its output: a known bug, which the
//!                           walk reports as fixed (failing) once the block succeeds; the output
//!                           shown after it is not checked meanwhile
//! ```sh background          a command the reader leaves running in a terminal of its own (a
//!                           manager): started, and stopped at `<!-- walk: stop -->` or at the
//!                           end; the walk fails if it exits before
//! ```sh stand-in=NAME       a step the walk does its own way (see `stand_ins.rs`): one that
//!                           needs what this machine lacks (a container engine, GitHub)
//! ```text output            what the block before printed (stdout and stderr, in order): see
//!                           `matching.rs`; `ignore=READY,AGE` leaves those columns of kubectl's
//!                           tables out of the comparison (they depend on the cluster's nodes)
//! ```rust excerpt PATH      lines of the project's file PATH as it is at that point, `...`
//!                           (alone on a line, or as a comment `// ...`, `# ...`) for lines left out
//! ```rust edit PATH after="LINE"   the reader's edit: the block, inserted after the first line
//!                           of PATH that is LINE (leading and trailing spaces aside)
//! ```yaml example           shown, neither run nor checked
//! <!-- walk: stop -->       the command of the last `background` block is stopped
//! <!-- walk: stand-in=NAME -->   what the reader has before the page starts, done by the walk
//!                           its own way (a kubebuilder project, a cluster with cert-manager)
//! ````
//!
//! Every block must say which it is: a block the walk would silently skip is one that can
//! drift from the tool. For the same reason a walked document has no indented code blocks
//! (four spaces after a blank line, outside a list), which have no info string to say it.

use std::fmt;

/// What the walk does with one part of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    Run {
        eventually: bool,
        fails: bool,
        xfail: Option<String>,
    },
    Background,
    StandIn(String),
    Output {
        ignore: Vec<String>,
    },
    Excerpt {
        path: String,
    },
    Edit {
        path: String,
        after: String,
    },
    Example,
    /// `<!-- walk: stop -->`: the command of the last `background` block is stopped, as the
    /// reader stops it with Ctrl-C.
    Stop,
}

/// A code block (or a directive) of the document, in the document's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The line of its opening fence (or of the directive), from 1, for messages.
    pub line: usize,
    pub role: Role,
    /// What is between the fences, each line ending with a newline; empty for a directive.
    pub text: String,
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the block at line {}", self.line)
    }
}

/// The blocks of `doc`, or what is wrong with its markup (with the line).
pub fn parse(doc: &str) -> Result<Vec<Block>, String> {
    let mut blocks = Vec::new();
    let mut lines = doc.lines().enumerate().map(|(i, line)| (i + 1, line));
    // The line before, and the last line with text before it: an indented code block starts
    // after a blank line that does not continue a list.
    let (mut before, mut text_before) = ("", "");
    while let Some((number, line)) = lines.next() {
        let trimmed = line.trim();
        if (line.starts_with("    ") || line.starts_with('\t'))
            && !trimmed.is_empty()
            && before.trim().is_empty()
            && !continues_a_list(text_before)
        {
            return Err(format!(
                "line {number}: an indented code block, which cannot say what the walk does \
                 with it: fence it (```sh run, ```text example, ...)"
            ));
        }
        before = line;
        if !trimmed.is_empty() {
            text_before = line;
        }
        if let Some(directive) = trimmed
            .strip_prefix("<!-- walk:")
            .and_then(|rest| rest.strip_suffix("-->"))
        {
            let role = match directive.trim() {
                "stop" => Role::Stop,
                other => match other.strip_prefix("stand-in=") {
                    Some(name) if !name.is_empty() => Role::StandIn(name.to_owned()),
                    _ => return Err(format!("line {number}: unknown directive '{other}'")),
                },
            };
            blocks.push(Block {
                line: number,
                role,
                text: String::new(),
            });
            continue;
        }
        let Some(info) = line.strip_prefix("```") else {
            continue;
        };
        let mut text = String::new();
        let mut closed = false;
        for (_, inner) in lines.by_ref() {
            if inner.trim_end() == "```" {
                closed = true;
                break;
            }
            text.push_str(inner);
            text.push('\n');
        }
        if !closed {
            return Err(format!("line {number}: the code block is never closed"));
        }
        let role = role(info).map_err(|error| format!("line {number}: {error}"))?;
        blocks.push(Block {
            line: number,
            role,
            text,
        });
    }
    check_order(&blocks)?;
    Ok(blocks)
}

/// Whether text indented after `line` (the last line with text) is a list item's: `line` is an
/// item (`- `, `* `, `1. `) or already indented.
fn continues_a_list(line: &str) -> bool {
    let trimmed = line.trim_start();
    let numbered = trimmed.split_once(". ").is_some_and(|(number, _)| {
        !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())
    });
    line.starts_with([' ', '\t'])
        || trimmed.starts_with("- ")
        || trimmed.starts_with("* ")
        || numbered
}

/// The role an info string (`sh run eventually`) gives its block.
fn role(info: &str) -> Result<Role, String> {
    let words = words(info)?;
    let Some((language, rest)) = words.split_first() else {
        return Err("the code block names no language and no role".into());
    };
    let (role, options) = rest
        .split_first()
        .ok_or_else(|| format!("the {language} block says nothing of what the walk does with it: add run, output, excerpt, edit, example, background or stand-in=NAME after the language"))?;
    let option = |name: &str| {
        options
            .iter()
            .find_map(|word| word.strip_prefix(name)?.strip_prefix('='))
            .map(str::to_owned)
    };
    let flag = |name: &str| options.iter().any(|word| word == name);
    let path = || {
        options
            .first()
            .filter(|word| !word.contains('='))
            .cloned()
            .ok_or_else(|| format!("{role} needs the file's path"))
    };
    let role = match role.as_str() {
        "run" => Role::Run {
            eventually: flag("eventually"),
            fails: flag("fails"),
            xfail: option("xfail"),
        },
        "background" => Role::Background,
        "output" => Role::Output {
            ignore: option("ignore")
                .map(|columns| columns.split(',').map(str::to_owned).collect())
                .unwrap_or_default(),
        },
        "excerpt" => Role::Excerpt { path: path()? },
        "edit" => Role::Edit {
            path: path()?,
            after: option("after").ok_or("edit needs after=\"LINE\"")?,
        },
        "example" => Role::Example,
        stand_in => match stand_in.strip_prefix("stand-in=") {
            Some(name) => Role::StandIn(name.to_owned()),
            None => return Err(format!("unknown role '{stand_in}'")),
        },
    };
    Ok(role)
}

/// The words of an info string; a double-quoted part keeps its spaces (`after="a b"`).
fn words(info: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    for c in info.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if quoted {
        return Err(format!("an unclosed quote in '{info}'"));
    }
    if !word.is_empty() {
        words.push(word);
    }
    Ok(words)
}

/// What a block needs before it: an output follows what prints it, an `eventually` run has
/// an output to wait for, a stop has something to stop.
fn check_order(blocks: &[Block]) -> Result<(), String> {
    let mut running = false;
    for (i, block) in blocks.iter().enumerate() {
        let before = i.checked_sub(1).map(|i| &blocks[i].role);
        let after = blocks.get(i + 1).map(|block| &block.role);
        match &block.role {
            Role::Output { .. } if !matches!(before, Some(Role::Run { .. } | Role::Background)) => {
                return Err(format!(
                    "{block}: an output must follow the run or background block that prints it"
                ));
            }
            Role::Run {
                eventually: true, ..
            } if !matches!(after, Some(Role::Output { .. })) => {
                return Err(format!(
                    "{block}: a run eventually must be followed by the output it waits for"
                ));
            }
            Role::Background if running => {
                return Err(format!(
                    "{block}: a second background command before <!-- walk: stop --> stops the first"
                ));
            }
            Role::Background => running = true,
            Role::Stop if !running => {
                return Err(format!("{block}: nothing runs in the background to stop"));
            }
            Role::Stop => running = false,
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_block_says_what_the_walk_does_with_it() {
        let doc = "Intro.\n\n```sh run\nrbuilder version\n```\n\n```text output\nrbuilder 0.1.0\n```\n\n\
                   ```rust edit src/api/v1/x.rs after=\"pub struct XSpec {\"\n    pub a: u8,\n```\n\n\
                   ```sh background\nmake run\n```\n<!-- walk: stop -->\n\
                   ```sh run eventually\nkubectl get x\n```\n```text output ignore=READY,AGE\nNAME\n```\n\
                   ```sh stand-in=cluster\nkind create cluster\n```\n\
                   <!-- walk: stand-in=kubebuilder-project -->\n";
        let blocks = parse(doc).expect("valid markup");
        let roles: Vec<_> = blocks.iter().map(|b| b.role.clone()).collect();
        assert_eq!(
            roles,
            [
                Role::Run {
                    eventually: false,
                    fails: false,
                    xfail: None
                },
                Role::Output { ignore: vec![] },
                Role::Edit {
                    path: "src/api/v1/x.rs".into(),
                    after: "pub struct XSpec {".into()
                },
                Role::Background,
                Role::Stop,
                Role::Run {
                    eventually: true,
                    fails: false,
                    xfail: None
                },
                Role::Output {
                    ignore: vec!["READY".into(), "AGE".into()]
                },
                Role::StandIn("cluster".into()),
                Role::StandIn("kubebuilder-project".into()),
            ]
        );
        assert_eq!(blocks[0].line, 3);
        assert_eq!(blocks[0].text, "rbuilder version\n");
    }

    #[test]
    fn a_block_without_a_role_is_refused() {
        let error = parse("\n```sh\nmake test\n```\n").expect_err("no role");
        assert!(
            error.starts_with("line 2: the sh block says nothing"),
            "{error}"
        );
        let error = parse("```\nx\n```\n").expect_err("no language");
        assert!(error.contains("names no language"), "{error}");
    }

    #[test]
    fn an_indented_code_block_is_refused_but_a_lists_indented_text_is_not() {
        let error = parse("Run:\n\n    make test\n").expect_err("an indented block");
        assert!(
            error.starts_with("line 3: an indented code block"),
            "{error}"
        );
        let error = parse("```sh run\nx\n```\n\n\tmake test\n").expect_err("a tab");
        assert!(error.starts_with("line 5:"), "{error}");
        for list in [
            "- an item\n\n    its second paragraph\n",
            "1. a step\n\n    its second paragraph\n",
            "- an item\n  continued\n\n    its second paragraph\n",
        ] {
            assert_eq!(parse(list), Ok(vec![]), "{list}");
        }
    }

    #[test]
    fn blocks_out_of_order_are_refused() {
        let error = parse("```text output\nx\n```\n").expect_err("nothing before");
        assert!(error.contains("must follow the run"), "{error}");
        let error = parse("```sh run eventually\nx\n```\n").expect_err("no output");
        assert!(error.contains("followed by the output"), "{error}");
        let error = parse("<!-- walk: stop -->\n").expect_err("nothing to stop");
        assert!(error.contains("nothing runs"), "{error}");
    }
}
