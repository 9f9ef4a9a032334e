// Copyright 2026 Acme Robotics, Inc.
//
// Proprietary and confidential. Do not distribute without written permission
// from Acme Robotics, Inc.

//! The admission and conversion webhooks of this operator (`rbuilder create webhook`): one
//! module per version, one file per kind. Listing a webhook in [`WEBHOOKS`] makes the manager
//! serve it and `make manifests` write its configuration. With none, nothing listens.

use rbuilder_runtime::Webhook;

// +rbuilder:scaffold:webhook-modules

/// Every webhook the manager serves.
pub const WEBHOOKS: &[Webhook] = &[
    // +rbuilder:scaffold:webhooks
];
