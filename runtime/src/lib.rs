//! The operator runtime of an rbuilder project: everything that is the same in every operator,
//! so that the project's own files hold only what is specific to it.
//!
//! - [`manager`]: the binary's `main` — flags, logging, the probe and metrics servers, leader
//!   election, starting the controllers and stopping them on SIGTERM.
//! - [`controller`]: the [`Reconciler`] trait a controller implements, and the driver that runs
//!   it (finalizer, metrics, failure Events, retries with a backoff).
//! - [`Context`]: what every reconcile gets besides its object (client, Events, namespace).
//! - [`conditions`], [`rbac`], [`crd`]: helpers for status conditions, RBAC rules and CRDs.
//! - [`webhook`]: the [`Defaulter`] and [`Validator`] traits of admission webhooks, conversion
//!   between versions, and the HTTPS server the manager runs them in.
//! - [`manifests`]: the `manifests` binary, which writes the CRDs and the role from the code.
//! - [`helm`]: `manifests helm` (`make helm`), the Helm chart's templates made from what
//!   `config/default` renders.
//! - `testing`, `envtest` and `e2e` (feature `testing`): a mocked API server for unit tests, a
//!   real API server for integration tests, and the harness of the end-to-end tests.
//!
//! rbuilder owns this crate: `rbuilder update` rewrites it for the rbuilder that runs it.

#[cfg(feature = "testing")]
mod checks;
mod client_metrics;
pub mod conditions;
pub mod context;
pub mod controller;
pub mod conversion;
pub mod crd;
#[cfg(feature = "testing")]
pub mod e2e;
#[cfg(feature = "testing")]
pub mod envtest;
mod errors;
mod events;
pub mod helm;
mod leader_election;
pub mod manager;
pub mod manifests;
mod metrics;
mod metrics_auth;
mod process_metrics;
pub mod rbac;
mod serve;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod tls;
pub mod webhook;

pub use context::Context;
pub use controller::{Reconciler, Registration, register};
pub use errors::error_chain;
pub use events::{Event, EventType};
pub use webhook::{Defaulter, Denied, Validator, Warnings, Webhook};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::core::crd::MergeError;

/// An operator, as the project describes itself to the runtime (in its `src/lib.rs`).
pub struct Operator {
    /// The project's name. The runtime derives from it the name the operator gives itself to
    /// the API server (`<name>-operator`: field manager, Event reporter, `managed-by` label) and
    /// its leader-election Lease (`<name>-leader-election`).
    pub name: &'static str,
    /// The project's version, printed by `--version`.
    pub version: &'static str,
    /// Every controller the manager runs, in start order.
    pub controllers: &'static [Registration],
    /// Every admission and conversion webhook the manager serves (none: no webhook server).
    pub webhooks: &'static [Webhook],
    /// The CustomResourceDefinitions of the project's own kinds, one per kind.
    pub crds: fn() -> Result<Vec<CustomResourceDefinition>, MergeError>,
    /// What the operator watches and is granted: the whole cluster, or one namespace.
    pub scope: WatchScope,
}

/// Where an operator works.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchScope {
    /// All namespaces: the manager's role is a ClusterRole.
    Cluster,
    /// The namespace in `WATCH_NAMESPACE` only: the manager's role is a Role in that namespace
    /// (`rbuilder init --namespaced`).
    Namespace,
}

impl Operator {
    /// The name this operator uses towards the API server: the server-side apply field
    /// manager, the `reportingController` of its Events and the `app.kubernetes.io/managed-by`
    /// label of what it creates.
    pub fn field_manager(&self) -> String {
        format!("{}-operator", self.name)
    }
}
