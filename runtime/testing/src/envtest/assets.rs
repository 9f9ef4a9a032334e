//! Where the control plane's binaries are: found as controller-runtime's envtest finds them
//! for a kubebuilder project's tests, including in the project's `bin/k8s/`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::bail;

/// The folder envtest looks in when nothing else names one.
const DEFAULT_DIR: &str = "/usr/local/kubebuilder/bin";

/// Where `make setup-envtest` puts the binaries in a project: one folder per release,
/// `<version>-<os>-<arch>`, as controller-runtime's setup-envtest lays them out.
const PROJECT_DIR: &str = "bin/k8s";

/// The binaries of a control plane.
#[derive(Debug, Clone)]
pub(crate) struct Assets {
    pub(crate) etcd: PathBuf,
    pub(crate) kube_apiserver: PathBuf,
}

impl Assets {
    /// The binaries named by `TEST_ASSET_ETCD` and `TEST_ASSET_KUBE_APISERVER`, or found in the
    /// folder `KUBEBUILDER_ASSETS` names, else in the project's `bin/k8s/` (what `make
    /// setup-envtest` downloads, so that a plain `cargo test`, or an editor's "run test", finds
    /// them as `make test` does), else in /usr/local/kubebuilder/bin. A missing binary is an
    /// error that says how to get it.
    pub(crate) fn find() -> anyhow::Result<Self> {
        // The project: cargo runs a test with the package's folder as its manifest folder (and
        // its working folder); a workspace member's tests find the workspace's bin/ too.
        let project = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok());
        // An empty variable counts as unset, as in envtest.
        Self::find_with(
            |variable| std::env::var_os(variable).filter(|value| !value.is_empty()),
            project.as_deref(),
        )
    }

    /// [`find`](Self::find), with the environment variables `env` gives and the project in
    /// `project` (or in one of its parents).
    fn find_with(
        env: impl Fn(&str) -> Option<OsString>,
        project: Option<&Path>,
    ) -> anyhow::Result<Self> {
        let (dir, looked) = match env("KUBEBUILDER_ASSETS").map(PathBuf::from) {
            Some(dir) => {
                let looked = format!("KUBEBUILDER_ASSETS={}", dir.display());
                (dir, looked)
            }
            None => {
                let releases = project.and_then(|project| {
                    project
                        .ancestors()
                        .map(|folder| folder.join(PROJECT_DIR))
                        .find(|folder| folder.is_dir())
                });
                let looked = match &releases {
                    Some(releases) => format!("{}/ and {DEFAULT_DIR}", releases.display()),
                    None => format!("{DEFAULT_DIR} (no {PROJECT_DIR}/ in the project)"),
                };
                let release = releases.as_deref().and_then(newest_release);
                (
                    release.unwrap_or_else(|| PathBuf::from(DEFAULT_DIR)),
                    looked,
                )
            }
        };
        let find = |variable: &str, binary: &str| {
            let path = match env(variable) {
                Some(path) => PathBuf::from(path),
                None => dir.join(binary),
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
                let missing = match missing.as_slice() {
                    [one] => format!("{one} was not found"),
                    _ => format!("neither {} was found", missing.join(" nor ")),
                };
                bail!(
                    "the integration tests need etcd and kube-apiserver, and {missing} (looked \
                     in {looked}): run `make setup-envtest` once, which downloads them into \
                     {PROJECT_DIR}/ where the tests find them (`make test` does it too), or set \
                     KUBEBUILDER_ASSETS to a folder that holds them"
                )
            }
        }
    }
}

/// In `releases` (a project's `bin/k8s`), the folder of the newest release for this machine's
/// OS and architecture that holds both binaries: after a change of `ENVTEST_K8S_VERSION` in
/// the Makefile, the release it downloaded, not the one before.
fn newest_release(releases: &Path) -> Option<PathBuf> {
    let platform = format!("-{}-{}", go_os(), go_arch());
    let entries = std::fs::read_dir(releases).ok()?;
    let mut found: Vec<(Vec<u64>, PathBuf)> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let version = name.strip_suffix(&platform)?;
            let path = entry.path();
            let complete = ["etcd", "kube-apiserver"]
                .iter()
                .all(|binary| path.join(binary).is_file());
            complete.then(|| (version_key(version), path))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, path)| path)
}

/// `1.37.0` as numbers, for ordering releases (`1.9.0` before `1.37.0`); a part that is no
/// number counts as 0.
fn version_key(version: &str) -> Vec<u64> {
    version
        .split('.')
        .map(|part| part.parse().unwrap_or(0))
        .collect()
}

/// The OS as Go (and so setup-envtest and the Makefile's `uname -s`) names it.
fn go_os() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        os => os,
    }
}

/// The architecture as Go names it.
fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        arch => arch,
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
        let found = Assets::find_with(env, None).expect("found");
        assert_eq!(found.kube_apiserver, assets.0.join("kube-apiserver"));
        assert_eq!(found.etcd, named.0.join("my-etcd"));
    }

    #[test]
    fn missing_binaries_say_how_to_get_them() {
        let assets = Folder::with("rbuilder-assets-missing", &["etcd"]);
        let env = |variable: &str| {
            (variable == "KUBEBUILDER_ASSETS").then(|| assets.0.clone().into_os_string())
        };
        let error = Assets::find_with(env, None).expect_err("kube-apiserver is missing");
        let message = error.to_string();
        let folder = assets.0.display();
        let expected = format!(
            "the integration tests need etcd and kube-apiserver, and kube-apiserver was not \
             found (looked in KUBEBUILDER_ASSETS={folder}): run `make setup-envtest` once, which \
             downloads them into bin/k8s/ where the tests find them (`make test` does it too), \
             or set KUBEBUILDER_ASSETS to a folder that holds them"
        );
        assert_eq!(message, expected);
    }

    #[test]
    fn a_binary_named_by_its_variable_is_blamed_by_it() {
        let assets = Folder::with("rbuilder-assets-blamed", &["etcd", "kube-apiserver"]);
        let env = |variable: &str| match variable {
            "KUBEBUILDER_ASSETS" => Some(assets.0.clone().into_os_string()),
            "TEST_ASSET_ETCD" => Some("/no/such/etcd".into()),
            _ => None,
        };
        let error = Assets::find_with(env, None).expect_err("etcd is missing");
        let message = error.to_string();
        assert!(
            message.contains("and TEST_ASSET_ETCD=/no/such/etcd was not found"),
            "{message}"
        );
    }

    #[test]
    fn both_missing_are_named_in_one_sentence() {
        let empty = Folder::with("rbuilder-assets-empty", &[]);
        let env = |variable: &str| {
            (variable == "KUBEBUILDER_ASSETS").then(|| empty.0.clone().into_os_string())
        };
        let error = Assets::find_with(env, None).expect_err("both are missing");
        let message = error.to_string();
        assert!(
            message.contains("and neither etcd nor kube-apiserver was found (looked in"),
            "{message}"
        );
    }

    /// A project where `make setup-envtest` downloaded two releases, and an unfinished third
    /// (the Makefile's `.partial` folder), in a workspace member's parent.
    #[test]
    fn without_kubebuilder_assets_the_newest_release_in_bin_k8s_is_found() {
        let project = Folder::with("rbuilder-assets-project", &[]);
        let platform = format!("{}-{}", go_os(), go_arch());
        for release in ["1.9.0", "1.37.0", "1.40.0"] {
            let folder = project.0.join(format!("bin/k8s/{release}-{platform}"));
            std::fs::create_dir_all(&folder).expect("create release folder");
            let binaries: &[&str] = match release {
                "1.40.0" => &["etcd"], // still downloading
                _ => &["etcd", "kube-apiserver"],
            };
            for binary in binaries {
                std::fs::write(folder.join(binary), "").expect("write binary");
            }
        }
        let member = project.0.join("member");
        let found = Assets::find_with(|_| None, Some(&member)).expect("found in bin/k8s");
        let release = project.0.join(format!("bin/k8s/1.37.0-{platform}"));
        assert_eq!(found.kube_apiserver, release.join("kube-apiserver"));
        assert_eq!(found.etcd, release.join("etcd"));

        // KUBEBUILDER_ASSETS still comes first.
        let assets = Folder::with("rbuilder-assets-first", &["etcd", "kube-apiserver"]);
        let env = |variable: &str| {
            (variable == "KUBEBUILDER_ASSETS").then(|| assets.0.clone().into_os_string())
        };
        let found = Assets::find_with(env, Some(&member)).expect("found");
        assert_eq!(found.etcd, assets.0.join("etcd"));
    }

    #[test]
    fn a_project_without_binaries_is_told_to_run_setup_envtest() {
        let project = Folder::with("rbuilder-assets-none", &[]);
        std::fs::create_dir_all(project.0.join("bin/k8s")).expect("create bin/k8s");
        let error = Assets::find_with(|_| None, Some(&project.0)).expect_err("nothing found");
        let message = error.to_string();
        let releases = project.0.join("bin/k8s").display().to_string();
        assert!(
            message.contains(&format!("(looked in {releases}/ and {DEFAULT_DIR})")),
            "{message}"
        );
        assert!(
            message.contains("run `make setup-envtest` once"),
            "{message}"
        );
    }
}
