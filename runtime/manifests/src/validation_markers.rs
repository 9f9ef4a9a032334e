//! kubebuilder's validation markers and what a Rust type writes for each: every row of the
//! table in docs/extending.md, checked in the CRD that `make manifests` writes
//! ([`crds`](super::crds), the same function).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::core::crd::MergeError;
use kube::{CustomResourceExt, KubeSchema};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use rbuilder_runtime_core::{Operator, crd};

/// A kind with one field per marker of the table.
#[derive(kube::CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug)]
#[kube(
    group = "test.my.domain",
    version = "v1",
    kind = "Marked",
    namespaced,
    // +kubebuilder:validation:XValidation on the kind
    validation = kube::core::Rule::new("self.metadata.name.size() <= 63")
        .message("at most 63 characters"),
    // +kubebuilder:printcolumn
    printcolumn(name = "Size", type_ = "integer", json_path = ".spec.size")
)]
// +kubebuilder:validation:XValidation on a type
#[x_kube(validation = "self.min <= self.size")]
#[serde(rename_all = "camelCase")]
struct MarkedSpec {
    // +kubebuilder:validation:Minimum=1, +kubebuilder:validation:Maximum=10
    #[schemars(range(min = 1, max = 10))]
    size: i32,
    min: i32,
    // +kubebuilder:validation:MaxLength=63, +kubebuilder:validation:MinLength=1
    #[schemars(length(min = 1, max = 63))]
    // +kubebuilder:validation:Pattern=`^[a-z]+$`
    #[schemars(regex(pattern = r"^[a-z]+$"))]
    name: String,
    // +kubebuilder:validation:Enum=Fast;Safe
    mode: Mode,
    // +kubebuilder:default=3
    #[serde(default = "three")]
    replicas: i32,
    // +kubebuilder:validation:XValidation on a field
    #[x_kube(validation = kube::core::Rule::new("self == oldSelf").message("immutable"))]
    owner: String,
    // +kubebuilder:validation:MaxItems=3
    #[schemars(length(max = 3))]
    tags: Vec<String>,
}

/// The values `mode` may take.
#[derive(schemars::JsonSchema, Serialize, Deserialize, Clone, Debug)]
enum Mode {
    Fast,
    Safe,
}

fn three() -> i32 {
    3
}

/// The operator's CRDs, as a project's `src/lib.rs` lists them.
fn crds() -> Result<Vec<CustomResourceDefinition>, MergeError> {
    crd::merge_versions(vec![Marked::crd()])
}

static MARKED: Operator = Operator::new("marked").crds(crds);

/// The CRD of [`Marked`] as `make manifests` writes it.
fn written() -> Value {
    let mut crds = super::crds(&MARKED).expect("the CRDs");
    crds.remove(0)
}

#[test]
fn each_marker_is_in_the_crd_make_manifests_writes() {
    let crd = written();
    let version = &crd["spec"]["versions"][0];
    let root = &version["schema"]["openAPIV3Schema"];
    let spec = &root["properties"]["spec"];
    let field = |name: &str| &spec["properties"][name];
    let rule = |rule: &str, message: Option<&str>| {
        let mut rule = json!({"rule": rule});
        if let Some(message) = message {
            rule["message"] = json!(message);
        }
        rule
    };
    // Minimum, Maximum
    assert_eq!(field("size")["minimum"], json!(1.0));
    assert_eq!(field("size")["maximum"], json!(10.0));
    // MinLength, MaxLength, Pattern
    assert_eq!(field("name")["minLength"], 1);
    assert_eq!(field("name")["maxLength"], 63);
    assert_eq!(field("name")["pattern"], "^[a-z]+$");
    // Enum
    assert_eq!(field("mode")["enum"], json!(["Fast", "Safe"]));
    // default
    assert_eq!(field("replicas")["default"], 3);
    // MaxItems
    assert_eq!(field("tags")["maxItems"], 3);
    // XValidation, on the kind, on a type, on a field
    let on_kind = rule(
        "self.metadata.name.size() <= 63",
        Some("at most 63 characters"),
    );
    assert_eq!(root["x-kubernetes-validations"], json!([on_kind]));
    let on_type = rule("self.min <= self.size", None);
    assert_eq!(spec["x-kubernetes-validations"], json!([on_type]));
    let on_field = rule("self == oldSelf", Some("immutable"));
    assert_eq!(
        field("owner")["x-kubernetes-validations"],
        json!([on_field])
    );
    // printcolumn
    let column = json!({"name": "Size", "type": "integer", "jsonPath": ".spec.size"});
    assert_eq!(version["additionalPrinterColumns"], json!([column]));
    // Required: a field without a default, not an Option
    let required = spec["required"].as_array().expect("required");
    assert!(required.contains(&json!("size")) && !required.contains(&json!("replicas")));
}
