//! The kinds of kubebuilder projects migrated to Rust (the golden trees under
//! testdata/kubebuilder-projects/migrated): rbuilder made their types from the CRDs
//! controller-gen wrote from the Go types (testdata/kubebuilder-projects/<project>/config/crd/
//! bases). Here the real kube-derive makes each kind's CRD from those types, version by version,
//! and it must be
//! - controller-gen's, but for what differs between the two by design (src/external/
//!   comparable.rs, compiled here too: descriptions, what the API server checks itself at the
//!   root, the status's `nullable`, an int-or-string's `anyOf`, number formats);
//! - exactly the CRD rbuilder wrote when it made the project (config/crd/bases of the tree),
//!   which `make manifests` then leaves as it is.
//!
//! After a change to the translation, run testdata/regenerate.sh first.

use std::path::Path;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use serde_json::Value;

#[path = "../../src/external/comparable.rs"]
#[allow(dead_code)]
mod comparable;

#[path = "../../testdata/kubebuilder-projects/migrated/project-v4-with-plugins/src/api/v1alpha1/busybox.rs"]
mod plugins_busybox;
#[path = "../../testdata/kubebuilder-projects/migrated/project-v4-with-plugins/src/api/v1alpha1/memcached.rs"]
mod plugins_memcached;
#[path = "../../testdata/kubebuilder-projects/migrated/project-v4-with-plugins/src/api/v1/wordpress.rs"]
mod plugins_wordpress_v1;
#[path = "../../testdata/kubebuilder-projects/migrated/project-v4-with-plugins/src/api/v2/wordpress.rs"]
mod plugins_wordpress_v2;
#[path = "../../testdata/kubebuilder-projects/migrated/shop/src/api/v1/inventory.rs"]
mod shop_inventory;
#[path = "../../testdata/kubebuilder-projects/migrated/shop/src/api/v1alpha1/memcached.rs"]
mod shop_memcached;
#[path = "../../testdata/kubebuilder-projects/migrated/shop/src/api/v1/order.rs"]
mod shop_order_v1;
#[path = "../../testdata/kubebuilder-projects/migrated/shop/src/api/v2/order.rs"]
mod shop_order_v2;

/// The CRD file of `crd`'s kind in `folder` (of testdata/kubebuilder-projects).
fn crd_file(folder: &str, crd: &CustomResourceDefinition) -> Value {
    let file = format!(
        "{}/../testdata/kubebuilder-projects/{folder}/config/crd/bases/{}_{}.yaml",
        env!("CARGO_MANIFEST_DIR"),
        crd.spec.group,
        crd.spec.names.plural
    );
    let yaml = std::fs::read_to_string(Path::new(&file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    serde_saphyr::from_str(&yaml).expect("YAML")
}

/// The version of `file`'s CRD named `name`.
fn version<'a>(file: &'a Value, name: &Value) -> &'a Value {
    let versions = file["spec"]["versions"].as_array().expect("versions");
    versions
        .iter()
        .find(|v| &v["name"] == name)
        .unwrap_or_else(|| panic!("no version {name}"))
}

/// Checks the one version kube-derive made (`crd`, from the types of the migrated project
/// `project`) against controller-gen's and against the one rbuilder wrote.
fn check(project: &str, crd: CustomResourceDefinition) {
    let derived = serde_json::to_value(&crd).expect("JSON");
    let made = &derived["spec"]["versions"][0];
    let name = &made["name"];
    let what = format!("{project}: {} {name}", crd.spec.names.kind);

    let go = crd_file(project, &crd);
    let go_version = version(&go, name);
    let schema = |v: &Value| comparable::comparable(&v["schema"]["openAPIV3Schema"]);
    assert_eq!(
        schema(made),
        schema(go_version),
        "{what}: controller-gen's schema"
    );
    for key in [
        "additionalPrinterColumns",
        "subresources",
        "served",
        "storage",
    ] {
        assert_eq!(made.get(key), go_version.get(key), "{what}: {key}");
    }
    for key in ["group", "scope"] {
        assert_eq!(derived["spec"][key], go["spec"][key], "{what}: spec.{key}");
    }

    let written = crd_file(&format!("migrated/{project}"), &crd);
    assert_eq!(
        made,
        version(&written, name),
        "{what}: the CRD rbuilder wrote"
    );
    assert_eq!(
        derived["spec"]["names"], written["spec"]["names"],
        "{what}: names"
    );
}

#[test]
fn kubebuilders_project_with_plugins() {
    let project = "project-v4-with-plugins";
    check(project, plugins_memcached::Memcached::crd());
    check(project, plugins_busybox::Busybox::crd());
    check(project, plugins_wordpress_v1::Wordpress::crd());
    check(project, plugins_wordpress_v2::Wordpress::crd());
}

#[test]
fn a_project_with_edited_types() {
    check("shop", shop_order_v1::Order::crd());
    check("shop", shop_order_v2::Order::crd());
    check("shop", shop_inventory::Inventory::crd());
    check("shop", shop_memcached::Memcached::crd());
}
