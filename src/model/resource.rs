//! A resource to scaffold: its group, version and kind, and everything derived from them
//! that templates and file paths need. It is derived from what PROJECT records (`Record`) in
//! one place, [`Resource::of`], whether the record comes from `create api`'s flags or from a
//! PROJECT being replayed; templates only read it.

use anyhow::{Result, bail};
use serde::Serialize;

use super::deploy_image::IMAGE_RULE;
use super::image::ImageReference;
use super::layout::{Controller, GroupLayout};
use super::names::{ControllerName, Group, Kind, Plural, ShortName, Version};
use super::rust_names::RustModule;
use crate::external::External;
use crate::external::own::{ApiShape, OwnTypes};
use crate::project::{DeployImageOptions, Record};
use crate::scaffold::paths::CRD_BASES;

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
    },
}

impl Flavor {
    /// The template family (a file name under `templates/controller/`, `api/`, ...): a type
    /// this project does not define gets a controller as a built-in type does.
    pub fn templates(&self) -> &'static str {
        match self {
            Flavor::Plain => "plain",
            Flavor::DeployImage(_) => "deploy_image",
            Flavor::Builtin { .. } | Flavor::External { .. } => "builtin",
        }
    }
}

/// What `--image` and its companion flags say.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeployImage {
    pub image: String,
    /// The image by another name, which the e2e test changes `spec.image` to
    /// (`ImageReference::renamed_for_e2e`).
    pub updated_image: String,
    pub port: Option<u16>,
    pub command: Vec<String>,
    pub run_as_user: Option<i64>,
    /// The API of a deploy-image kind migrated from kubebuilder, whose controller runs the
    /// image of the manager's environment; `None`: rbuilder's (`spec.image`, `spec.replicas`,
    /// `spec.port`).
    pub kubebuilder: Option<KubebuilderApi>,
}

/// kubebuilder's deploy-image API: the image from the manager's environment variable
/// `<KIND>_IMAGE` (set in config/manager/manager.yaml), the replicas from `spec.size`, the
/// container's port from `spec.containerPort`, if the kind has one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KubebuilderApi {
    /// `MEMCACHED_IMAGE`.
    pub image_env: String,
    /// The replicas, an `Option<i32>`, as Rust: `obj.spec.size`.
    pub replicas: String,
    /// The port, an `Option<i32>`, as Rust: `Some(obj.spec.container_port)`; `None` without a
    /// port.
    pub port: Option<String>,
}

impl KubebuilderApi {
    /// The deploy-image API of `kind` whose spec is `shape`'s, if it is kubebuilder's: an
    /// int32 `size`, and an int32 `containerPort` if the kind runs its image with a port.
    pub fn of(kind: &Kind, shape: &ApiShape, port: bool) -> Option<Self> {
        let field = |wire: &str| {
            let f = shape.spec_field(wire).filter(|f| f.ty == "i32")?;
            Some(match f.optional {
                true => format!("obj.spec.{}", f.ident),
                false => format!("Some(obj.spec.{})", f.ident),
            })
        };
        Some(Self {
            image_env: format!("{}_IMAGE", kind.as_str().to_uppercase()),
            replicas: field("size")?,
            port: match port {
                true => Some(field("containerPort")?),
                false => None,
            },
        })
    }
}

/// A kind whose types are made from its CRD (migrated from kubebuilder), as the templates
/// need to know it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FromCrd {
    /// The CRD file, in the project.
    pub path: String,
    /// What its status holds that the controllers set: `None` without a status.
    pub status: Option<StatusShape>,
}

/// What the status of a kind made from its CRD holds, of what rbuilder's controllers set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusShape {
    /// `conditions`, a list of `metav1::Condition`.
    pub conditions: bool,
    /// `observedGeneration`, an `Option<i64>`.
    pub observed_generation: bool,
    /// Other fields, which a status made by a controller leaves at their defaults.
    pub others: bool,
    /// A controller can make the status: it has conditions, and its other fields have defaults.
    pub settable: bool,
}

impl StatusShape {
    fn of(shape: &ApiShape) -> Option<Self> {
        let status = shape.status.as_ref()?;
        let conditions = shape
            .status_field("conditions")
            .is_some_and(|f| f.ty == "Vec<metav1::Condition>");
        let observed_generation = shape
            .status_field("observedGeneration")
            .is_some_and(|f| f.ty == "i64" && f.optional);
        let known = usize::from(conditions) + usize::from(observed_generation);
        let others = status.len() > known;
        Some(Self {
            conditions,
            observed_generation,
            others,
            settable: conditions && (!others || shape.status_default),
        })
    }
}

impl DeployImage {
    /// The templates' view of the recorded options: the command split into its arguments, and
    /// the image the e2e test updates to.
    fn of(options: &DeployImageOptions) -> Result<Self> {
        let Some(reference) = ImageReference::parse(&options.image) else {
            bail!("invalid image '{}': {IMAGE_RULE}", options.image);
        };
        let command = match &options.container_command {
            Some(command) => command.split(',').map(|s| s.trim().to_owned()).collect(),
            None => Vec::new(),
        };
        Ok(Self {
            image: options.image.clone(),
            updated_image: reference.renamed_for_e2e(),
            port: options.container_port,
            command,
            run_as_user: options.run_as_user,
            kubebuilder: None,
        })
    }
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
    /// How its integration tests get a control plane, `Environment::<envtest_start>`: in a
    /// namespace of their own on the one the test binary's tests share ("shared"); for a kind
    /// of the cluster, whose objects no namespace keeps apart, one of their own ("start").
    pub envtest_start: &'static str,
    pub short_names: Vec<ShortName>,
    pub controller: bool,
    /// The Rust module holding the kind's type and its controller: `demo_micro_service`.
    pub module: RustModule,
    /// Where the version's module lives: `api::v1`, or `api::devops::v1` in a multigroup
    /// project. Empty for built-in types.
    pub api_module_path: String,
    pub flavor: Flavor,
    /// The kind's types are made from its CRD (migrated from kubebuilder); `None`: rbuilder
    /// scaffolds them.
    pub from_crd: Option<FromCrd>,
    /// Where its controllers, webhooks and tests go (`group_dir`, `group_dir_up` for
    /// templates), and how they are named.
    #[serde(flatten)]
    pub layout: GroupLayout,
    /// The kind's own controller's name, its `Reconciler::NAME` (the `controller` label of its
    /// metrics, its logs): `site`, or in a multigroup project `web-apps-site`, as
    /// kubebuilder names them (`Named(...)`), unique in the manager.
    pub controller_name: String,
    /// How the kind's admin, editor and viewer roles are named: `site-admin-role`, or in a
    /// multigroup project `web-apps-site-admin-role`, as kubebuilder names them (a
    /// RoleBinding made for a kubebuilder project keeps working).
    pub role_name_prefix: String,
    /// Their files: `config/rbac/site_admin_role.yaml`, multigroup
    /// `config/rbac/web-apps_site_admin_role.yaml`.
    pub role_file_prefix: String,
}

impl Resource {
    /// The resource `record` describes, in a project that is `multigroup` or not. An external
    /// resource's scope and CRD name are its CRD's (`crd`, read and translated by the caller):
    /// PROJECT does not record them; nor the API of a kind whose types are made from its CRD
    /// (`own`, likewise).
    pub fn of(
        record: &Record,
        multigroup: bool,
        crd: Option<&External>,
        own: Option<&OwnTypes>,
    ) -> Result<Self> {
        let entry = &record.entry;
        let (group, version, kind) = (&entry.group, &entry.version, &entry.kind);
        let mut plural = entry.plural_or_derived()?;
        let (namespaced, api_module_path, flavor) = if entry.external {
            let Some(crd) = crd else {
                bail!(
                    "the types of {group}/{version} {kind} come from its CRD ({}), which was \
                     not read",
                    entry.path.as_deref().unwrap_or("no path in PROJECT")
                );
            };
            let api_module_path = format!("api::external::{}::{version}", group.module()?);
            let flavor = Flavor::External {
                rust_module: format!("crate::{api_module_path}"),
                crd_name: crd.crd_name.clone(),
                path: entry.path.clone().unwrap_or_default(),
            };
            (crd.namespaced, api_module_path, flavor)
        } else if entry.is_builtin() {
            let Some(b) = entry.builtin() else {
                bail!(
                    "{}/{version} {kind} is not a Kubernetes built-in type that rbuilder knows, \
                     and it has no API in this project",
                    group.display_name()
                );
            };
            let flavor = Flavor::Builtin {
                rust_module: format!("k8s_openapi::api::{}::{}", b.module, b.version),
            };
            // Kubernetes' own, whatever PROJECT says.
            plural = Plural::parse(b.plural)?;
            (b.namespaced, String::new(), flavor)
        } else {
            let api_module_path = if multigroup {
                format!("api::{}::{version}", group.module()?)
            } else {
                format!("api::{version}")
            };
            let mut flavor = match &record.deploy_image {
                Some(options) => Flavor::DeployImage(DeployImage::of(options)?),
                None => Flavor::Plain,
            };
            if entry.types_from_crd() {
                let Some(own) = own else {
                    bail!(
                        "the types of {group}/{version} {kind} come from its CRD ({}), which was \
                         not read",
                        entry.path.as_deref().unwrap_or_default()
                    );
                };
                if let Flavor::DeployImage(image) = &mut flavor {
                    let port = image.port.is_some();
                    let Some(api) = KubebuilderApi::of(kind, &own.shape, port) else {
                        bail!(
                            "{group}/{version} {kind} runs an image, but its CRD has no int32 \
                             spec.size{}, which its controller reads",
                            if port { " and spec.containerPort" } else { "" }
                        );
                    };
                    image.kubebuilder = Some(api);
                }
            }
            (entry.namespaced(), api_module_path, flavor)
        };
        let from_crd = match (entry.types_from_crd(), own) {
            (true, Some(own)) => Some(FromCrd {
                path: entry.path.clone().unwrap_or_default(),
                status: StatusShape::of(&own.shape),
            }),
            _ => None,
        };
        let layout = GroupLayout::of(multigroup, group)?;
        let kind_name = kind.lower();
        Ok(Self {
            group: group.clone(),
            version: version.clone(),
            kind: kind.clone(),
            plural,
            api_group: entry.api_group(),
            namespaced,
            envtest_start: if namespaced { "shared" } else { "start" },
            short_names: entry.short_names.clone(),
            controller: entry.controller,
            module: kind.module(),
            api_module_path,
            flavor,
            from_crd,
            controller_name: Controller::own(&layout, kind).name,
            role_name_prefix: layout.name(&kind_name),
            role_file_prefix: layout.file_name(&kind_name),
            layout,
        })
    }

    /// The name of the kind's second controller `name` (`captain-backup`): as given, or in a
    /// multigroup project after the group (`crew-captain-backup`), as kubebuilder names it.
    pub fn second_controller_name(&self, name: &ControllerName) -> String {
        Controller::second(&self.layout, &self.kind, name).name
    }

    /// The template family of the resource `record` describes, as `Resource::of` derives it,
    /// without reading an external resource's CRD.
    pub fn templates_of(record: &Record) -> &'static str {
        if record.entry.is_builtin() {
            "builtin"
        } else if record.deploy_image.is_some() {
            "deploy_image"
        } else {
            "plain"
        }
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

    fn dir(&self, base: &str) -> String {
        self.layout.dir(base)
    }

    fn module_path(&self, module: &str) -> String {
        self.layout.module_path(module)
    }

    /// The group's module files in a multigroup project (`src/controller/web_apps/mod.rs`,
    /// ...), under `base`: `None` in a single-group project.
    pub fn group_dir_mod_file(&self, base: &str) -> Option<String> {
        self.layout.mod_file(base)
    }

    /// The kind's controller: `src/controller/demo_micro_service.rs`, multigroup
    /// `src/controller/devops/demo_micro_service.rs`.
    pub fn controller_file(&self) -> String {
        Controller::own(&self.layout, &self.kind).file
    }

    /// The controller's unit tests: `src/controller/demo_micro_service/tests.rs`.
    pub fn controller_tests_file(&self) -> String {
        format!(
            "{}/{}/tests.rs",
            self.dir("src/controller"),
            self.module.file
        )
    }

    /// The controller's module under `crate::controller`: `demo_micro_service`, multigroup
    /// `devops::demo_micro_service`.
    pub fn controller_module(&self) -> String {
        self.module_path(&self.module.ident)
    }

    /// A second controller of the kind (`--controller-name captain-backup`):
    /// `src/controller/captain_backup.rs`, multigroup `src/controller/crew/captain_backup.rs`.
    pub fn second_controller_file(&self, name: &ControllerName) -> String {
        Controller::second(&self.layout, &self.kind, name).file
    }

    /// Its unit tests: `src/controller/captain_backup/tests.rs`.
    pub fn second_controller_tests_file(&self, name: &ControllerName) -> String {
        let dir = self.dir("src/controller");
        format!("{dir}/{}/tests.rs", name.module().file)
    }

    /// Its module under `crate::controller`: `captain_backup`, multigroup
    /// `crew::captain_backup`.
    pub fn second_controller_module(&self, name: &ControllerName) -> String {
        self.module_path(&name.module().ident)
    }

    /// Its integration tests: `tests/integration/captain_backup.rs`.
    pub fn second_controller_integration_file(&self, name: &ControllerName) -> String {
        let dir = self.dir("tests/integration");
        format!("{dir}/{}.rs", name.module().file)
    }

    /// The kind's end-to-end tests: `tests/e2e/demo_micro_service.rs`.
    pub fn e2e_file(&self) -> String {
        format!("{}/{}.rs", self.dir("tests/e2e"), self.module.file)
    }

    /// The controller's integration tests: `tests/integration/demo_micro_service.rs`.
    pub fn integration_file(&self) -> String {
        format!("{}/{}.rs", self.dir("tests/integration"), self.module.file)
    }

    /// The integration tests of the version's admission webhooks:
    /// `tests/integration/demo_micro_service_v1_webhooks.rs`.
    pub fn webhooks_test_file(&self) -> String {
        format!(
            "{}/{}_{}_webhooks.rs",
            self.dir("tests/integration"),
            self.module.file,
            self.version
        )
    }

    /// The integration tests of the conversion of `spoke`:
    /// `tests/integration/guestbook_v1beta1_conversion.rs`.
    pub fn conversion_test_file(&self, spoke: &Version) -> String {
        format!(
            "{}/{}_{spoke}_conversion.rs",
            self.dir("tests/integration"),
            self.module.file
        )
    }

    /// The folder of `version`'s webhooks: `src/webhook/v1`, multigroup
    /// `src/webhook/devops/v1`.
    pub fn webhook_dir(&self, version: &Version) -> String {
        format!("{}/{version}", self.dir("src/webhook"))
    }

    /// The module of `version`'s webhooks under `crate::webhook`: `v1`, multigroup
    /// `devops::v1`.
    pub fn webhook_module(&self, version: &Version) -> String {
        self.module_path(version.as_ref())
    }

    /// The CRD, as `make manifests` names it: `config/crd/bases/devops.my.domain_demomicroservices.yaml`.
    pub fn crd_file(&self) -> String {
        format!("{CRD_BASES}/{}_{}.yaml", self.api_group, self.plural)
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
    /// `config/rbac/demomicroservice_admin_role.yaml`, multigroup
    /// `config/rbac/devops_demomicroservice_admin_role.yaml`.
    pub fn role_file(&self, role: &str) -> String {
        format!("config/rbac/{}_{role}_role.yaml", self.role_file_prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::builtin;
    use crate::project::{ApiEntry, ResourceEntry};

    fn custom(kind: &str) -> ResourceEntry {
        ResourceEntry {
            api: Some(ApiEntry {
                crd_version: "v1".into(),
                namespaced: false,
            }),
            controller: true,
            controllers: Vec::new(),
            core: false,
            domain: "my.domain".into(),
            external: false,
            group: Group::parse("web-apps").unwrap(),
            kind: Kind::parse(kind).unwrap(),
            path: None,
            plural: None,
            short_names: vec![],
            version: Version::parse("v1beta1").unwrap(),
            webhooks: None,
        }
    }

    #[test]
    fn a_custom_resource_is_derived_from_its_record() {
        let record = Record {
            entry: custom("Policy"),
            deploy_image: None,
        };
        let r = Resource::of(&record, true, None, None).unwrap();
        assert_eq!(r.api_group, "web-apps.my.domain");
        assert_eq!(r.plural.as_ref(), "policies");
        assert_eq!(r.api_module_path, "api::web_apps::v1beta1");
        assert!(!r.namespaced);
        assert_eq!(r.flavor, Flavor::Plain);
        let single = Resource::of(&record, false, None, None).unwrap();
        assert_eq!(single.api_module_path, "api::v1beta1");
        assert_eq!(Resource::templates_of(&record), r.flavor.templates());
    }

    #[test]
    fn deploy_image_options_become_what_templates_read() {
        let record = Record {
            entry: custom("Memcached"),
            deploy_image: Some(DeployImageOptions {
                image: "memcached:1.6".into(),
                container_command: Some("memcached,-m=64,-v".into()),
                container_port: Some(11211),
                run_as_user: Some(1001),
            }),
        };
        let r = Resource::of(&record, false, None, None).unwrap();
        let Flavor::DeployImage(d) = &r.flavor else {
            panic!("{:?}", r.flavor)
        };
        assert_eq!(d.command, ["memcached", "-m=64", "-v"]);
        assert_eq!(d.updated_image, "docker.io/library/memcached:1.6");
        assert_eq!(Resource::templates_of(&record), "deploy_image");

        let mut broken = record.clone();
        if let Some(options) = &mut broken.deploy_image {
            options.image = "Not An Image".into();
        }
        let err = Resource::of(&broken, false, None, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("invalid image 'Not An Image'"), "{err}");
    }

    #[test]
    fn a_builtin_type_takes_kubernetes_names_and_an_external_one_needs_its_crd() {
        let b = builtin::find("apps", "v1", "Deployment").unwrap();
        let record = Record {
            entry: ResourceEntry {
                plural: None,
                ..ResourceEntry::of_builtin(&b, true).unwrap()
            },
            deploy_image: None,
        };
        let r = Resource::of(&record, true, None, None).unwrap();
        assert_eq!(r.plural.as_ref(), "deployments");
        assert_eq!(r.api_group, "apps");
        assert!(!r.has_crd());

        let entry = ResourceEntry::of_external(
            "cert-manager.io",
            Version::parse("v1").unwrap(),
            Kind::parse("Certificate").unwrap(),
            Plural::parse("certificates").unwrap(),
            "crds/certificates.yaml".into(),
            true,
        )
        .unwrap();
        let record = Record {
            entry,
            deploy_image: None,
        };
        let err = Resource::of(&record, false, None, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("crds/certificates.yaml"), "{err}");
        assert_eq!(Resource::templates_of(&record), "builtin");
    }
}
