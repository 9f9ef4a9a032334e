//! Migrating a kubebuilder project (layout `go.kubebuilder.io/v4`) to Rust: `rbuilder alpha
//! generate --input-dir <the Go project> --output-dir <a new folder>`. Its PROJECT is read as
//! kubebuilder writes it (`format`), translated into the PROJECT of an rbuilder project with
//! what cannot be carried over listed (`translate`, `left_out`), and its license header kept
//! (`boilerplate`); `alpha generate` then replays that PROJECT as it replays its own. The Go
//! code is not translated: docs/migrating-from-kubebuilder.md says where its logic goes.
//! kubebuilder's flags that only a Go project uses are answered with a hint (`flags`).

mod boilerplate;
mod flags;
mod format;
mod go_files;
mod left_out;
mod translate;

use std::path::Path;

use anyhow::{Context as _, Result};
use serde::Deserialize;

pub use flags::hint as flags_hint;
pub use left_out::{LeftOut, report};
pub use translate::GO_V4;

use crate::project::{Project, yaml_error};

/// A kubebuilder project, as the Rust project to scaffold.
pub struct Migration {
    /// The Rust project's PROJECT.
    pub project: Project,
    /// Files to write into the Rust project before its APIs are replayed (path, text): the CRD
    /// files its kinds' types are made from, which PROJECT names (other projects' kinds', and
    /// the Go project's for its own), and the Go project's samples of its own kinds.
    pub files: Vec<(String, String)>,
    /// Its license header, `hack/boilerplate.txt`, from the Go project's
    /// `hack/boilerplate.go.txt` if it has one.
    pub boilerplate: Option<String>,
    /// What the Rust project lacks.
    pub left_out: Vec<LeftOut>,
}

/// Whether the PROJECT file `text` is a kubebuilder project's (its layout is one of
/// kubebuilder's plugins), which `migrate` reads, rather than an rbuilder project's.
pub fn is_kubebuilder(text: &str) -> bool {
    #[derive(Deserialize)]
    struct Layout {
        #[serde(default)]
        layout: format::Layout,
    }
    serde_saphyr::from_str::<Layout>(text).is_ok_and(|l| {
        l.layout
            .plugins()
            .iter()
            .any(|p| p.contains(".kubebuilder.io/"))
    })
}

/// A CRD file given to `alpha generate --external-api-path`: the CRDs of other projects' kinds
/// that the kubebuilder project takes from Go modules.
pub struct CrdFile {
    /// As given, for messages.
    pub path: String,
    pub text: String,
}

/// Where a migrated project keeps the CRD files of other projects' kinds, which its PROJECT
/// names as their types' source: its own copy, so that `alpha generate` and `create webhook`
/// can read them again. Nothing installs them (config/crd/kustomization.yaml lists bases/).
pub const EXTERNAL_CRDS: &str = "config/crd/external";

/// The Rust project for the kubebuilder project at `input`, whose PROJECT is `text`, with
/// `crds` the CRD files of its external kinds.
pub fn migrate(input: &Path, text: &str, crds: &[CrdFile]) -> Result<Migration> {
    let what = || {
        format!(
            "{} is not a PROJECT file rbuilder can migrate",
            input.join(crate::project::FILE).display()
        )
    };
    let kb: format::KbProject = serde_saphyr::from_str(text)
        .map_err(|e| anyhow::anyhow!("{}", yaml_error(&e)))
        .with_context(what)?;
    // kubebuilder names a project after its folder unless told otherwise.
    let folder = input
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let crds = translate::ExternalCrds::read(crds)?;
    let go = go_files::GoFiles::read(input);
    let (mut project, left_out, files) =
        translate::translate(kb, &folder, crds, Some(go)).with_context(what)?;
    let header = std::fs::read_to_string(input.join(boilerplate::FILE))
        .ok()
        .map(|go| boilerplate::convert(&go, crate::license::copyright_year()));
    if let Some(header) = &header {
        project.license = header.license;
        project.owner = header.owner.clone();
    }
    Ok(Migration {
        project,
        files,
        boilerplate: header.map(|h| h.text),
        left_out,
    })
}
