// Copyright 2026.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

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
    manager: env!("CARGO_BIN_EXE_shop"),
    package: env!("CARGO_PKG_NAME"),
    tmp: env!("CARGO_TARGET_TMPDIR"),
};

// One module per kind, in tests/e2e/<kind>.rs.
mod memcached;
mod order;
// +rbuilder:scaffold:e2e-kinds
