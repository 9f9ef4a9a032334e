// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The controllers of this operator: one module per API group, with one per controller there,
//! each implementing `rbuilder_runtime::Reconciler`. Listing a module's `CONTROLLER` in
//! [`CONTROLLERS`] makes the manager run it and `make manifests` grant its RBAC rules.

use rbuilder_runtime::Registration;

pub mod apps;
pub mod devops;
pub mod web_apps;
// +rbuilder:scaffold:controller-modules

/// Every controller the manager runs, in start order.
pub const CONTROLLERS: &[Registration] = &[
    devops::demo_micro_service::CONTROLLER,
    web_apps::site::CONTROLLER,
    apps::deployment::CONTROLLER,
    devops::dms_backup::CONTROLLER,
    apps::deployment_scaler::CONTROLLER,
    // +rbuilder:scaffold:controllers
];
