//! The webhooks of the kinds of version v1.

pub mod config_map;
// +rbuilder:scaffold:kind-modules
