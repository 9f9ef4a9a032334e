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
//!   (`role` and `admission`, hidden here, are plain data that rbuilder compiles too, to write
//!   the same role and webhook configurations when it scaffolds.)
//! - [`webhook`]: the [`Defaulter`] and [`Validator`] traits of admission webhooks, conversion
//!   between versions, and the HTTPS server the manager runs them in.
//!
//! Projects name this crate through `rbuilder-runtime`, which re-exports it, with the build-time
//! tools of `rbuilder-manifests` (its feature `manifests`) and the test support of
//! `rbuilder-testing` (its feature `testing`) beside it. `harness`, hidden, is what the test
//! support reaches inside this crate.
//!
//! rbuilder owns this crate: `rbuilder update` rewrites it for the rbuilder that runs it.

#[doc(hidden)]
pub mod admission;
pub mod applied;
pub mod cache;
mod client_metrics;
mod client_timeout;
pub mod conditions;
pub mod context;
pub mod controller;
pub mod conversion;
pub mod crd;
#[doc(hidden)]
pub mod derived;
mod echoes;
mod errors;
mod events;
#[doc(hidden)]
pub mod harness;
mod leader_election;
pub mod manager;
mod metrics;
mod metrics_auth;
pub mod namespaces;
mod operator;
pub mod owned;
pub mod pod_security;
mod process_metrics;
mod queue_metrics;
mod rate_limit;
pub mod rbac;
#[doc(hidden)]
pub mod role;
mod runnable;
mod scope;
mod serve;
mod shared_watches;
mod state;
mod stores;
mod tls;
pub mod webhook;
mod work_queue;

// The runtime's own tests use its test support (the crate rbuilder-testing, runtime/testing)
// from inside: its envtests run crate-private parts (the driver's failure counts, the leader
// election, the manager's servers) against a real API server, which a test outside the crate
// cannot reach. So the test build compiles the test support's sources as modules of this
// crate, at the paths they have there, where `rbuilder_runtime_core` names this crate itself.
// No other build sees them; what a test does not use of them is not dead code to warn about.
#[cfg(test)]
extern crate self as rbuilder_runtime_core;
#[cfg(test)]
#[allow(dead_code, unused_imports)]
#[path = "../../testing/src/checks.rs"]
mod checks;
#[cfg(test)]
#[allow(dead_code, unused_imports)]
#[path = "../../testing/src/e2e.rs"]
mod e2e;
#[cfg(test)]
#[allow(dead_code, unused_imports)]
#[path = "../../testing/src/envtest/mod.rs"]
mod envtest;
#[cfg(test)]
#[allow(dead_code, unused_imports)]
#[path = "../../testing/src/testing.rs"]
mod testing;

pub use cache::Cache;
pub use context::Context;
pub use controller::{Reconciler, Registration, register, register_with_state};
pub use errors::error_chain;
pub use events::{Event, EventType};
pub use operator::{Operator, Parts, WatchScope};
pub use owned::Owns;
pub use webhook::{Defaulter, Denied, Validator, Warnings, Webhook};

/// The command-line parser the manager's flags are made with: derive `clap::Args` with it for
/// flags of your own ([`Flags::parse_with`](manager::Flags::parse_with)), with `use
/// rbuilder_runtime::clap::{self, Args};`, rather than with a dependency of your own, so that
/// both always agree on its version.
pub use clap;

/// The Prometheus client the runtime's metrics are made with: make yours with it too, and
/// register them with [`Manager::register_metrics`](manager::Manager::register_metrics). Your
/// code uses this one rather than a dependency of its own, so that both always agree on the
/// version, which `rbuilder update` may move.
pub use prometheus_client;
