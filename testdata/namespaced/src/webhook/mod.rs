//! The admission and conversion webhooks of this operator (`rbuilder create webhook`): one
//! module per version, one file per kind. Listing a webhook in [`WEBHOOKS`] makes the manager
//! serve it and `make manifests` write its configuration. With none, nothing listens.

use rbuilder_runtime::Webhook;

pub mod v1;
// +rbuilder:scaffold:webhook-modules

/// Every webhook the manager serves.
pub const WEBHOOKS: &[Webhook] = &[
    v1::guestbook::DEFAULTING,
    v1::pod::DEFAULTING,
    v1::pod::VALIDATING,
    // +rbuilder:scaffold:webhooks
];
