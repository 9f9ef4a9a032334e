// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The controllers of this operator: one module per kind, each implementing
//! `rbuilder_runtime::Reconciler`. Listing a module's `CONTROLLER` in [`CONTROLLERS`] makes the
//! manager run it and `make manifests` grant its RBAC rules.

use rbuilder_runtime::Registration;

pub mod demo_micro_service;
pub mod deployment;
pub mod deployment_scaler;
pub mod dms_backup;
pub mod site;
// +rbuilder:scaffold:controller-modules

/// Every controller the manager runs, in start order.
pub const CONTROLLERS: &[Registration] = &[
    demo_micro_service::CONTROLLER,
    site::CONTROLLER,
    deployment::CONTROLLER,
    dms_backup::CONTROLLER,
    deployment_scaler::CONTROLLER,
    // +rbuilder:scaffold:controllers
];
