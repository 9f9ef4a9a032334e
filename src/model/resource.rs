//! A resource to scaffold: its group, version and kind, and everything derived from them
//! that templates and file paths need. Built once from validated names; templates only read it.

use serde::Serialize;

use super::builtin::Builtin;
use anyhow::Result;

use super::names::{Domain, Group, Kind, Plural, ShortName, Version};
use super::rust_names::RustModule;

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
    /// A controller for another project's custom resource, with its types generated from
    /// its CRD: no CRD of this project.
    External {
        /// `crate::api::external::cert_manager::v1`
        rust_module: String,
        /// `certificates.cert-manager.io`
        crd_name: String,
        /// The CRD file, as given.
        path: String,
        /// The types' Rust source.
        #[serde(skip)]
        source: String,
    },
}

/// What `create api --external-api-path` read from the CRD.
pub struct ExternalSpec {
    /// The CRD's group, in full: `cert-manager.io`.
    pub api_group: String,
    pub version: Version,
    pub kind: Kind,
    pub plural: Plural,
    pub namespaced: bool,
    pub controller: bool,
    pub crd_name: String,
    pub path: String,
    pub source: String,
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

/// What makes a custom resource of the project, beyond its names' own rules.
pub struct CustomSpec {
    pub group: Group,
    pub version: Version,
    pub kind: Kind,
    pub plural: Plural,
    pub namespaced: bool,
    pub short_names: Vec<ShortName>,
    pub controller: bool,
    pub flavor: Flavor,
}

impl Resource {
    /// A custom resource of a project for `domain`; `multigroup` puts its API module under its
    /// group's.
    pub fn custom(spec: CustomSpec, domain: &Domain, multigroup: bool) -> Result<Self> {
        let CustomSpec {
            group,
            version,
            kind,
            plural,
            namespaced,
            short_names,
            controller,
            flavor,
        } = spec;
        let api_module_path = if multigroup {
            format!("api::{}::{version}", group.module()?)
        } else {
            format!("api::{version}")
        };
        Ok(Self {
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
        })
    }

    /// A Kubernetes built-in type, reconciled by this project's controller.
    pub fn builtin(b: Builtin, group: Group, version: Version, kind: Kind) -> Result<Self> {
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

    /// Another project's custom resource: `group` is the first part of its API group.
    pub fn external(spec: ExternalSpec) -> Result<Self> {
        let ExternalSpec {
            api_group,
            version,
            kind,
            plural,
            namespaced,
            controller,
            crd_name,
            path,
            source,
        } = spec;
        let group = Group::parse(api_group.split('.').next().unwrap_or_default())?;
        let api_module_path = format!("api::external::{}::{version}", group.module()?);
        Ok(Self {
            api_group,
            module: kind.module(),
            plural,
            group,
            version,
            kind,
            namespaced,
            short_names: Vec::new(),
            controller,
            flavor: Flavor::External {
                rust_module: format!("crate::{api_module_path}"),
                crd_name,
                path,
                source,
            },
            api_module_path,
        })
    }

    /// The domain PROJECT records for an external resource: its API group after the first part.
    pub fn external_domain(&self) -> &str {
        self.api_group.split_once('.').map_or("", |(_, d)| d)
    }

    /// Whether this is the resource `group/version kind`.
    pub fn is(&self, group: &Group, version: &Version, kind: &Kind) -> bool {
        self.group == *group && self.version == *version && self.kind == *kind
    }

    pub fn has_crd(&self) -> bool {
        !matches!(
            self.flavor,
            Flavor::Builtin { .. } | Flavor::External { .. }
        )
    }

    /// `group/version, Kind=Kind`, as Kubernetes prints a GVK (`core/v1` for the core group).
    pub fn gvk(&self) -> String {
        let group = if self.api_group.is_empty() {
            "core"
        } else {
            &self.api_group
        };
        format!("{group}/{}, Kind={}", self.version, self.kind)
    }

    // ---- Where its files go: every path of a resource is built here, and only here. -------

    /// The folder of the version's module: `src/api/v1` or `src/api/devops/v1`.
    pub fn api_dir(&self) -> String {
        format!("src/{}", self.api_module_path.replace("::", "/"))
    }

    /// The group's module file in a multigroup project: `src/api/devops/mod.rs`.
    pub fn group_mod_file(&self) -> Option<String> {
        let parts: Vec<&str> = self.api_module_path.split("::").collect();
        (parts.len() == 3).then(|| format!("src/api/{}/mod.rs", parts[1]))
    }

    /// The version's module file: `src/api/v1/mod.rs`.
    pub fn version_mod_file(&self) -> String {
        format!("{}/mod.rs", self.api_dir())
    }

    /// The kind's types: `src/api/v1/demo_micro_service.rs`.
    pub fn api_file(&self) -> String {
        format!("{}/{}.rs", self.api_dir(), self.module.file)
    }

    /// The kind's controller: `src/controller/demo_micro_service.rs`.
    pub fn controller_file(&self) -> String {
        format!("src/controller/{}.rs", self.module.file)
    }

    /// The controller's unit tests: `src/controller/demo_micro_service/tests.rs`.
    pub fn controller_tests_file(&self) -> String {
        format!("src/controller/{}/tests.rs", self.module.file)
    }

    /// The kind's end-to-end tests: `tests/e2e/demo_micro_service.rs`.
    pub fn e2e_file(&self) -> String {
        format!("tests/e2e/{}.rs", self.module.file)
    }

    /// The controller's integration tests: `tests/integration/demo_micro_service.rs`.
    pub fn integration_file(&self) -> String {
        format!("tests/integration/{}.rs", self.module.file)
    }

    /// The integration tests of the version's admission webhooks:
    /// `tests/integration/demo_micro_service_v1_webhooks.rs`.
    pub fn webhooks_test_file(&self) -> String {
        format!(
            "tests/integration/{}_{}_webhooks.rs",
            self.module.file, self.version
        )
    }

    /// The integration tests of the conversion of `spoke`:
    /// `tests/integration/guestbook_v1beta1_conversion.rs`.
    pub fn conversion_test_file(&self, spoke: &Version) -> String {
        format!(
            "tests/integration/{}_{spoke}_conversion.rs",
            self.module.file
        )
    }

    /// The CRD, as `make manifests` names it: `config/crd/bases/devops.my.domain_demomicroservices.yaml`.
    pub fn crd_file(&self) -> String {
        format!("config/crd/bases/{}_{}.yaml", self.api_group, self.plural)
    }

    /// kubebuilder's sample file name: `config/samples/devops_v1_demomicroservice.yaml`.
    pub fn sample_file(&self) -> String {
        format!(
            "config/samples/{}_{}_{}.yaml",
            self.group,
            self.version,
            self.kind.lower()
        )
    }

    /// A role for users of the kind (`admin`, `editor`, `viewer`):
    /// `config/rbac/demomicroservice_admin_role.yaml`.
    pub fn role_file(&self, role: &str) -> String {
        format!("config/rbac/{}_{role}_role.yaml", self.kind.lower())
    }
}
