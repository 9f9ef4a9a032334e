//! The types of kubebuilder projects' kinds, made from the CRDs controller-gen wrote
//! (testdata/kubebuilder-projects): the CRD the types make, as rbuilder predicts it, is
//! controller-gen's, version by version, but for what differs by design (`comparable`).
//! runtime/tests/migrated_crds.rs checks the prediction against kube-derive itself.

use std::path::Path;

use serde_json::{Value, json};

use super::*;
use crate::external::comparable::comparable;

/// Every CRD of the kubebuilder projects of testdata: (file, CRD).
fn fixture_crds() -> Vec<(String, Value)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kubebuilder-projects");
    let mut crds = Vec::new();
    let mut projects: Vec<_> = std::fs::read_dir(&root)
        .expect("testdata/kubebuilder-projects")
        .flatten()
        .map(|e| e.path().join("config/crd/bases"))
        .filter(|p| p.is_dir())
        .collect();
    projects.sort();
    for bases in projects {
        let mut files: Vec<_> = std::fs::read_dir(&bases)
            .expect("bases")
            .flatten()
            .collect();
        files.sort_by_key(|e| e.path());
        for file in files {
            let text = std::fs::read_to_string(file.path()).expect("a CRD file");
            let crd: Value = serde_saphyr::from_str(&text).expect("YAML");
            let name = file.path().strip_prefix(&root).map_or_else(
                |_| file.path().display().to_string(),
                |p| p.display().to_string(),
            );
            crds.push((name, crd));
        }
    }
    crds
}

#[test]
fn kubebuilders_crds_are_made_again_by_the_types_made_from_them() {
    let crds = fixture_crds();
    assert!(crds.len() >= 20, "{} CRDs in testdata", crds.len());
    let mut versions = 0;
    for (file, crd) in &crds {
        for go in crd["spec"]["versions"].as_array().expect("versions") {
            let name = go["name"].as_str().expect("a version name");
            let own = types(crd, name, "config/crd/kubebuilder/x.yaml").expect("the types");
            assert!(
                own.unexpressed.is_empty(),
                "{file} {name}: {:?}",
                own.unexpressed
            );
            let made = &own.version;
            let schema = |v: &Value| comparable(&v["schema"]["openAPIV3Schema"]);
            assert_eq!(schema(made), schema(go), "{file} {name}: the schema");
            for key in [
                "additionalPrinterColumns",
                "subresources",
                "served",
                "storage",
            ] {
                assert_eq!(made.get(key), go.get(key), "{file} {name}: {key}");
            }
            let mut names = crd["spec"]["names"].clone();
            // The API server defaults listKind to <kind>List, as controller-gen writes it.
            names.as_object_mut().map(|n| n.remove("listKind"));
            assert_eq!(own.names, names, "{file}: names");
            versions += 1;
        }
    }
    assert!(versions >= crds.len(), "{versions} versions");
}

/// What the types cannot make is listed, field by field, and left out of the CRD they make.
#[test]
fn what_the_types_cannot_make_is_listed() {
    let crd = json!({
        "spec": {
            "group": "x.io",
            "names": {"kind": "Thing", "plural": "things"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": true,
                    "properties": {
                        "spec": {
                            "type": "object",
                            "properties": {
                                "one": {"oneOf": [{"required": ["a"]}, {"required": ["b"]}],
                                        "type": "object",
                                        "properties": {"a": {"type": "string"}}},
                                "port": {"x-kubernetes-int-or-string": true,
                                         "anyOf": [{"type": "integer"}, {"type": "string"}]},
                            },
                        },
                        "data": {"type": "string"},
                    },
                }},
            }],
        },
    });
    let own = types(&crd, "v1", "config/crd/kubebuilder/things.yaml").expect("types");
    let listed: Vec<(&str, &str)> = own
        .unexpressed
        .iter()
        .map(|u| (u.path.as_str(), u.why.split(':').next().unwrap_or_default()))
        .collect();
    assert_eq!(
        listed,
        [
            ("spec.one", "its oneOf"),
            (
                "data",
                "kube-derive's kinds have spec and status beside the object's metadata only"
            ),
            (
                "x-kubernetes-preserve-unknown-fields",
                "kube-derive's kinds have no such keyword at the root of the schema"
            ),
            (
                "spec",
                "the CRD does not require it, and kube-derive's kinds always have one"
            ),
        ]
    );
    // An int-or-string's anyOf says what x-kubernetes-int-or-string says: nothing is lost.
    let port =
        &own.version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["port"];
    assert_eq!(port["x-kubernetes-int-or-string"], true);
    assert!(port.get("anyOf").is_none(), "{port}");
}

#[test]
fn a_kind_without_a_sample_gets_one_its_schema_takes() {
    let (_, crd) = fixture_crds()
        .into_iter()
        .find(|(file, _)| file.ends_with("shop.example.com_orders.yaml"))
        .expect("the shop's Order");
    let own = types(&crd, "v2", "x.yaml").expect("types");
    let sample = own.sample("shop");
    let doc: Value = serde_saphyr::from_str(&sample).expect("YAML");
    assert_eq!(doc["apiVersion"], "shop.example.com/v2");
    assert_eq!(doc["metadata"]["name"], "order-sample");
    // The required list, with an item of its required fields; the enum's default.
    assert_eq!(doc["spec"]["lines"], json!([]), "{sample}");
    let own = types(&crd, "v1", "x.yaml").expect("types");
    let doc: Value = serde_saphyr::from_str(&own.sample("shop")).expect("YAML");
    assert_eq!(doc["spec"]["items"][0]["sku"], "x", "{doc}");
}
