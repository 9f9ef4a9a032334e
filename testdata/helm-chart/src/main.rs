// Copyright 2026 The helm-chart Authors.
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

//! The manager of the `helm-chart` operator: runs its controllers (`--help` lists the
//! flags). Everything it does besides your controllers' logic is the runtime's: see
//! `rbuilder_runtime::manager`.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    rbuilder_runtime::manager::run(&helm_chart::OPERATOR).await
}
