// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The controllers of the `web-apps.example.com` API group:
//! one module per controller.

pub mod site;
// +rbuilder:scaffold:controller-modules
