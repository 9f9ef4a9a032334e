// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! The end-to-end tests of the `web-apps.example.com` API group:
//! one module per kind.

mod site;
// +rbuilder:scaffold:e2e-kinds
