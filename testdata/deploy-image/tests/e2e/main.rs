// Copyright 2026 Acme Robotics, Inc.
//
// Proprietary and confidential. Do not distribute without written permission
// from Acme Robotics, Inc.

//! End-to-end tests: the manager against the cluster of the current kubeconfig context, one
//! module per kind. The harness (`rbuilder_testing::e2e`) installs the CRDs, gives each test a
//! namespace of its own, starts the manager built by cargo, and cleans up after the test.
//!
//! The tests are `#[ignore]`d so that `cargo test` needs no cluster. `make test-e2e` runs them
//! one at a time, as they share the CRDs: `cargo test --test e2e -- --ignored --nocapture
//! --test-threads=1`. Any cluster will do, e.g. `kind create cluster`; no image is built.
//! `E2E_NAMESPACE=<namespace>` runs them in an existing namespace instead.

use rbuilder_testing::e2e::Project;

/// This project, for the harness.
const PROJECT: Project = Project {
    root: env!("CARGO_MANIFEST_DIR"),
    manager: env!("CARGO_BIN_EXE_deploy-image"),
    package: env!("CARGO_PKG_NAME"),
    tmp: env!("CARGO_TARGET_TMPDIR"),
};

// One module per kind, in tests/e2e/<kind>.rs.
mod memcached;
mod site;
mod worker;
// +rbuilder:scaffold:e2e-kinds
