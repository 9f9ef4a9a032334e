//! A resource to scaffold: its group, version and kind, and everything derived from them
//! that templates and file paths need. Built once from validated names; templates only read it.

use serde::Serialize;

use super::builtin::Builtin;
use super::names::{Group, Kind, Plural, RustModule, ShortName, Version};

/// Which reconciler template a resource gets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "name", rename_all = "kebab-case")]
pub enum Flavor {
    /// A custom resource with an example field and a reconciler that keeps a Ready condition.
    Plain,
    /// A custom resource whose `spec.image` the reconciler runs as a Deployment.
    DeployImage(DeployImage),
    /// A controller for a Kubernetes built-in type: no CRD.
    Builtin {
        /// `k8s_openapi::api::apps::v1`
        rust_module: String,
    },
}

/// What `--image` and its companion flags say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeployImage {
    pub image: String,
    /// Another tag of the image, which the e2e test changes `spec.image` to.
    pub updated_image: String,
    pub port: Option<u16>,
    pub command: Vec<String>,
    pub run_as_user: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Resource {
    pub group: Group,
    pub version: Version,
    pub kind: Kind,
    pub plural: Plural,
    /// The full API group: `devops.my.domain`, or `apps` / `""` for built-in types.
    pub api_group: String,
    pub namespaced: bool,
    pub short_names: Vec<ShortName>,
    pub controller: bool,
    /// The Rust module holding the kind's type and its controller: `demo_micro_service`.
    pub module: RustModule,
    /// Where the version's module lives: `api::v1`, or `api::devops::v1` in a multigroup
    /// project. Empty for built-in types.
    pub api_module_path: String,
    pub flavor: Flavor,
}

impl Resource {
    /// A custom resource of this project.
    #[allow(clippy::too_many_arguments)]
    pub fn custom(
        group: Group,
        version: Version,
        kind: Kind,
        plural: Plural,
        domain: &str,
        namespaced: bool,
        short_names: Vec<ShortName>,
        controller: bool,
        multigroup: bool,
        flavor: Flavor,
    ) -> Self {
        let api_module_path = if multigroup {
            format!("api::{}::{}", group.as_ref().replace('-', "_"), version)
        } else {
            format!("api::{version}")
        };
        Self {
            api_group: format!("{group}.{domain}"),
            module: kind.module(),
            group,
            version,
            kind,
            plural,
            namespaced,
            short_names,
            controller,
            api_module_path,
            flavor,
        }
    }

    /// A Kubernetes built-in type, reconciled by this project's controller.
    pub fn builtin(b: Builtin, group: Group, version: Version, kind: Kind) -> anyhow::Result<Self> {
        Ok(Self {
            api_group: b.api_group.to_owned(),
            module: kind.module(),
            plural: Plural::parse(b.plural)?,
            group,
            version,
            kind,
            namespaced: b.namespaced,
            short_names: Vec::new(),
            controller: true,
            api_module_path: String::new(),
            flavor: Flavor::Builtin {
                rust_module: format!("k8s_openapi::api::{}::{}", b.module, b.version),
            },
        })
    }

    /// Whether this is the resource `group/version kind` (as PROJECT spells them).
    pub fn is(&self, group: &str, version: &str, kind: &str) -> bool {
        self.group.as_ref() == group
            && self.version.as_ref() == version
            && self.kind.as_str() == kind
    }

    pub fn has_crd(&self) -> bool {
        !matches!(self.flavor, Flavor::Builtin { .. })
    }

    /// The folder of the version's module: `src/api/v1` or `src/api/devops/v1`.
    pub fn api_dir(&self) -> String {
        format!("src/{}", self.api_module_path.replace("::", "/"))
    }

    /// `group/version, Kind=Kind`, as Kubernetes prints a GVK.
    pub fn gvk(&self) -> String {
        format!("{}/{}, Kind={}", self.api_group, self.version, self.kind)
    }

    /// The CRD's name and file: `demomicroservices.devops.my.domain`.
    pub fn crd_file(&self) -> String {
        format!("config/crd/bases/{}_{}.yaml", self.api_group, self.plural)
    }

    /// kubebuilder's sample file name: `devops_v1_demomicroservice.yaml`.
    pub fn sample_file(&self) -> String {
        format!(
            "config/samples/{}_{}_{}.yaml",
            self.group,
            self.version,
            self.kind.lower()
        )
    }
}
