//! The generated project's files that more than one module of rbuilder writes or reads, each
//! named here once: a file moved in the templates is then moved in one place in the code. A
//! path used by one module only stays a constant of that module.

/// The manager's role, which the `manifests` binary writes: the runtime's constant
/// (`runtime/src/role.rs`, compiled into rbuilder too).
pub use crate::manifests::role::ROLE_FILE as ROLE;

/// The project's package manifest.
pub const CARGO_TOML: &str = "Cargo.toml";
/// What the name of the package of the project's `manifests` binary (manifests/) adds to the
/// project's name: the templates (as `manifests_package`) and the tested lock both name it.
pub const MANIFESTS_PACKAGE_SUFFIX: &str = "-manifests";

/// The package of the `manifests` binary of project `project_name`.
pub fn manifests_package(project_name: &str) -> String {
    format!("{project_name}{MANIFESTS_PACKAGE_SUFFIX}")
}
/// The crate versions the project builds with (`--locked`).
pub const CARGO_LOCK: &str = "Cargo.lock";
/// The user's description of the operator (`OPERATOR`: controllers, CRDs, webhooks, scope).
pub const LIB: &str = "src/lib.rs";
/// The folder of the CRDs the `manifests` binary writes, one file per kind.
pub const CRD_BASES: &str = "config/crd/bases";
/// The kustomization listing the CRDs (and, with a conversion webhook, its configurations).
pub const CRD_KUSTOMIZATION: &str = "config/crd/kustomization.yaml";
/// The kustomization everything is deployed from (`make deploy`).
pub const DEFAULT_KUSTOMIZATION: &str = "config/default/kustomization.yaml";
/// The manager's Deployment.
pub const MANAGER: &str = "config/manager/manager.yaml";
/// The patch that gives the manager's Deployment the webhook server's port and certificate.
pub const MANAGER_WEBHOOK_PATCH: &str = "config/default/manager_webhook_patch.yaml";
/// The integration tests' crate root, which lists their modules.
pub const INTEGRATION_TESTS: &str = "tests/integration/main.rs";
