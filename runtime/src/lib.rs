//! The operator runtime of an rbuilder project: everything that is the same in every operator,
//! so that the project's own files hold only what is specific to it.
//!
//! - [`manager`]: the binary's `main` — flags, logging, the probe and metrics servers, leader
//!   election, starting the controllers and stopping them on SIGTERM; and what a project adds
//!   to it: [`Runnable`](manager::Runnable)s (an extra server, a periodic task) and metrics of
//!   its own ([`Manager`](manager::Manager)).
//! - [`controller`]: the [`Reconciler`] trait a controller implements, and the driver that runs
//!   it (finalizer, metrics, failure Events, retries with a backoff).
//! - [`Context`]: what every reconcile gets besides its object (client, Events, namespace).
//! - [`owned`]: the objects a controller owns (a Deployment per custom resource):
//!   [`Context::owned`] applies them, adopts orphans, refuses others' objects, deletes them.
//! - [`conditions`], [`rbac`], [`crd`]: helpers for status conditions, RBAC rules and CRDs.
//! - [`webhook`]: the [`Defaulter`] and [`Validator`] traits of admission webhooks, conversion
//!   between versions, and the HTTPS server the manager runs them in.
//! - `manifests` and `helm` (feature `manifests`): the `manifests` binary, which writes the
//!   CRDs, the role and the webhook configurations from the code, and `manifests helm` (`make
//!   helm`), the Helm chart's templates made from what `config/default` renders. Build-time
//!   tools: the manager builds without them. Projects made now name the crate
//!   `rbuilder-manifests` in the binary's own package (`manifests/`) instead (the feature, on a
//!   binary of the project's package, made that package's build with it another build than the
//!   manager's); the feature stays for the projects made before.
//! - `testing`, `envtest` and `e2e` (feature `testing`): a mocked API server for unit tests, a
//!   real API server for integration tests, and the harness of the end-to-end tests. Projects
//!   made now name the crate `rbuilder-testing` as their dev-dependency instead (the feature
//!   would make the tests' build of this crate, and so of the project's, another one than the
//!   manager's); the feature stays for the projects made before.
//!
//! This crate holds no code: it gathers the crates that do (`core/`, what the manager links;
//! `manifests/`, the build-time tools; `testing/`, the test support), so that a project names
//! one crate and each part is compiled only where it is used. A feature adds a crate and
//! changes nothing of the core: the manager, the `manifests` binary and the tests share one
//! build of it.
//!
//! rbuilder owns this crate: `rbuilder update` rewrites it for the rbuilder that runs it.

#[doc(inline)]
pub use rbuilder_runtime_core::*;

/// The `manifests` binary's code: see [`manifests::main`].
#[cfg(feature = "manifests")]
pub use rbuilder_manifests as manifests;
#[cfg(feature = "manifests")]
pub use rbuilder_manifests::helm;
#[cfg(feature = "testing")]
pub use rbuilder_testing::{e2e, envtest, testing};
