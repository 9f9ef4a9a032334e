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

//! The controllers of this operator: one module per kind, each implementing
//! `rbuilder_runtime::Reconciler`. Listing a module's `CONTROLLER` in [`CONTROLLERS`] makes the
//! manager run it and `make manifests` grant its RBAC rules.

use rbuilder_runtime::Registration;

pub mod inventory;
pub mod memcached;
pub mod order;
// +rbuilder:scaffold:controller-modules

/// Every controller the manager runs, in start order.
pub const CONTROLLERS: &[Registration] = &[
    order::CONTROLLER,
    memcached::CONTROLLER,
    inventory::CONTROLLER,
    // +rbuilder:scaffold:controllers
];
