// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The manager of the `multigroup` operator: runs its controllers (`--help` lists the
//! flags). Everything it does besides your controllers' logic is the runtime's: see
//! `rbuilder_runtime::manager`.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    rbuilder_runtime::manager::run(&multigroup::OPERATOR).await
}
