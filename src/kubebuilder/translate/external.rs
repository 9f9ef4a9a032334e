//! Other projects' kinds (`external: true`): kubebuilder takes their Go types from a module,
//! rbuilder makes Rust types from their CRDs, which the kubebuilder project does not hold. The
//! CRD files given to `alpha generate --external-api-path` are searched for each; a kind found
//! is carried over with its controller and webhooks, its file copied into the Rust project.

use std::path::Path;

use anyhow::{Result, bail};

use crate::external::{self, Crd};
use crate::kubebuilder::{CrdFile, EXTERNAL_CRDS};

/// The CRD files given, parsed.
pub struct ExternalCrds {
    files: Vec<Given>,
}

struct Given {
    /// As given, for messages.
    path: String,
    /// Where the Rust project keeps it.
    copy: String,
    text: String,
    crds: Vec<Crd>,
    used: bool,
}

/// A CRD found for an external kind: the file PROJECT names, and the CRD.
pub struct Found {
    pub path: String,
    pub crd: Crd,
}

impl ExternalCrds {
    /// Parses `files`; refuses one that holds no CRD, and two whose copies would have the same
    /// name.
    pub fn read(files: &[CrdFile]) -> Result<Self> {
        let mut given: Vec<Given> = Vec::new();
        for file in files {
            let crds = external::parse_all(&file.text, &file.path)?;
            let name = Path::new(&file.path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "crds.yaml".to_owned());
            let copy = format!("{EXTERNAL_CRDS}/{name}");
            if let Some(other) = given.iter().find(|g| g.copy == copy) {
                bail!(
                    "--external-api-path {} and {} have the same file name, and the migrated \
                     project keeps each in {EXTERNAL_CRDS}/ under its name: rename one",
                    other.path,
                    file.path
                );
            }
            given.push(Given {
                path: file.path.clone(),
                copy,
                text: file.text.clone(),
                crds,
                used: false,
            });
        }
        Ok(Self { files: given })
    }

    /// The CRD of `kind` in `api_group` with version `version`, if a file has it.
    pub fn find(&mut self, api_group: &str, version: &str, kind: &str) -> Option<Found> {
        for file in &mut self.files {
            let crd = file.crds.iter().find(|crd| {
                crd.spec.group == api_group
                    && crd.spec.names.kind == kind
                    && crd.spec.versions.iter().any(|v| v.name == version)
            });
            if let Some(crd) = crd {
                file.used = true;
                return Some(Found {
                    path: file.copy.clone(),
                    crd: crd.clone(),
                });
            }
        }
        None
    }

    /// The files to copy into the Rust project (path, text); refuses a file given for no kind
    /// of the project, which is likely a mistake.
    pub fn used(self) -> Result<Vec<(String, String)>> {
        if let Some(unused) = self.files.iter().find(|f| !f.used) {
            let kinds: Vec<String> = unused
                .crds
                .iter()
                .map(|c| format!("{} {}", c.spec.group, c.spec.names.kind))
                .collect();
            bail!(
                "--external-api-path {} holds the CRDs of {}, and the kubebuilder project has no \
                 controller or webhook for any of them: drop it",
                unused.path,
                kinds.join(", ")
            );
        }
        Ok(self.files.into_iter().map(|f| (f.copy, f.text)).collect())
    }
}
