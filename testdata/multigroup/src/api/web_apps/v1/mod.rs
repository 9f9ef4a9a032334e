// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! Version `v1` of the `web-apps.example.com` API group: one module per kind.

pub mod site;
// +rbuilder:scaffold:kind-modules

// Each kind's types, re-exported so that code can say `v1::Kind`.
pub use site::*;
// +rbuilder:scaffold:kind-exports
