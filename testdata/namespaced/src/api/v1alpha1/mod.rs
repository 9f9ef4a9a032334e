//! Version `v1alpha1` of the `devops.my.domain` API group: one module per kind.

pub mod memcached;
// +rbuilder:scaffold:kind-modules

// Each kind's types, re-exported so that code can say `v1alpha1::Kind`.
pub use memcached::*;
// +rbuilder:scaffold:kind-exports
