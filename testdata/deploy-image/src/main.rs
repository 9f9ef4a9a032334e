// Copyright 2026 Acme Robotics, Inc.
//
// Proprietary and confidential. Do not distribute without written permission
// from Acme Robotics, Inc.

//! The manager of the `deploy-image` operator: runs its controllers (`--help` lists the
//! flags), and the parts of your own that you add to it below. Everything else it does is the
//! runtime's: see `rbuilder_runtime::manager`.

use std::process::ExitCode;

use rbuilder_runtime::manager::Manager;

#[tokio::main]
async fn main() -> ExitCode {
    Manager::new(&deploy_image::OPERATOR)
        // Parts of your own go here, before `run` ("Extending the manager" in README.md): a
        // `Runnable` (an extra server, a periodic task) runs beside the controllers and stops
        // with them,
        //     .add_runnable(Runnable::new("cleanup", cleanup::run))
        // and metrics of your own are served on /metrics with the runtime's:
        //     .register_metrics(|registry| registry.register("name", "help", METRIC.clone()))
        .run()
        .await
}
