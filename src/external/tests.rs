//! The translator on small schemas, and on the real CRDs of testdata/crds.

use super::*;

fn generate_from(yaml: &str, group: &str, version: &str, kind: &str) -> Result<External> {
    let wanted = Wanted {
        group,
        domain: None,
        version,
        kind,
    };
    generate(yaml, "test.yaml", &wanted, "test.yaml")
}

const SMALL: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names:
    kind: Widget
    plural: widgets
  scope: Namespaced
  versions:
    - name: v1
      schema:
        openAPIV3Schema:
          type: object
          properties:
            apiVersion:
              type: string
            kind:
              type: string
            metadata:
              type: object
            spec:
              type: object
              required: [size]
              properties:
                size:
                  type: integer
                  format: int32
                  description: "  How big.  "
                type:
                  type: string
                  enum: [a, b]
                port:
                  x-kubernetes-int-or-string: true
                labels:
                  type: object
                  additionalProperties:
                    type: string
                raw:
                  x-kubernetes-preserve-unknown-fields: true
                items:
                  type: array
                  items:
                    type: object
                    properties:
                      name:
                        type: string
                other:
                  type: array
                  items:
                    type: object
                    properties:
                      name:
                        type: string
            status:
              type: object
              properties:
                ready:
                  type: boolean
"#;

#[test]
fn a_small_schema_becomes_structs() {
    let out = generate_from(SMALL, "example.com", "v1", "Widget").unwrap();
    assert_eq!(out.crd_name, "widgets.example.com");
    assert_eq!(out.plural, "widgets");
    assert!(out.namespaced);
    let src = out.source;
    for expected in [
        "#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]",
        "#[kube(group = \"example.com\", version = \"v1\")]",
        "#[kube(kind = \"Widget\", plural = \"widgets\")]",
        "#[kube(namespaced)]",
        "#[kube(status = \"WidgetStatus\")]",
        "pub struct WidgetSpec {",
        "    /// How big.\n    pub size: i32,",
        "    pub r#type: Option<String>,",
        "    pub port: Option<IntOrString>,",
        "    pub labels: Option<BTreeMap<String, String>>,",
        "    pub raw: Option<Value>,",
        "    pub items: Option<Vec<WidgetSpecItems>>,",
        // The same shape is written once.
        "    pub other: Option<Vec<WidgetSpecItems>>,",
        "pub struct WidgetStatus {",
    ] {
        assert!(src.contains(expected), "{expected} missing in:\n{src}");
    }
    assert!(!src.contains("WidgetSpecOther"), "{src}");
}

#[test]
fn properties_beside_spec_make_a_no_spec_root() {
    let yaml = SMALL.replace(
        "            status:\n",
        "            operation:\n              type: string\n            status:\n",
    );
    let src = generate_from(&yaml, "example.com", "v1", "Widget")
        .unwrap()
        .source;
    assert!(src.contains("#[kube(no_spec)]"), "{src}");
    assert!(src.contains("pub struct WidgetFields {\n"), "{src}");
    assert!(src.contains("    pub spec: Option<WidgetSpec>,"), "{src}");
    assert!(src.contains("    pub operation: Option<String>,"), "{src}");
}

#[test]
fn bad_input_is_refused() {
    let err = |yaml: &str, version: &str, kind: &str| {
        format!(
            "{:#}",
            generate_from(yaml, "example.com", version, kind)
                .err()
                .unwrap()
        )
    };
    assert!(err("apiVersion: v1\nkind: ConfigMap\n", "v1", "Widget").contains("is not a CRD"));
    assert!(err(SMALL, "v2", "Widget").contains("has no version v2; its versions are: v1"));
    assert!(err(SMALL, "v1", "Gadget").contains("has no CRD of kind Gadget"));
    let no_schema = SMALL.split("      schema:").next().unwrap();
    assert!(err(no_schema, "v1", "Widget").contains("has no schema"));
}

#[test]
fn group_is_matched_in_full_or_by_its_first_part() {
    assert!(crd::group_matches(
        "cert-manager.io",
        None,
        "cert-manager.io"
    ));
    assert!(crd::group_matches("cert-manager", None, "cert-manager.io"));
    assert!(crd::group_matches(
        "cert-manager",
        Some("io"),
        "cert-manager.io"
    ));
    assert!(!crd::group_matches(
        "cert-manager",
        Some("com"),
        "cert-manager.io"
    ));
    assert!(!crd::group_matches("cert", None, "cert-manager.io"));
}

#[test]
fn the_real_crds_translate() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/crds/");
    for (file, group, version, kind) in [
        (
            "cert-manager/certificates.cert-manager.io.yaml",
            "cert-manager.io",
            "v1",
            "Certificate",
        ),
        (
            "prometheus-operator/monitoring.coreos.com_servicemonitors.yaml",
            "monitoring.coreos.com",
            "v1",
            "ServiceMonitor",
        ),
        (
            "argo-cd/applications.argoproj.io.yaml",
            "argoproj.io",
            "v1alpha1",
            "Application",
        ),
    ] {
        let text = std::fs::read_to_string(format!("{dir}{file}")).unwrap();
        let out = generate_from(&text, group, version, kind).unwrap();
        assert!(
            out.source.contains(&format!("#[kube(kind = \"{kind}\"")),
            "{file}"
        );
    }
}

#[test]
fn clashing_names_unknown_fields_and_empty_documents() {
    let yaml = r#"---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  group: example.com
  names: {kind: Thing, plural: things}
  scope: Cluster
  versions:
    - name: v1beta1
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                fooBar:
                  type: object
                  properties: {a: {type: string}}
                foo:
                  type: object
                  properties:
                    bar:
                      type: object
                      properties: {b: {type: number}}
                template:
                  type: object
                  x-kubernetes-embedded-resource: true
                  properties: {kind: {type: string}}
                matrix:
                  type: array
                  items: {type: array, items: {type: integer}}
                foo_bar:
                  type: string
                  nullable: true
---
"#;
    let out = generate_from(yaml, "example.com", "v1beta1", "Thing").unwrap();
    assert!(!out.namespaced);
    let src = out.source;
    for expected in [
        "pub struct ThingSpecFooBar {",
        "pub struct ThingSpecFooBar2 {",
        "    #[serde(flatten)]\n    pub other_fields: BTreeMap<String, Value>,",
        "    pub matrix: Option<Vec<Vec<i64>>>,",
        "    #[serde(rename = \"fooBar\")]\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub foo_bar: Option<ThingSpecFooBar2>,",
        "    #[serde(rename = \"foo_bar\")]\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub foo_bar_2: Option<String>,",
    ] {
        assert!(src.contains(expected), "{expected} missing in:\n{src}");
    }
    assert!(!src.contains("#[kube(namespaced)]"), "{src}");
}
