//! The files rbuilder owns in a project: the operator runtime (`runtime/`) and the `manifests`
//! binary. `init` writes them and `update` rewrites them; each carries an ownership header with
//! a checksum (see `scaffold::owned`).

use anyhow::Result;

use crate::scaffold::{Templates, owned};

/// The template folders a command that writes owned files must load.
pub const TEMPLATES: &[&str] = &[owned::TEMPLATE_DIR];

/// Every owned file, by path, as this rbuilder writes it with the template context `ctx`.
pub fn render(templates: &Templates, ctx: &tera::Context) -> Result<Vec<(String, String)>> {
    // The project's license header, as a comment block (empty with `--license none`).
    let license = ctx
        .get("header")
        .and_then(|header| header.as_str())
        .unwrap_or_default();
    let mut files = Vec::new();
    for name in templates.names(owned::TEMPLATE_DIR) {
        let path = name.strip_prefix(owned::TEMPLATE_DIR).unwrap_or(&name);
        // Cargo manifests carry no license header, as in every Rust project.
        let license = if path.ends_with(".rs") { license } else { "" };
        let body = templates.render(&name, ctx)?;
        files.push((path.to_owned(), owned::stamp(path, license, &body)));
    }
    Ok(files)
}
