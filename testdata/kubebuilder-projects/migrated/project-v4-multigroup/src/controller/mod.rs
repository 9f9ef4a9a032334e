// Copyright 2026 The Kubernetes authors.
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

//! The controllers of this operator: one module per API group, with one per controller there,
//! each implementing `rbuilder_runtime::Reconciler`. Listing a module's `CONTROLLER` in
//! [`CONTROLLERS`] makes the manager run it and `make manifests` grant its RBAC rules.

use rbuilder_runtime::Registration;

pub mod apps;
pub mod cert_manager;
pub mod crew;
pub mod example_com;
pub mod fiz;
pub mod foo;
pub mod foo_policy;
pub mod sea_creatures;
pub mod ship;
// +rbuilder:scaffold:controller-modules

/// Every controller the manager runs, in start order.
pub const CONTROLLERS: &[Registration] = &[
    crew::captain::CONTROLLER,
    ship::frigate::CONTROLLER,
    ship::destroyer::CONTROLLER,
    ship::cruiser::CONTROLLER,
    sea_creatures::kraken::CONTROLLER,
    sea_creatures::leviathan::CONTROLLER,
    foo_policy::health_check_policy::CONTROLLER,
    apps::deployment::CONTROLLER,
    foo::bar::CONTROLLER,
    fiz::bar::CONTROLLER,
    cert_manager::certificate::CONTROLLER,
    sea_creatures::prawn::CONTROLLER,
    example_com::memcached::CONTROLLER,
    example_com::busybox::CONTROLLER,
    example_com::wordpress::CONTROLLER,
    crew::captain_backup::CONTROLLER,
    // +rbuilder:scaffold:controllers
];
