// Copyright 2026 Acme Robotics, Inc.
//
// Proprietary and confidential. Do not distribute without written permission
// from Acme Robotics, Inc.

//! The manager of the `deploy-image` operator: runs its controllers (`--help` lists the
//! flags). Everything it does besides your controllers' logic is the runtime's: see
//! `rbuilder_runtime::manager`.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    rbuilder_runtime::manager::run(&deploy_image::OPERATOR).await
}
