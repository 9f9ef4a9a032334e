//! `PROJECT.sum`: what rbuilder wrote into a project, kept beside PROJECT, so that `rbuilder
//! update` can tell apart what changed in rbuilder's templates from what the user changed:
//!
//! - `file <digest> <path>`: each of the user's files as rbuilder's templates last made it (the
//!   base the user's copy started from). A file the user edited before a later command inserted
//!   into it loses its line: rbuilder can no longer tell which part was its own.
//! - `crate <name> <version>`: the crate versions of the Cargo.lock rbuilder last wrote (its
//!   tested resolution), so that a version the user chose (`cargo update -p`, `cargo add`) is
//!   told from rbuilder's and kept.
//!
//! Every plan applied to a project keeps it current (`Plan::apply`), so no command has to.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Result, bail};

use super::owned;
use super::paths;

/// The record's name at the project root.
pub const FILE: &str = "PROJECT.sum";

const HEADER: &str = "\
# What rbuilder wrote into this project, for `rbuilder update` to tell your changes from those of
# rbuilder's templates: a digest of each of your files as rbuilder's templates made it, and the
# crate versions of the Cargo.lock rbuilder wrote. rbuilder keeps it; commit it with PROJECT.
";

/// A project's record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    /// Digest of each file as rbuilder's templates made it, by path.
    pub files: BTreeMap<String, String>,
    /// (name, version) of each crate of the Cargo.lock rbuilder wrote.
    pub crates: BTreeSet<(String, String)>,
}

impl Record {
    /// Reads a record; an unreadable one is an error that names its line.
    pub fn parse(text: &str) -> Result<Self> {
        let mut record = Self::default();
        for line in text.lines() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let words: Vec<&str> = line.splitn(3, ' ').collect();
            match words.as_slice() {
                ["file", digest, path] => {
                    record
                        .files
                        .insert((*path).to_owned(), (*digest).to_owned());
                }
                ["crate", name, version] => {
                    record
                        .crates
                        .insert(((*name).to_owned(), (*version).to_owned()));
                }
                _ => bail!(
                    "{FILE} has a line rbuilder did not write: `{line}`; restore the file from \
                     version control, or delete it (update then cannot tell your changes from \
                     rbuilder's)"
                ),
            }
        }
        Ok(record)
    }

    pub fn render(&self) -> String {
        let mut out = String::from(HEADER);
        for (name, version) in &self.crates {
            out.push_str(&format!("crate {name} {version}\n"));
        }
        for (path, digest) in &self.files {
            out.push_str(&format!("file {digest} {path}\n"));
        }
        out
    }
}

/// The digest a record keeps of `content`.
pub fn digest(content: &str) -> String {
    format!("{:016x}", owned::fnv1a(content.as_bytes()))
}

/// Whether the record follows `path` with `content`: the user's files, not what rbuilder
/// rewrites as a whole (PROJECT, its record, Cargo.lock, the files it owns) nor what the
/// project's `manifests` binary writes from the code.
pub fn follows(path: &str, content: &str) -> bool {
    ![crate::project::FILE, FILE, paths::CARGO_LOCK, paths::ROLE].contains(&path)
        && !path.starts_with(&format!("{}/", paths::CRD_BASES))
        && !owned::is_owned(content)
}
