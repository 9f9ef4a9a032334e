// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The admission and conversion webhooks of this operator (`rbuilder create webhook`): one
//! module per API group, then per version, one file per kind. Listing a webhook in
//! [`WEBHOOKS`] makes the manager serve it and `make manifests` write its configuration. With
//! none, nothing listens.

use rbuilder_runtime::Webhook;

pub mod devops;
pub mod web_apps;
// +rbuilder:scaffold:webhook-modules

/// Every webhook the manager serves.
pub const WEBHOOKS: &[Webhook] = &[
    devops::v1::demo_micro_service::DEFAULTING,
    devops::v1::demo_micro_service::VALIDATING,
    web_apps::v1beta1::site::VALIDATING,
    // +rbuilder:scaffold:webhooks
];
