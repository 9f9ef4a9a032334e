// Copyright 2026 Acme Robotics, Inc.
//
// Proprietary and confidential. Do not distribute without written permission
// from Acme Robotics, Inc.

//! Version `v1alpha1` of the `cache.example.com` API group: one module per kind.

pub mod memcached;
// +rbuilder:scaffold:kind-modules

// Each kind's types, re-exported so that code can say `v1alpha1::Kind`.
pub use memcached::*;
// +rbuilder:scaffold:kind-exports
