//! What a resource adds to a project, declared as data: the files it gets (each with its
//! template and what happens if it exists) and the lines it inserts before markers. The CRD
//! and the manager's role are merged rather than written (see `manifests` and `rules`).

use anyhow::Result;

use crate::manifests::crd_with_version;
use crate::model::{ControllerName, Resource};
use crate::scaffold::{Plan, Templates, markers, paths};

/// What to do when a file a resource gets already exists.
#[derive(Clone, Copy, PartialEq, Eq)]
enum IfExists {
    /// Refuse (it is this resource's own file), unless --force rewrites it.
    Refuse,
    /// Keep it (a module file that the kinds of a version or group share).
    Keep,
}

/// A file written from a template.
struct NewFile {
    path: String,
    template: String,
    if_exists: IfExists,
}

/// Lines inserted before a marker comment.
struct Insert {
    file: String,
    marker: &'static str,
    template: &'static str,
}

/// Everything a resource adds, in the order it is planned: files first, so that an insert can
/// go into a file created by the same command.
#[derive(Default)]
pub struct Additions {
    files: Vec<NewFile>,
    inserts: Vec<Insert>,
    /// The CRD gets this resource's version.
    crd: bool,
    /// Files whose text is not from a template (path, text): an external resource's types.
    generated: Vec<(String, String)>,
}

/// The folder of an external resource's group under `src/api/external/`: `cert_manager`.
fn group_dir(r: &Resource) -> &str {
    r.api_module_path.split("::").nth(2).unwrap_or_default()
}

impl Additions {
    fn file(&mut self, path: String, template: impl Into<String>, if_exists: IfExists) {
        let template = template.into();
        self.files.push(NewFile {
            path,
            template,
            if_exists,
        });
    }

    fn insert(&mut self, file: impl Into<String>, marker: &'static str, template: &'static str) {
        let file = file.into();
        self.inserts.push(Insert {
            file,
            marker,
            template,
        });
    }

    /// What `r` adds: its API (`adds_resource`: types, CRD version, roles of a kind's first
    /// version, sample), or an external resource's types (their `source`), its controller and,
    /// for a kind's first version, its integration test and (namespaced kinds) its e2e test.
    pub fn of(
        r: &Resource,
        source: Option<&str>,
        adds_resource: bool,
        first_version: bool,
    ) -> Self {
        let mut add = Self::default();
        let flavor = r.flavor.templates();
        if r.has_crd() && adds_resource {
            match r.group_mod_file() {
                Some(group_mod) => {
                    add.insert("src/api/mod.rs", "api-modules", "inserts/api_mod_group.rs");
                    add.file(group_mod.clone(), "api/group_mod.rs", IfExists::Keep);
                    add.insert(group_mod, "versions", "inserts/group_mod_version.rs");
                }
                None => add.insert(
                    "src/api/mod.rs",
                    "api-modules",
                    "inserts/api_mod_version.rs",
                ),
            }
            add.file(r.version_mod_file(), "api/version_mod.rs", IfExists::Keep);
            add.insert(
                r.version_mod_file(),
                "kind-modules",
                "inserts/version_mod_kind.rs",
            );
            add.insert(
                r.version_mod_file(),
                "kind-exports",
                "inserts/version_mod_export.rs",
            );
            add.file(r.api_file(), format!("api/{flavor}.rs"), IfExists::Refuse);
            add.insert("src/api/mod.rs", "crds", "inserts/api_mod_crd.rs");
            add.crd = true;
            add.insert(
                paths::CRD_KUSTOMIZATION,
                "crdkustomizeresource",
                "inserts/crd_kustomization.yaml",
            );
            // Roles for users of the kind, whatever its version.
            if first_version {
                for role in ["admin", "editor", "viewer"] {
                    let template = format!("rbac/{role}_role.yaml");
                    add.file(r.role_file(role), template, IfExists::Refuse);
                }
                add.insert(
                    "config/rbac/kustomization.yaml",
                    "rbac-roles",
                    "inserts/rbac_kustomization.yaml",
                );
            }
            add.file(
                r.sample_file(),
                format!("samples/{flavor}.yaml"),
                IfExists::Refuse,
            );
            add.insert(
                "config/samples/kustomization.yaml",
                "manifestskustomizesamples",
                "inserts/samples_kustomization.yaml",
            );
        }
        if let Some(source) = source {
            add.external_types(r, source);
        }
        if r.controller {
            add.file(
                r.controller_file(),
                format!("controller/{flavor}.rs"),
                IfExists::Refuse,
            );
            let tests = format!("controller/{flavor}_tests.rs");
            add.file(r.controller_tests_file(), tests, IfExists::Refuse);
            add.insert(
                "src/controller/mod.rs",
                "controller-modules",
                "inserts/controller_mod.rs",
            );
            add.insert(
                "src/controller/mod.rs",
                "controllers",
                "inserts/controller_registry.rs",
            );
            // The e2e harness starts the manager in a namespace of the test's own.
            if r.has_crd() && r.namespaced && first_version {
                add.file("tests/e2e/main.rs".into(), "e2e/main.rs", IfExists::Keep);
                add.file(r.e2e_file(), format!("e2e/{flavor}.rs"), IfExists::Refuse);
                add.insert("tests/e2e/main.rs", "e2e-kinds", "inserts/e2e_kind.rs");
            }
            // The integration tests run the controller against a real API server (envtest).
            if r.has_crd() && first_version {
                let main = paths::INTEGRATION_TESTS;
                add.file(main.into(), "integration/main.rs", IfExists::Keep);
                let test = format!("integration/{flavor}.rs");
                add.file(r.integration_file(), test, IfExists::Refuse);
                add.insert(main, "integration-tests", "inserts/integration_kind.rs");
            }
        }
        add
    }

    /// What the second controller `name` of `r`'s kind adds: its file and unit tests, its
    /// registration and, for one of the project's own kinds, its integration test.
    pub fn of_second_controller(r: &Resource, name: &ControllerName) -> Self {
        let mut add = Self::default();
        let file = Resource::second_controller_file(name);
        add.file(file, "controller/named.rs", IfExists::Refuse);
        let tests = Resource::second_controller_tests_file(name);
        add.file(tests, "controller/named_tests.rs", IfExists::Refuse);
        add.insert(
            "src/controller/mod.rs",
            "controller-modules",
            "inserts/named_controller_mod.rs",
        );
        add.insert(
            "src/controller/mod.rs",
            "controllers",
            "inserts/named_controller_registry.rs",
        );
        if r.has_crd() {
            let main = paths::INTEGRATION_TESTS;
            add.file(main.into(), "integration/main.rs", IfExists::Keep);
            let test = Resource::second_controller_integration_file(name);
            add.file(test, "integration/named.rs", IfExists::Refuse);
            add.insert(main, "integration-tests", "inserts/named_integration.rs");
        }
        add
    }

    /// An external resource's types, in `src/api/external/<group>/<version>/<kind>.rs`, and
    /// the modules that lead there.
    fn external_types(&mut self, r: &Resource, source: &str) {
        self.insert(
            "src/api/mod.rs",
            "api-modules",
            "inserts/api_mod_external.rs",
        );
        let external = "src/api/external/mod.rs";
        self.file(external.into(), "api/external_mod.rs", IfExists::Keep);
        self.insert(external, "api-modules", "inserts/api_mod_group.rs");
        let group_mod = format!("src/api/external/{}/mod.rs", self::group_dir(r));
        self.file(group_mod.clone(), "api/group_mod.rs", IfExists::Keep);
        self.insert(group_mod, "versions", "inserts/group_mod_version.rs");
        self.file(r.version_mod_file(), "api/version_mod.rs", IfExists::Keep);
        self.insert(
            r.version_mod_file(),
            "kind-modules",
            "inserts/version_mod_kind.rs",
        );
        self.insert(
            r.version_mod_file(),
            "kind-exports",
            "inserts/version_mod_export.rs",
        );
        self.generated.push((r.api_file(), source.to_owned()));
    }

    /// Adds all of it to `plan`, rendering with `ctx`; `force` rewrites the resource's own files.
    pub fn plan(
        &self,
        plan: &mut Plan,
        templates: &Templates,
        ctx: &tera::Context,
        r: &Resource,
        force: bool,
    ) -> Result<()> {
        for file in &self.files {
            let exists = plan.exists(&file.path);
            match (file.if_exists, exists) {
                (IfExists::Keep, true) => continue,
                (IfExists::Refuse, _) if force => {
                    plan.overwrite(file.path.clone(), templates.render(&file.template, ctx)?)?
                }
                _ => plan.create(file.path.clone(), templates.render(&file.template, ctx)?)?,
            }
        }
        for (path, text) in &self.generated {
            if force && plan.exists(path) {
                plan.overwrite(path.clone(), text.clone())?;
            } else {
                plan.create(path.clone(), text.clone())?;
            }
        }
        if self.crd {
            // The CRD as `make manifests` writes it: this version joins the kind's CRD.
            let crd_file = r.crd_file();
            let existing = plan.read(&crd_file)?;
            let rendered = templates.render(&format!("crd/{}.yaml", r.flavor.templates()), ctx)?;
            let crd = crd_with_version(existing.as_deref(), &rendered, &crd_file)?;
            match existing {
                Some(_) => plan.update(crd_file, |_| Ok(crd))?,
                None => plan.create(crd_file, crd)?,
            }
        }
        for insert in &self.inserts {
            let text = templates.render(insert.template, ctx)?;
            let lines: Vec<String> = text.lines().map(str::to_owned).collect();
            let file = &insert.file;
            plan.update(file.clone(), |content| {
                markers::insert(content, file, insert.marker, &lines)
            })?;
        }
        Ok(())
    }
}
