//! The CRDs rbuilder writes when it scaffolds (before a project is first built) against what
//! kube-derive makes from the Rust types rbuilder writes beside them, on golden trees that
//! cover both type templates (plain and deploy-image, with and without a default port),
//! cluster scope, short names, long names and a kind named like a Kubernetes type. rbuilder
//! makes both from one description (src/model/api_types.rs); this test is where its idea of
//! kube-derive and schemars meets the real crates, without building a generated project.
//! After a change to the types, run testdata/regenerate.sh first.

use std::path::Path;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use serde_json::Value;

#[path = "../../testdata/deploy-image/src/api/v1beta1/worker.rs"]
mod deploy_image_worker;
#[path = "../../testdata/helm-chart/src/api/v1/demo_micro_service.rs"]
mod helm_chart_demo_micro_service;
#[path = "../../testdata/kind-names/src/api/v1/condition.rs"]
mod kind_names_condition;
#[path = "../../testdata/kind-names/src/api/v1beta1/extraordinarily_long_deploy_image_kind_name_that_fits_the_limits_too.rs"]
mod kind_names_long_deploy_image;
#[path = "../../testdata/multigroup/src/api/web_apps/v1/site.rs"]
mod multigroup_site;
#[path = "../../testdata/plain/src/api/v1/guestbook.rs"]
mod plain_guestbook;
#[path = "../../testdata/plain/src/api/v1alpha1/policy.rs"]
mod plain_policy;

/// The CRD file of `crd`'s kind in the golden tree `tree`.
fn golden(tree: &str, crd: &CustomResourceDefinition) -> Value {
    let file = format!(
        "{}/../testdata/{tree}/config/crd/bases/{}_{}.yaml",
        env!("CARGO_MANIFEST_DIR"),
        crd.spec.group,
        crd.spec.names.plural
    );
    let yaml = std::fs::read_to_string(Path::new(&file)).expect("the golden CRD");
    serde_saphyr::from_str(&yaml).expect("YAML")
}

/// Checks the one version `crd` holds against the same version in the golden file: the
/// version's schema, columns and subresources, and the kind's names and scope. The storage
/// flag is left out: it belongs to the merge of the kind's versions.
fn check(tree: &str, crd: CustomResourceDefinition) {
    let golden = golden(tree, &crd);
    let derived = serde_json::to_value(&crd).expect("JSON");
    let name = &derived["spec"]["versions"][0]["name"];
    let versions = golden["spec"]["versions"].as_array().expect("versions");
    let mut scaffolded = versions
        .iter()
        .find(|v| &v["name"] == name)
        .unwrap_or_else(|| panic!("{tree}: no version {name} in the scaffolded CRD"))
        .clone();
    let mut derived_version = derived["spec"]["versions"][0].clone();
    for version in [&mut scaffolded, &mut derived_version] {
        version.as_object_mut().expect("object").remove("storage");
    }
    assert_eq!(
        scaffolded, derived_version,
        "{tree}: the version {name} rbuilder scaffolds differs from kube-derive's"
    );
    for key in ["names", "scope", "group"] {
        assert_eq!(
            golden["spec"][key], derived["spec"][key],
            "{tree}: spec.{key}"
        );
    }
    assert_eq!(golden["metadata"]["name"], derived["metadata"]["name"]);
}

#[test]
fn plain_kinds() {
    check("plain", plain_guestbook::Guestbook::crd());
    check("plain", plain_policy::Policy::crd());
    check("kind-names", kind_names_condition::Condition::crd());
    check("multigroup", multigroup_site::Site::crd());
}

#[test]
fn deploy_image_kinds() {
    check("deploy-image", deploy_image_worker::Worker::crd());
    check(
        "helm-chart",
        helm_chart_demo_micro_service::DemoMicroService::crd(),
    );
    check(
        "kind-names",
        kind_names_long_deploy_image::ExtraordinarilyLongDeployImageKindNameThatFitsTheLimitsToo::crd(),
    );
}
