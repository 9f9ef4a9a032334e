// Copyright 2026 The multigroup Authors.
//
// SPDX-License-Identifier: MIT

//! Version `v1` of the `devops.example.com` API group: one module per kind.

pub mod demo_micro_service;
// +rbuilder:scaffold:kind-modules

// Each kind's types, re-exported so that code can say `v1::Kind`.
pub use demo_micro_service::*;
// +rbuilder:scaffold:kind-exports
