//! What a resource adds to a project, declared as data (see `scaffold::Additions`): the files
//! it gets, each with its template, what happens if it exists and the lines that register it
//! before other files' markers; its CRD version, merged into the kind's CRD. The manager's
//! role is merged rather than written (see `rules`).

use super::super::group_dirs::{CONTROLLERS, E2E_TESTS, INTEGRATION_TESTS};
use crate::external::own::OwnTypes;
use crate::manifests::{crd, crd_of_own_version, crd_with_own_version, crd_with_version};
use crate::model::{ApiTypes, ControllerName, Flavor, Resource};
use crate::scaffold::{Additions, Entry, IfExists, Order, paths};

/// The files of a kind whose types are made from its CRD.
pub struct OwnFiles<'a> {
    pub types: &'a OwnTypes,
    /// The module of its types, under the license header.
    pub source: String,
    /// The sample written if the project has none (the kubebuilder project's is kept).
    pub sample: String,
}

/// Where the modules of the project's API are listed, and its CRDs.
const API_MOD: &str = "src/api/mod.rs";
/// Where the controllers are registered (and, in a single-group project, declared).
const CONTROLLER_MOD: &str = "src/controller/mod.rs";
/// The e2e tests' harness, which lists each kind's test.
const E2E_MAIN: &str = "tests/e2e/main.rs";

/// The folder of an external resource's group under `src/api/external/`: `cert_manager`.
fn group_dir(r: &Resource) -> &str {
    r.api_module_path.split("::").nth(2).unwrap_or_default()
}

/// What `r` adds: its API (`adds_resource`: types, CRD version, roles of a kind's first
/// version, sample), or an external resource's types (their `source`), its controller and,
/// for a kind's first version, its integration test and (namespaced kinds) its e2e test. The
/// types of a kind made from its CRD are `own`.
pub fn of(
    r: &Resource,
    source: Option<&str>,
    own: Option<&OwnFiles>,
    adds_resource: bool,
    first_version: bool,
) -> Additions {
    // Files first, then inserts: the order `--dry-run` has always listed them in.
    let mut add = Additions::new(Order::FilesFirst);
    let flavor = r.flavor.templates();
    if r.has_crd() && adds_resource {
        let version_mod =
            Entry::template(r.version_mod_file(), "api/version_mod.rs", IfExists::Keep);
        let version_mod =
            match r.group_mod_file() {
                Some(group_mod) => {
                    add.add(
                        Entry::template(group_mod.clone(), "api/group_mod.rs", IfExists::Keep)
                            .insert(API_MOD, "api-modules", "inserts/api_mod_group.rs"),
                    );
                    version_mod.insert(group_mod, "versions", "inserts/group_mod_version.rs")
                }
                None => version_mod.insert(API_MOD, "api-modules", "inserts/api_mod_version.rs"),
            };
        add.add(version_mod);
        let types = match own {
            Some(own) => Entry::text(r.api_file(), own.source.clone(), IfExists::Refuse),
            None => Entry::template(r.api_file(), format!("api/{flavor}.rs"), IfExists::Refuse),
        };
        add.add(
            types
                .insert(
                    r.version_mod_file(),
                    "kind-modules",
                    "inserts/version_mod_kind.rs",
                )
                .insert(
                    r.version_mod_file(),
                    "kind-exports",
                    "inserts/version_mod_export.rs",
                )
                .insert(API_MOD, "crds", "inserts/api_mod_crd.rs"),
        );
        // The CRD as `make manifests` writes it: this version joins the kind's CRD.
        if let Some(own) = own {
            add.add(
                Entry::merged(
                    r.crd_file(),
                    crd_of_own_version(r, own.types),
                    crd_with_own_version,
                )
                .insert(
                    paths::CRD_KUSTOMIZATION,
                    "crdkustomizeresource",
                    "inserts/crd_kustomization.yaml",
                ),
            );
        } else if let Some(types) = ApiTypes::of(r) {
            add.add(
                Entry::merged(r.crd_file(), crd(r, &types), crd_with_version).insert(
                    paths::CRD_KUSTOMIZATION,
                    "crdkustomizeresource",
                    "inserts/crd_kustomization.yaml",
                ),
            );
        }
        // Roles for users of the kind, whatever its version.
        if first_version {
            for role in ["admin", "editor", "viewer"] {
                let template = format!("rbac/{role}_role.yaml");
                let entry = Entry::template(r.role_file(role), template, IfExists::Refuse);
                // One insert lists the three.
                add.add(match role {
                    "admin" => entry.insert(
                        "config/rbac/kustomization.yaml",
                        "rbac-roles",
                        "inserts/rbac_kustomization.yaml",
                    ),
                    _ => entry,
                });
            }
        }
        // A kind made from its CRD keeps the sample of the project it comes from, which is
        // valid for its API; one without gets a sample made from the schema.
        let sample = match own {
            Some(own) => Entry::text(r.sample_file(), own.sample.clone(), IfExists::Keep),
            None => Entry::template(
                r.sample_file(),
                format!("samples/{flavor}.yaml"),
                IfExists::Refuse,
            ),
        };
        add.add(sample.insert(
            "config/samples/kustomization.yaml",
            "manifestskustomizesamples",
            "inserts/samples_kustomization.yaml",
        ));
    }
    if let Some(source) = source {
        external_types(&mut add, r, source);
    }
    if r.controller {
        // kubebuilder's deploy-image API has tests of its own: its image is the manager's.
        let variant = match &r.flavor {
            Flavor::DeployImage(image) if image.kubebuilder.is_some() => "deploy_image_kubebuilder",
            _ => flavor,
        };
        CONTROLLERS.add_group_module(&mut add, r);
        let controller = Entry::template(
            r.controller_file(),
            format!("controller/{flavor}.rs"),
            IfExists::Refuse,
        )
        .with("controller_module", &r.controller_module())
        .insert(
            CONTROLLERS.listing(r),
            CONTROLLERS.marker(),
            "inserts/controller_mod.rs",
        )
        .insert(
            CONTROLLER_MOD,
            "controllers",
            "inserts/controller_registry.rs",
        );
        add.add(match variant {
            // The manager's environment names the image, as kubebuilder's does.
            "deploy_image_kubebuilder" => controller.insert(
                paths::MANAGER,
                "manager-env",
                "inserts/manager_env_image.yaml",
            ),
            _ => controller,
        });
        let tests = format!("controller/{variant}_tests.rs");

        add.add(Entry::template(
            r.controller_tests_file(),
            tests,
            IfExists::Refuse,
        ));
        // The e2e harness starts the manager in a namespace of the test's own.
        if r.has_crd() && r.namespaced && first_version {
            add.add(Entry::template(E2E_MAIN, "e2e/main.rs", IfExists::Keep));
            E2E_TESTS.add_group_module(&mut add, r);
            add.add(
                Entry::template(r.e2e_file(), format!("e2e/{variant}.rs"), IfExists::Refuse)
                    .insert(
                        E2E_TESTS.listing(r),
                        E2E_TESTS.marker(),
                        "inserts/e2e_kind.rs",
                    ),
            );
        }
        // The integration tests run the controller against a real API server (envtest).
        if r.has_crd() && first_version {
            let main = paths::INTEGRATION_TESTS;
            add.add(Entry::template(main, "integration/main.rs", IfExists::Keep));
            INTEGRATION_TESTS.add_group_module(&mut add, r);
            let test = format!("integration/{variant}.rs");
            add.add(
                Entry::template(r.integration_file(), test, IfExists::Refuse)
                    .with("controller_module", &r.controller_module())
                    .insert(
                        INTEGRATION_TESTS.listing(r),
                        INTEGRATION_TESTS.marker(),
                        "inserts/integration_kind.rs",
                    ),
            );
        }
    }
    add
}

/// What the second controller `name` of `r`'s kind adds: its file and unit tests, its
/// registration and, for one of the project's own kinds, its integration test.
pub fn of_second_controller(r: &Resource, name: &ControllerName) -> Additions {
    let mut add = Additions::new(Order::FilesFirst);
    CONTROLLERS.add_group_module(&mut add, r);
    let file = r.second_controller_file(name);
    add.add(
        Entry::template(file, "controller/named.rs", IfExists::Refuse)
            .with("controller_module", &r.second_controller_module(name))
            .insert(
                CONTROLLERS.listing(r),
                CONTROLLERS.marker(),
                "inserts/named_controller_mod.rs",
            )
            .insert(
                CONTROLLER_MOD,
                "controllers",
                "inserts/named_controller_registry.rs",
            ),
    );
    let tests = r.second_controller_tests_file(name);
    add.add(
        Entry::template(tests, "controller/named_tests.rs", IfExists::Refuse)
            .with("own_controller_module", &r.controller_module()),
    );
    if r.has_crd() {
        let main = paths::INTEGRATION_TESTS;
        add.add(Entry::template(main, "integration/main.rs", IfExists::Keep));
        INTEGRATION_TESTS.add_group_module(&mut add, r);
        let test = r.second_controller_integration_file(name);
        add.add(
            Entry::template(test, "integration/named.rs", IfExists::Refuse)
                .with("controller_module", &r.second_controller_module(name))
                .insert(
                    INTEGRATION_TESTS.listing(r),
                    INTEGRATION_TESTS.marker(),
                    "inserts/named_integration.rs",
                ),
        );
    }
    add
}

/// An external resource's types, in `src/api/external/<group>/<version>/<kind>.rs`, and
/// the modules that lead there.
fn external_types(add: &mut Additions, r: &Resource, source: &str) {
    let external = "src/api/external/mod.rs";
    add.add(
        Entry::template(external, "api/external_mod.rs", IfExists::Keep).insert(
            API_MOD,
            "api-modules",
            "inserts/api_mod_external.rs",
        ),
    );
    let group_mod = format!("src/api/external/{}/mod.rs", self::group_dir(r));
    add.add(
        Entry::template(group_mod.clone(), "api/group_mod.rs", IfExists::Keep).insert(
            external,
            "api-modules",
            "inserts/api_mod_group.rs",
        ),
    );
    add.add(
        Entry::template(r.version_mod_file(), "api/version_mod.rs", IfExists::Keep).insert(
            group_mod,
            "versions",
            "inserts/group_mod_version.rs",
        ),
    );
    add.add(
        Entry::text(r.api_file(), source.to_owned(), IfExists::Refuse)
            .insert(
                r.version_mod_file(),
                "kind-modules",
                "inserts/version_mod_kind.rs",
            )
            .insert(
                r.version_mod_file(),
                "kind-exports",
                "inserts/version_mod_export.rs",
            ),
    );
}
