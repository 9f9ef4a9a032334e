// Copyright 2026 Acme Robotics, Inc.
//
// Proprietary and confidential. Do not distribute without written permission
// from Acme Robotics, Inc.

//! Version `v1` of the `cache.example.com` API group: one module per kind.

pub mod site;
// +rbuilder:scaffold:kind-modules

// Each kind's types, re-exported so that code can say `v1::Kind`.
pub use site::*;
// +rbuilder:scaffold:kind-exports
