// Copyright 2026 Acme Robotics, Inc.
//
// Proprietary and confidential. Do not distribute without written permission
// from Acme Robotics, Inc.

//! The custom resource types served by this operator, one module per API version.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::core::crd::MergeError;

// Brings `crd()` into scope for the list in `crds()`, which is empty until the first
// `rbuilder create api`.
#[allow(unused_imports)]
use kube::CustomResourceExt;

pub mod v1;
pub mod v1alpha1;
pub mod v1beta1;
// +rbuilder:scaffold:api-modules

/// Every CustomResourceDefinition of this operator: what `make manifests` writes to
/// `config/crd/bases/`. List one `<version>::<Kind>::crd()` per kind and version; the versions
/// of a kind become one CRD, whose storage version is the first listed that keeps
/// `#[kube(storage)]` (see `rbuilder_runtime::crd::merge_versions`).
pub fn crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
    rbuilder_runtime::crd::merge_versions(vec![
        v1alpha1::Memcached::crd(),
        v1beta1::Worker::crd(),
        v1::Site::crd(),
        // +rbuilder:scaffold:crds
    ])
}
