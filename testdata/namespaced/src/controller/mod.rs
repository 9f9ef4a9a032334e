//! The controllers of this operator: one module per kind, each implementing
//! `rbuilder_runtime::Reconciler`. Listing a module's `CONTROLLER` in [`CONTROLLERS`] makes the
//! manager run it and `make manifests` grant its RBAC rules.

use rbuilder_runtime::Registration;

pub mod config_map;
pub mod guestbook;
pub mod memcached;
// +rbuilder:scaffold:controller-modules

/// Every controller the manager runs, in start order.
pub const CONTROLLERS: &[Registration] = &[
    guestbook::CONTROLLER,
    memcached::CONTROLLER,
    config_map::CONTROLLER,
    // +rbuilder:scaffold:controllers
];
