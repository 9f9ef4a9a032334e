// Copyright 2026 The kind-names Authors.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! Version `v1` of the `devops.my.domain` API group: one module per kind.

pub mod action;
pub mod api;
pub mod certificate_authority;
pub mod condition;
pub mod context;
pub mod db;
pub mod deployment;
pub mod error;
pub mod r#match;
pub mod r#type;
// +rbuilder:scaffold:kind-modules

// Each kind's types, re-exported so that code can say `v1::Kind`.
pub use action::*;
pub use api::*;
pub use certificate_authority::*;
pub use condition::*;
pub use context::*;
pub use db::*;
pub use deployment::*;
pub use error::*;
pub use r#match::*;
pub use r#type::*;
// +rbuilder:scaffold:kind-exports
