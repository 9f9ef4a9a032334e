//! The test support of an rbuilder project, for its dev-dependencies:
//!
//! - [`testing`]: a mocked API server for unit tests (a reconcile's requests, answered as the
//!   test scripts them), and a [`Context`](rbuilder_runtime_core::Context) around it;
//! - [`envtest`]: a real API server (kube-apiserver and etcd) for integration tests, with the
//!   operator's CRDs, webhooks and role installed and its controllers run as the manager runs
//!   them;
//! - [`e2e`]: the harness of the end-to-end tests, against the cluster of the kubeconfig;
//!
//! with what both harnesses check and how they wait for it (`checks`), which each re-exports.
//! The project reaches them through `rbuilder_runtime::{testing, envtest, e2e}` (the feature
//! `testing` of `rbuilder-runtime`); the manager never links this crate.
//!
//! rbuilder owns this crate: `rbuilder update` rewrites it for the rbuilder that runs it.

mod checks;
pub mod e2e;
pub mod envtest;
pub mod testing;
