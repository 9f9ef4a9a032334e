//! The webhooks of the kinds of version v1.

pub mod guestbook;
pub mod pod;
// +rbuilder:scaffold:kind-modules
