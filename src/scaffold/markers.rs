//! Marker comments: the lines in generated files where later commands insert code, such as
//! `// +rbuilder:scaffold:controllers`. Inserting before a marker keeps everything the user
//! wrote around it, so a second `create api` never rewrites user code.

use anyhow::{Result, bail};

/// The text every marker starts with, after the comment leader.
const PREFIX: &str = "+rbuilder:scaffold:";

/// Inserts `lines` just before the line holding marker `name`, each with the marker line's
/// indentation. Lines already present anywhere in the file are skipped, so inserting twice
/// changes nothing. `file` is only used in the error message.
pub fn insert(content: &str, file: &str, name: &str, lines: &[String]) -> Result<String> {
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
            for new in lines.iter().filter(|l| !existing.contains(&l.trim())) {
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
    fn yaml_markers_work_too() {
        let yaml = "resources:\n- a.yaml\n# +rbuilder:scaffold:crdkustomizeresource\n";
        let out = insert(yaml, "k.yaml", "crdkustomizeresource", &["- b.yaml".into()]).unwrap();
        assert_eq!(
            out,
            "resources:\n- a.yaml\n- b.yaml\n# +rbuilder:scaffold:crdkustomizeresource\n"
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
