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

//! The admission and conversion webhooks of this operator (`rbuilder create webhook`): one
//! module per version, one file per kind. Listing a webhook in [`WEBHOOKS`] makes the manager
//! serve it and `make manifests` write its configuration. With none, nothing listens.

use rbuilder_runtime::Webhook;

pub mod v1;
// +rbuilder:scaffold:webhook-modules

/// Every webhook the manager serves.
pub const WEBHOOKS: &[Webhook] = &[
    v1::inventory::DEFAULTING,
    v1::inventory::VALIDATING,
    // +rbuilder:scaffold:webhooks
];
