//! The scaffolding engine: templates render into a Plan of file operations, markers say
//! where later commands add code, and the Plan is applied (or only described) in one place.

mod additions;
pub mod context;
mod lifted;
pub mod lockfile;
pub mod markers;
pub mod owned;
pub mod paths;
mod plan;
pub mod record;
pub mod rust_layout;
mod templates;

pub use additions::{Additions, Entry, IfExists, Order};
pub use context::{context_with_header, project_context};
pub use plan::Plan;
pub use templates::Templates;
