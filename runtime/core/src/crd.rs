//! CustomResourceDefinitions: the versions of one kind, each derived by
//! `#[derive(CustomResource)]`, merged into the one CRD Kubernetes wants per kind.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::core::crd::{MergeError, merge_crds};

/// Merges the single-version CRDs made by `#[derive(CustomResource)]` into one CRD per kind.
///
/// Kubernetes wants one CRD per kind listing every served version, exactly one of them being
/// the storage version. Here that is the first version listed whose `#[kube(...)]` keeps
/// `storage` at its default (`true`): the oldest version stays the storage version until you
/// add `storage = false` to it (what moving kubebuilder's `+kubebuilder:storageversion` marker
/// does). Kinds keep their order of first appearance and versions their listed order, so the
/// generated YAML is stable.
///
/// ```
/// use kube::CustomResourceExt;
/// use rbuilder_runtime::crd::merge_versions;
/// # mod v1 {
/// #     use serde::{Deserialize, Serialize};
/// #[derive(kube::CustomResource, schemars::JsonSchema, Serialize, Deserialize, Clone, Debug)]
/// #[kube(group = "example.com", version = "v1", kind = "App", namespaced)]
/// pub struct AppSpec {}
/// # }
/// # mod v2 {
/// #     use serde::{Deserialize, Serialize};
/// #[derive(kube::CustomResource, schemars::JsonSchema, Serialize, Deserialize, Clone, Debug)]
/// #[kube(group = "example.com", version = "v2", kind = "App", namespaced, storage = false)]
/// pub struct AppSpec {}
/// # }
///
/// let crds = merge_versions(vec![v1::App::crd(), v2::App::crd()]).expect("one storage version");
/// let versions = crds[0].spec.versions.iter().map(|v| (v.name.as_str(), v.storage));
/// assert_eq!(versions.collect::<Vec<_>>(), [("v1", true), ("v2", false)]);
/// ```
pub fn merge_versions(
    crds: Vec<CustomResourceDefinition>,
) -> Result<Vec<CustomResourceDefinition>, MergeError> {
    let mut kinds: Vec<Vec<CustomResourceDefinition>> = Vec::new();
    for crd in crds {
        match kinds
            .iter_mut()
            .find(|same| same.first().map(|c| &c.metadata.name) == Some(&crd.metadata.name))
        {
            Some(same) => same.push(crd),
            None => kinds.push(vec![crd]),
        }
    }
    kinds.into_iter().map(merge_kind).collect()
}

/// Merges the CRDs of one kind, one per version, into one.
fn merge_kind(crds: Vec<CustomResourceDefinition>) -> Result<CustomResourceDefinition, MergeError> {
    let versions = || crds.iter().flat_map(|crd| &crd.spec.versions);
    let order: Vec<String> = versions().map(|v| v.name.clone()).collect();
    let storage = versions()
        .find(|v| v.storage)
        .map(|v| v.name.clone())
        .ok_or_else(|| {
            let name = crds.first().and_then(|crd| crd.metadata.name.clone());
            MergeError::MissingStoredApi(name.unwrap_or_default())
        })?;
    let mut merged = merge_crds(crds, &storage)?;
    // merge_crds appends the other versions in reverse order: restore the listed order.
    merged
        .spec
        .versions
        .sort_by_key(|v| order.iter().position(|name| *name == v.name));
    Ok(merged)
}

#[cfg(test)]
mod tests {
    use kube::CustomResourceExt;

    use super::*;

    /// Two versions of one kind, as `rbuilder create api --version v2` would add them.
    mod widget {
        pub mod v1 {
            #[derive(
                kube::CustomResource,
                schemars::JsonSchema,
                serde::Serialize,
                serde::Deserialize,
                Clone,
                Debug,
            )]
            #[kube(group = "test.my.domain", version = "v1", kind = "Widget", namespaced)]
            pub struct WidgetSpec {
                pub size: i32,
            }
        }
        pub mod v2 {
            #[derive(
                kube::CustomResource,
                schemars::JsonSchema,
                serde::Serialize,
                serde::Deserialize,
                Clone,
                Debug,
            )]
            #[kube(group = "test.my.domain", version = "v2", kind = "Widget", namespaced)]
            pub struct WidgetSpec {
                pub size: String,
            }
        }
    }

    fn versions(crd: &CustomResourceDefinition) -> Vec<(&str, bool)> {
        let versions = crd.spec.versions.iter();
        versions.map(|v| (v.name.as_str(), v.storage)).collect()
    }

    #[test]
    fn two_versions_of_a_kind_become_one_crd_with_one_storage_version() {
        let merged = merge_versions(vec![widget::v1::Widget::crd(), widget::v2::Widget::crd()])
            .expect("merge");
        assert_eq!(merged.len(), 1);
        assert_eq!(versions(&merged[0]), [("v1", true), ("v2", false)]);
    }

    #[test]
    fn storage_moves_to_the_first_version_that_keeps_it() {
        let mut v1 = widget::v1::Widget::crd();
        v1.spec.versions[0].storage = false; // as `#[kube(storage = false)]` does
        let merged = merge_versions(vec![v1, widget::v2::Widget::crd()]).expect("merge");
        assert_eq!(versions(&merged[0]), [("v1", false), ("v2", true)]);
    }
}
