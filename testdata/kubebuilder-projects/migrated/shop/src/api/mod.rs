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

//! The custom resource types served by this operator, one module per API version.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::core::crd::MergeError;

// Brings `crd()` into scope for the list in `crds()`, which is empty until the first
// `rbuilder create api`.
#[allow(unused_imports)]
use kube::CustomResourceExt;

pub mod v1;
pub mod v1alpha1;
pub mod v2;
// +rbuilder:scaffold:api-modules

/// Every CustomResourceDefinition of this operator: what `make manifests` writes to
/// `config/crd/bases/`. List one `<version>::<Kind>::crd()` per kind and version; the versions
/// of a kind become one CRD, whose storage version is the first listed that keeps
/// `#[kube(storage)]` (see `rbuilder_runtime::crd::merge_versions`).
pub fn crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
    rbuilder_runtime::crd::merge_versions(vec![
        v1::Order::crd(),
        v2::Order::crd(),
        v1alpha1::Memcached::crd(),
        v1::Inventory::crd(),
        // +rbuilder:scaffold:crds
    ])
}
