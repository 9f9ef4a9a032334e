//! Where the control plane's binaries are: found as controller-runtime's envtest finds them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::bail;

/// The folder envtest looks in when `KUBEBUILDER_ASSETS` is not set.
const DEFAULT_DIR: &str = "/usr/local/kubebuilder/bin";

/// The binaries of a control plane.
#[derive(Debug, Clone)]
pub(crate) struct Assets {
    pub(crate) etcd: PathBuf,
    pub(crate) kube_apiserver: PathBuf,
}

impl Assets {
    /// The binaries named by `TEST_ASSET_ETCD` and `TEST_ASSET_KUBE_APISERVER`, or found in the
    /// folder `KUBEBUILDER_ASSETS` names (else /usr/local/kubebuilder/bin). A missing binary is
    /// an error that says how to get it.
    pub(crate) fn find() -> anyhow::Result<Self> {
        // An empty variable counts as unset, as in envtest.
        Self::find_with(|variable| std::env::var_os(variable).filter(|value| !value.is_empty()))
    }

    /// [`find`](Self::find), with the environment variables `env` gives.
    fn find_with(env: impl Fn(&str) -> Option<OsString>) -> anyhow::Result<Self> {
        let dir = env("KUBEBUILDER_ASSETS").map(PathBuf::from);
        let find = |variable: &str, binary: &str| {
            let path = match env(variable) {
                Some(path) => PathBuf::from(path),
                None => dir
                    .as_deref()
                    .unwrap_or(Path::new(DEFAULT_DIR))
                    .join(binary),
            };
            path.is_file().then_some(path)
        };
        let mut missing = Vec::new();
        let mut find_or_note = |variable: &str, binary: &str| {
            let found = find(variable, binary);
            if found.is_none() {
                missing.push(match env(variable) {
                    // Named by its variable, which is what is wrong.
                    Some(path) => format!("{variable}={}", PathBuf::from(path).display()),
                    None => binary.to_owned(),
                });
            }
            found
        };
        let etcd = find_or_note("TEST_ASSET_ETCD", "etcd");
        let kube_apiserver = find_or_note("TEST_ASSET_KUBE_APISERVER", "kube-apiserver");
        match (etcd, kube_apiserver) {
            (Some(etcd), Some(kube_apiserver)) => Ok(Self {
                etcd,
                kube_apiserver,
            }),
            _ => {
                let looked = match &dir {
                    Some(dir) => format!("KUBEBUILDER_ASSETS={}", dir.display()),
                    None => format!("{DEFAULT_DIR} (KUBEBUILDER_ASSETS is not set)"),
                };
                bail!(
                    "the integration tests need kube-apiserver and etcd, and {} is missing (looked \
                     in {looked}): run `make test`, which downloads them into bin/ (`make \
                     setup-envtest`) and runs the tests with them, or set KUBEBUILDER_ASSETS \
                     to a folder that holds them",
                    missing.join(" and ")
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder holding `binaries` (empty files), deleted when dropped.
    struct Folder(PathBuf);

    impl Folder {
        fn with(name: &str, binaries: &[&str]) -> Self {
            let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("create folder");
            for binary in binaries {
                std::fs::write(dir.join(binary), "").expect("write binary");
            }
            Self(dir)
        }
    }

    impl Drop for Folder {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn the_binaries_are_found_in_kubebuilder_assets_or_where_named() {
        let assets = Folder::with("rbuilder-assets-found", &["etcd", "kube-apiserver"]);
        let named = Folder::with("rbuilder-assets-named", &["my-etcd"]);
        let env = |variable: &str| match variable {
            "KUBEBUILDER_ASSETS" => Some(assets.0.clone().into_os_string()),
            "TEST_ASSET_ETCD" => Some(named.0.join("my-etcd").into_os_string()),
            _ => None,
        };
        let found = Assets::find_with(env).expect("found");
        assert_eq!(found.kube_apiserver, assets.0.join("kube-apiserver"));
        assert_eq!(found.etcd, named.0.join("my-etcd"));
    }

    #[test]
    fn missing_binaries_say_how_to_get_them() {
        let assets = Folder::with("rbuilder-assets-missing", &["etcd"]);
        let env = |variable: &str| {
            (variable == "KUBEBUILDER_ASSETS").then(|| assets.0.clone().into_os_string())
        };
        let error = Assets::find_with(env).expect_err("kube-apiserver is missing");
        let message = error.to_string();
        assert!(
            message.contains(&assets.0.display().to_string()),
            "{message}"
        );
        assert!(message.contains("run `make test`"), "{message}");
        assert!(message.contains("set KUBEBUILDER_ASSETS"), "{message}");
    }

    #[test]
    fn a_binary_named_by_its_variable_is_blamed_by_it() {
        let assets = Folder::with("rbuilder-assets-blamed", &["etcd", "kube-apiserver"]);
        let env = |variable: &str| match variable {
            "KUBEBUILDER_ASSETS" => Some(assets.0.clone().into_os_string()),
            "TEST_ASSET_ETCD" => Some("/no/such/etcd".into()),
            _ => None,
        };
        let error = Assets::find_with(env).expect_err("etcd is missing");
        let message = error.to_string();
        assert!(
            message.contains("TEST_ASSET_ETCD=/no/such/etcd is missing"),
            "{message}"
        );
    }
}
