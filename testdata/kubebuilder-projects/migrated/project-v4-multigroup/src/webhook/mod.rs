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

//! The admission and conversion webhooks of this operator (`rbuilder create webhook`): one
//! module per API group, then per version, one file per kind. Listing a webhook in
//! [`WEBHOOKS`] makes the manager serve it and `make manifests` write its configuration. With
//! none, nothing listens.

use rbuilder_runtime::Webhook;

pub mod apps;
pub mod cert_manager;
pub mod core;
pub mod crew;
pub mod example_com;
pub mod ship;
// +rbuilder:scaffold:webhook-modules

/// Every webhook the manager serves.
pub const WEBHOOKS: &[Webhook] = &[
    crew::v1::captain::DEFAULTING,
    crew::v1::captain::VALIDATING,
    ship::v1::destroyer::DEFAULTING,
    ship::v2alpha1::cruiser::VALIDATING,
    apps::v1::deployment::DEFAULTING,
    apps::v1::deployment::VALIDATING,
    cert_manager::v1::issuer::DEFAULTING,
    example_com::v1alpha1::memcached::VALIDATING,
    example_com::v2::wordpress_conversion::CONVERSION,
    core::v1::pod::VALIDATING,
    // +rbuilder:scaffold:webhooks
];
