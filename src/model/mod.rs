//! The validated model: names that passed Kubernetes' and Rust's rules, and the resources
//! built from them. Nothing here touches the disk.

pub mod api_types;
mod article;
pub mod builtin;
pub(crate) mod conditions;
pub mod deploy_image;
mod image;
pub mod layout;
mod names;
mod plural;
mod resource;
pub(crate) mod rust_names;
pub mod webhook_path;

pub use api_types::ApiTypes;
pub use article::with_article;
pub use image::ImageReference;
pub use layout::GroupLayout;
pub use names::{ControllerName, Domain, Group, Kind, Plural, ProjectName, ShortName, Version};
pub use resource::{Flavor, KubebuilderApi, Resource};
