// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The controllers of the `devops.example.com` API group:
//! one module per controller.

pub mod demo_micro_service;
pub mod dms_backup;
// +rbuilder:scaffold:controller-modules
