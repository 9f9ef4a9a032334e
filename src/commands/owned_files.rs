//! The files rbuilder owns in a project: the operator runtime (`runtime/`) and the `manifests`
//! binary. `init` writes them and `update` rewrites them; each carries an ownership header with
//! a checksum (see `scaffold::owned`).

use std::path::Path;

use anyhow::Result;

use crate::scaffold::{Templates, owned};

/// The template folders a command that writes owned files must load.
pub const TEMPLATES: &[&str] = &[owned::TEMPLATE_DIR];

/// Where a project's `manifests` binary is: the one decision between the two layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Manifests {
    /// A package of its own, `manifests/`: as projects are made now.
    Package,
    /// `src/bin/manifests.rs`, a second binary of the project's package behind its feature
    /// `manifests`: the projects made before. `update` keeps writing it there for them (their
    /// Cargo.toml names it); docs/upgrading.md says how to move to the package.
    InSrcBin,
}

/// The file of the older layout.
const IN_SRC_BIN: &str = "src/bin/manifests.rs";
/// The folder of the package.
const PACKAGE: &str = "manifests/";

impl Manifests {
    /// The layout of the project at `root`.
    pub fn of(root: &Path) -> Self {
        Self::where_exists(|path| root.join(path).is_file())
    }

    /// The layout of a project in which `exists` tells which files there are (a plan's, say).
    pub fn where_exists(exists: impl Fn(&str) -> bool) -> Self {
        match exists(IN_SRC_BIN) {
            true => Self::InSrcBin,
            false => Self::Package,
        }
    }
}

/// Every owned file of a project whose `manifests` binary is where `manifests` says, by path,
/// as this rbuilder writes it with the template context `ctx`.
pub fn render(
    templates: &Templates,
    ctx: &tera::Context,
    manifests: Manifests,
) -> Result<Vec<(String, String)>> {
    // The project's license header, as a comment block (empty with `--license none`).
    let license = ctx
        .get("header")
        .and_then(|header| header.as_str())
        .unwrap_or_default();
    let mut files = Vec::new();
    for name in templates.names(owned::TEMPLATE_DIR) {
        let path = name.strip_prefix(owned::TEMPLATE_DIR).unwrap_or(&name);
        let other_layout = match manifests {
            Manifests::Package => path == IN_SRC_BIN,
            Manifests::InSrcBin => path.starts_with(PACKAGE),
        };
        if other_layout {
            continue;
        }
        // Cargo manifests carry no license header, as in every Rust project.
        let license = if path.ends_with(".rs") { license } else { "" };
        let body = templates.render(&name, ctx)?;
        files.push((path.to_owned(), owned::stamp(path, license, &body)));
    }
    Ok(files)
}
