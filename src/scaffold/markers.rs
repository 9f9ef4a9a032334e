//! Marker comments: the lines in generated files where later commands insert code, such as
//! `// +rbuilder:scaffold:controllers`. Inserting before a marker keeps everything the user
//! wrote around it, so a second `create api` never rewrites user code.

use anyhow::{Result, bail};

/// The text every marker starts with, after the comment leader.
const PREFIX: &str = "+rbuilder:scaffold:";

/// Inserts `lines` just before the line holding marker `name`, each with the marker line's
/// indentation. Lines already present anywhere in the file are skipped, so inserting twice
/// changes nothing; a line of brackets and punctuation alone (the `),` rustfmt puts under a
/// call too long for one line) goes with the line above it, inserted or skipped with it. A
/// single `mod` or `use` line goes where rustfmt sorts it instead (see `insert_sorted`). `file`
/// is only used in the error message.
pub fn insert(content: &str, file: &str, name: &str, lines: &[String]) -> Result<String> {
    if let [line] = lines
        && !item_kind(line).is_empty()
    {
        return insert_sorted(content, file, name, line);
    }
    append(content, file, name, lines)
}

fn append(content: &str, file: &str, name: &str, lines: &[String]) -> Result<String> {
    let marker = format!("{PREFIX}{name}");
    let is_marker = |line: &str| {
        let t = line.trim_start();
        (t.starts_with("//") || t.starts_with('#'))
            && t.trim_start_matches(['/', '#']).trim() == marker
    };
    let Some(at) = content.lines().position(is_marker) else {
        bail!(
            "{file} has no `{marker}` marker comment, so rbuilder does not know where to add \
             the new code; put the line `{marker}` (as a comment) back where new entries \
             belong, then run the command again"
        );
    };
    let existing: Vec<&str> = content.lines().map(str::trim).collect();
    let marker_line = content.lines().nth(at).unwrap_or_default();
    let indent = &marker_line[..marker_line.len() - marker_line.trim_start().len()];

    let mut out = String::with_capacity(content.len() + 64 * lines.len());
    for (i, line) in content.lines().enumerate() {
        if i == at {
            let mut previous_inserted = false;
            let wanted = lines.iter().filter(|l| {
                let punctuation = !l.is_empty() && !l.contains(|c: char| c.is_alphanumeric());
                let inserted = if punctuation {
                    previous_inserted
                } else {
                    !existing.contains(&l.trim())
                };
                previous_inserted = inserted;
                inserted
            });
            for new in wanted {
                if new.is_empty() {
                    out.push('\n');
                } else {
                    out.push_str(indent);
                    out.push_str(new);
                    out.push('\n');
                }
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    if !content.ends_with('\n') {
        out.pop();
    }
    Ok(out)
}

/// Inserts one `mod` or `use` line before marker `name`, at the place rustfmt would sort it
/// to among the lines of the same kind right above the marker (rustfmt orders `mod` and `use`
/// items by name, so a line appended at the end would fail `cargo fmt --check`).
fn insert_sorted(content: &str, file: &str, name: &str, line: &str) -> Result<String> {
    let marker = format!("{PREFIX}{name}");
    let lines: Vec<&str> = content.lines().collect();
    let Some(at) = lines.iter().position(|l| {
        let t = l.trim_start();
        (t.starts_with("//") || t.starts_with('#'))
            && t.trim_start_matches(['/', '#']).trim() == marker
    }) else {
        return append(content, file, name, &[line.to_owned()]);
    };
    if lines.iter().any(|l| l.trim() == line.trim()) {
        return Ok(content.to_owned());
    }
    let kind = item_kind(line);
    let mut start = at;
    while start > 0 && !lines[start - 1].trim().is_empty() && item_kind(lines[start - 1]) == kind {
        start -= 1;
    }
    let key = sort_key(line);
    let pos = (start..at)
        .find(|&i| sort_key(lines[i]) > key)
        .unwrap_or(at);
    let indent = &lines[at][..lines[at].len() - lines[at].trim_start().len()];
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
    out.insert(pos, format!("{indent}{}", line.trim()));
    let mut text = out.join("\n");
    if content.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// `pub mod`, `mod`, `pub use`...: the words before the name.
fn item_kind(line: &str) -> &str {
    let t = line.trim_start();
    ["pub mod ", "mod ", "pub use ", "use "]
        .into_iter()
        .find(|k| t.starts_with(k))
        .unwrap_or("")
}

/// What rustfmt sorts `mod` and `use` lines by: the name as text, without `r#`.
fn sort_key(line: &str) -> String {
    let t = line.trim_start();
    t[item_kind(line).len()..].replace("r#", "")
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str =
        "pub const ALL: &[C] = &[\n    a::C,\n    // +rbuilder:scaffold:controllers\n];\n";

    #[test]
    fn inserts_before_the_marker_with_its_indent() {
        let out = insert(FILE, "mod.rs", "controllers", &["b::C,".into()]).unwrap();
        assert_eq!(
            out,
            "pub const ALL: &[C] = &[\n    a::C,\n    b::C,\n    // +rbuilder:scaffold:controllers\n];\n"
        );
    }

    #[test]
    fn inserting_twice_changes_nothing() {
        let once = insert(FILE, "mod.rs", "controllers", &["b::C,".into()]).unwrap();
        let twice = insert(&once, "mod.rs", "controllers", &["b::C,".into()]).unwrap();
        assert_eq!(once, twice);
    }

    #[test]
    fn a_closing_line_goes_with_the_line_above() {
        let long = |kind: &str| vec![format!("{kind}::crd("), "),".to_owned()];
        let once = insert(FILE, "mod.rs", "controllers", &long("b")).unwrap();
        let both = insert(&once, "mod.rs", "controllers", &long("c")).unwrap();
        assert_eq!(
            both,
            "pub const ALL: &[C] = &[\n    a::C,\n    b::crd(\n    ),\n    c::crd(\n    ),\n    \
             // +rbuilder:scaffold:controllers\n];\n"
        );
        let again = insert(&both, "mod.rs", "controllers", &long("b")).unwrap();
        assert_eq!(both, again);
    }

    #[test]
    fn yaml_markers_work_too() {
        let yaml = "resources:\n- a.yaml\n# +rbuilder:scaffold:crdkustomizeresource\n";
        let out = insert(yaml, "k.yaml", "crdkustomizeresource", &["- b.yaml".into()]).unwrap();
        assert_eq!(
            out,
            "resources:\n- a.yaml\n- b.yaml\n# +rbuilder:scaffold:crdkustomizeresource\n"
        );
    }

    #[test]
    fn mod_lines_go_where_rustfmt_sorts_them() {
        let file = "use x;\n\npub mod api;\npub mod guestbook;\n// +rbuilder:scaffold:m\n";
        let out = insert_sorted(file, "f", "m", "pub mod demo_micro_service;").unwrap();
        assert_eq!(
            out,
            "use x;\n\npub mod api;\npub mod demo_micro_service;\npub mod guestbook;\n// +rbuilder:scaffold:m\n"
        );
        let out = insert_sorted(&out, "f", "m", "pub mod r#type;").unwrap();
        assert!(
            out.contains("pub mod guestbook;\npub mod r#type;\n// +rbuilder"),
            "{out}"
        );
        assert_eq!(
            insert_sorted(&out, "f", "m", "pub mod r#type;").unwrap(),
            out
        );
    }

    #[test]
    fn a_missing_marker_is_an_error_naming_file_and_marker() {
        let err = insert("fn main() {}\n", "src/x.rs", "crds", &["x".into()]).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("src/x.rs") && msg.contains("+rbuilder:scaffold:crds"),
            "{msg}"
        );
    }
}
