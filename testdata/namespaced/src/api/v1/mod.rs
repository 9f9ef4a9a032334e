//! Version `v1` of the `devops.my.domain` API group: one module per kind.

pub mod guestbook;
// +rbuilder:scaffold:kind-modules

// Each kind's types, re-exported so that code can say `v1::Kind`.
pub use guestbook::*;
// +rbuilder:scaffold:kind-exports
