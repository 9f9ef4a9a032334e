// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The controllers of the `apps` API group:
//! one module per controller.

pub mod deployment;
pub mod deployment_scaler;
// +rbuilder:scaffold:controller-modules
