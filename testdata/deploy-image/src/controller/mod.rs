// Copyright 2026 Acme Robotics, Inc.
//
// Proprietary and confidential. Do not distribute without written permission
// from Acme Robotics, Inc.

//! The controllers of this operator: one module per kind, each implementing
//! `rbuilder_runtime::Reconciler`. Listing a module's `CONTROLLER` in [`CONTROLLERS`] makes the
//! manager run it and `make manifests` grant its RBAC rules.

use rbuilder_runtime::Registration;

pub mod memcached;
pub mod site;
pub mod worker;
// +rbuilder:scaffold:controller-modules

/// Every controller the manager runs, in start order.
pub const CONTROLLERS: &[Registration] = &[
    memcached::CONTROLLER,
    worker::CONTROLLER,
    site::CONTROLLER,
    // +rbuilder:scaffold:controllers
];
