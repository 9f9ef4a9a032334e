// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The end-to-end tests of the `devops.example.com` API group:
//! one module per kind.

mod demo_micro_service;
// +rbuilder:scaffold:e2e-kinds
