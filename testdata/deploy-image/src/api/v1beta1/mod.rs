// Copyright 2026 Acme Robotics, Inc.
//
// Proprietary and confidential. Do not distribute without written permission
// from Acme Robotics, Inc.

//! Version `v1beta1` of the `cache.example.com` API group: one module per kind.

pub mod worker;
// +rbuilder:scaffold:kind-modules

// Each kind's types, re-exported so that code can say `v1beta1::Kind`.
pub use worker::*;
// +rbuilder:scaffold:kind-exports
