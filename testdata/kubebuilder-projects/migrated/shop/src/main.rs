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

//! The manager of the `shop` operator: runs its controllers (`--help` lists the
//! flags), and the parts of your own that you add to it below. Everything else it does is the
//! runtime's: see `rbuilder_runtime::manager`.

use std::process::ExitCode;

use rbuilder_runtime::manager::Manager;

#[tokio::main]
async fn main() -> ExitCode {
    Manager::new(&shop::OPERATOR)
        // Parts of your own go here, before `run` ("Extending the manager" in README.md): a
        // `Runnable` (an extra server, a periodic task) runs beside the controllers and stops
        // with them,
        //     .add_runnable(Runnable::new("cleanup", cleanup::run))
        // and metrics of your own are served on /metrics with the runtime's:
        //     .register_metrics(|registry| registry.register("name", "help", METRIC.clone()))
        .run()
        .await
}
