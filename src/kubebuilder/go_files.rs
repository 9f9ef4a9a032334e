//! What the migration reads of the kubebuilder project besides PROJECT: the CRDs controller-gen
//! wrote from the Go types (`config/crd/bases`), which give each kind its API; the samples
//! (`config/samples`), valid for that API; and the manager's environment
//! (`config/manager/manager.yaml`), where kubebuilder's deploy-image kinds find their images.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// Where the Go project's CRDs are, and where the Rust project keeps the ones its kinds' types
/// are made from (nothing installs them: config/crd/kustomization.yaml lists bases/, which
/// `make manifests` writes from the Rust types).
const BASES: &str = "config/crd/bases";
pub const KUBEBUILDER_CRDS: &str = "config/crd/kubebuilder";
const SAMPLES: &str = "config/samples";
const MANAGER: &str = "config/manager/manager.yaml";

/// The files read.
#[derive(Default)]
pub struct GoFiles {
    crds: Vec<CrdFile>,
    /// Files of config/crd/bases that are not YAML: (name, why).
    pub unreadable: Vec<(String, String)>,
    /// The samples, by file name.
    samples: BTreeMap<String, String>,
    /// The manager container's environment variables with a value.
    env: BTreeMap<String, String>,
}

struct CrdFile {
    name: String,
    text: String,
    crds: Vec<Value>,
    used: bool,
}

/// A kind's CRD: the file the Rust project keeps it in, and the CRD.
pub struct Found {
    pub copy: String,
    pub crd: Value,
}

impl GoFiles {
    /// What the project at `input` holds of these files (a file missing is no error: the kinds
    /// that need it say so).
    pub fn read(input: &Path) -> Self {
        let mut files = Self::default();
        let yaml_files = |dir: &str| {
            let mut names: Vec<String> = std::fs::read_dir(input.join(dir))
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| e.path().is_file())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".yaml") || name.ends_with(".yml"))
                .collect();
            names.sort();
            names
        };
        for name in yaml_files(BASES) {
            let Ok(text) = std::fs::read_to_string(input.join(BASES).join(&name)) else {
                continue;
            };
            match serde_saphyr::from_multiple::<Option<Value>>(&text) {
                Ok(documents) => {
                    let crds = documents
                        .into_iter()
                        .flatten()
                        .filter(|d| d["kind"] == "CustomResourceDefinition")
                        .collect();
                    files.crds.push(CrdFile {
                        name,
                        text,
                        crds,
                        used: false,
                    });
                }
                Err(error) => files
                    .unreadable
                    .push((name, crate::project::yaml_error(&error))),
            }
        }
        for name in yaml_files(SAMPLES) {
            if let Ok(text) = std::fs::read_to_string(input.join(SAMPLES).join(&name)) {
                files.samples.insert(name, text);
            }
        }
        if let Ok(text) = std::fs::read_to_string(input.join(MANAGER)) {
            files.env = manager_env(&text);
        }
        files
    }

    /// The CRD of `kind` in `api_group` that has `version`, if a file has it.
    pub fn find(&mut self, api_group: &str, kind: &str, version: &str) -> Option<Found> {
        for file in &mut self.crds {
            let crd = file.crds.iter().find(|crd| {
                crd["spec"]["group"] == api_group
                    && crd["spec"]["names"]["kind"] == kind
                    && crd["spec"]["versions"]
                        .as_array()
                        .is_some_and(|v| v.iter().any(|v| v["name"] == version))
            });
            if let Some(crd) = crd {
                file.used = true;
                return Some(Found {
                    copy: format!("{KUBEBUILDER_CRDS}/{}", file.name),
                    crd: crd.clone(),
                });
            }
        }
        None
    }

    /// Where the Go project keeps the CRDs its kinds' APIs come from, for messages.
    pub fn bases() -> &'static str {
        BASES
    }

    /// The sample file `name` (`example.com_v1_wordpress.yaml`), if the project has it.
    pub fn sample(&self, name: &str) -> Option<&str> {
        self.samples.get(name).map(String::as_str)
    }

    /// The value the manager's environment gives `name`.
    pub fn env(&self, name: &str) -> Option<&str> {
        self.env.get(name).map(String::as_str)
    }

    /// The CRD files some kind's types were made from: (path in the Rust project, text).
    pub fn used(&self) -> Vec<(String, String)> {
        self.crds
            .iter()
            .filter(|f| f.used)
            .map(|f| (format!("{KUBEBUILDER_CRDS}/{}", f.name), f.text.clone()))
            .collect()
    }
}

/// The environment variables with a value of the manager's container in manager.yaml's
/// Deployment.
fn manager_env(text: &str) -> BTreeMap<String, String> {
    let documents: Vec<Option<Value>> = serde_saphyr::from_multiple(text).unwrap_or_default();
    documents
        .iter()
        .flatten()
        .filter(|d| d["kind"] == "Deployment")
        .flat_map(|d| {
            d["spec"]["template"]["spec"]["containers"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|c| c["name"] == "manager")
        .flat_map(|c| c["env"].as_array().cloned().unwrap_or_default())
        .filter_map(|e| {
            Some((
                e["name"].as_str()?.to_owned(),
                e["value"].as_str()?.to_owned(),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_managers_environment_is_read() {
        let yaml = "apiVersion: v1\nkind: Namespace\n---\nkind: Deployment\nspec:\n  template:\n    \
                    spec:\n      containers:\n      - name: manager\n        env:\n        - name: \
                    MEMCACHED_IMAGE\n          value: memcached:1.6\n        - name: \
                    WATCH_NAMESPACE\n          valueFrom: {}\n";
        let env = manager_env(yaml);
        assert_eq!(env.len(), 1);
        assert_eq!(env["MEMCACHED_IMAGE"], "memcached:1.6");
    }
}
