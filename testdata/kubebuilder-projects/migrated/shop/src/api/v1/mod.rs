// Copyright 2026.
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

//! Version `v1` of the `shop.example.com` API group: one module per kind.

pub mod inventory;
pub mod order;
// +rbuilder:scaffold:kind-modules

// Each kind's types, re-exported so that code can say `v1::Kind`.
pub use inventory::*;
pub use order::*;
// +rbuilder:scaffold:kind-exports
