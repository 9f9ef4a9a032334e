//! What the Rust types rbuilder scaffolds for a kind hold, as data: the kind's doc, its CEL
//! validations and printer columns, and the fields of its spec and status. Both outputs come
//! from this one description: the types file (`templates/api/<flavor>.rs.tera` prints the
//! Rust view, [`ApiTypes`] serialized) and the CRD rbuilder writes before the project is first
//! built ([`ApiTypes::openapi_schema`], [`ApiTypes::printer_columns`]). How a field becomes Rust
//! and how kube-derive and schemars turn that Rust into a schema sit side by side in
//! [`Field`], so that a field added here changes both. `runtime/tests/scaffolded_crds.rs`
//! compiles golden trees' types with kube-derive and compares the CRDs (`cargo test
//! --workspace`), and `make manifests --check` in every generated project is the safety net.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::conditions::conditions_schema;
use super::resource::{DeployImage, Flavor, Resource};
use super::with_article;

/// The kind's types, as the templates print them (serialized) and the CRD describes them.
#[derive(Debug, Serialize)]
pub struct ApiTypes {
    /// The kind's description (`#[kube(doc = ...)]`), the schema's top-level description.
    pub doc: String,
    /// CEL rules on the whole object (`#[kube(validation = ...)]`).
    pub validations: Vec<Validation>,
    /// Extra columns of `kubectl get` (`#[kube(printcolumn(...))]`).
    pub print_columns: Vec<PrintColumn>,
    pub spec: Struct,
    pub status: Struct,
}

/// A CEL rule the API server checks on every write.
#[derive(Debug, Serialize)]
pub struct Validation {
    /// Why the rule is there: a comment above it in the Rust types.
    pub why: Vec<&'static str>,
    pub rule: &'static str,
    pub message: &'static str,
}

/// A column of `kubectl get`.
#[derive(Debug, Serialize)]
pub struct PrintColumn {
    pub name: &'static str,
    pub type_: &'static str,
    pub json_path: &'static str,
}

impl PrintColumn {
    fn new(name: &'static str, type_: &'static str, json_path: &'static str) -> Self {
        Self {
            name,
            type_,
            json_path,
        }
    }
}

/// The spec or the status.
#[derive(Debug, Serialize)]
pub struct Struct {
    /// Its doc comment: the schema's description of `spec` or `status`.
    pub doc: String,
    pub fields: Vec<Field>,
}

/// A field's value type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    String,
    I32,
    I64,
    /// `metav1.Condition`s, listed as a map keyed by `type` (the runtime's schema for them).
    Conditions,
}

/// Whether a field must be set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presence {
    Required,
    /// `Option<T>`, or a list that may be empty: left out when unset or empty.
    Optional,
    /// `Option<T>` that serde fills with `value` when it is left out (through a function and a
    /// constant the types file defines, see [`Field::default_view`]): the CRD carries the value
    /// as the field's default.
    Defaulted {
        value: i64,
    },
}

/// One field of the spec or the status.
#[derive(Debug)]
pub struct Field {
    /// The Rust name (snake case); the JSON name is its camel case.
    pub name: &'static str,
    /// Its doc comment, a line each: the schema's description joins them with line breaks,
    /// as schemars does with a one-paragraph comment.
    pub doc: Vec<String>,
    pub type_: Type,
    pub presence: Presence,
    /// `#[schemars(length(min = ..))]`
    pub min_length: Option<u32>,
    /// `#[schemars(range(min = .., max = ..))]`
    pub range: (Option<i64>, Option<i64>),
}

impl Field {
    fn new(name: &'static str, type_: Type, presence: Presence, doc: &[&str]) -> Self {
        Self {
            name,
            doc: doc.iter().map(|line| (*line).to_owned()).collect(),
            type_,
            presence,
            min_length: None,
            range: (None, None),
        }
    }

    fn min_length(mut self, min: u32) -> Self {
        self.min_length = Some(min);
        self
    }

    fn range(mut self, min: Option<i64>, max: Option<i64>) -> Self {
        self.range = (min, max);
        self
    }

    /// The JSON name: serde's `rename_all = "camelCase"`.
    fn json_name(&self) -> String {
        let mut out = String::new();
        let mut upper = false;
        for c in self.name.chars() {
            match c {
                '_' => upper = true,
                c if upper => {
                    out.push(c.to_ascii_uppercase());
                    upper = false;
                }
                c => out.push(c),
            }
        }
        out
    }

    /// The Rust type of the field's value.
    fn value_type(&self) -> &'static str {
        match self.type_ {
            Type::String => "String",
            Type::I32 => "i32",
            Type::I64 => "i64",
            Type::Conditions => "Vec<metav1::Condition>",
        }
    }

    /// The Rust type of the field.
    fn rust_type(&self) -> String {
        match self.nullable() {
            true => format!("Option<{}>", self.value_type()),
            false => self.value_type().to_owned(),
        }
    }

    /// The field's attributes, each a line.
    fn attributes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let skip = match self.type_ {
            Type::Conditions => "Vec::is_empty",
            _ => "Option::is_none",
        };
        match &self.presence {
            Presence::Optional => out.push(format!(
                r#"#[serde(default, skip_serializing_if = "{skip}")]"#
            )),
            Presence::Defaulted { .. } => out.push(format!(
                r#"#[serde(default = "default_{}", skip_serializing_if = "{skip}")]"#,
                self.name
            )),
            Presence::Required => {}
        }
        if let Some(min) = self.min_length {
            out.push(format!("#[schemars(length(min = {min}))]"));
        }
        let range = match self.range {
            (Some(min), Some(max)) => Some(format!("min = {min}, max = {max}")),
            (Some(min), None) => Some(format!("min = {min}")),
            (None, Some(max)) => Some(format!("max = {max}")),
            (None, None) => None,
        };
        if let Some(range) = range {
            out.push(format!("#[schemars(range({range}))]"));
        }
        if self.type_ == Type::Conditions {
            out.push(r#"#[schemars(schema_with = "rbuilder_runtime::conditions::schema")]"#.into());
        }
        out
    }

    /// Whether the schema lists the field as required: serde needs it (no default, not an
    /// `Option`, not a list left out when empty).
    fn required(&self) -> bool {
        self.presence == Presence::Required
    }

    /// Whether the field is an `Option`, which kube-derive's schema says may be `null`.
    fn nullable(&self) -> bool {
        self.presence != Presence::Required && self.type_ != Type::Conditions
    }

    /// The field's schema, as schemars writes it and kube-derive makes it structural: an
    /// `Option` is `nullable`, a range's bounds are numbers with a fraction (the CRD's
    /// `minimum` is a float), a length's are integers.
    fn schema(&self) -> Value {
        let mut schema = match self.type_ {
            Type::String => json!({"type": "string"}),
            Type::I32 => json!({"type": "integer", "format": "int32"}),
            Type::I64 => json!({"type": "integer", "format": "int64"}),
            Type::Conditions => conditions_schema(),
        };
        let Some(object) = schema.as_object_mut() else {
            return schema;
        };
        object.insert("description".into(), json!(self.doc.join("\n")));
        if self.nullable() {
            object.insert("nullable".into(), json!(true));
        }
        if let Presence::Defaulted { value, .. } = self.presence {
            object.insert("default".into(), json!(value));
        }
        if let Some(min) = self.min_length {
            object.insert("minLength".into(), json!(min));
        }
        if let Some(min) = self.range.0 {
            object.insert("minimum".into(), json!(min as f64));
        }
        if let Some(max) = self.range.1 {
            object.insert("maximum".into(), json!(max as f64));
        }
        schema
    }
}

/// The Rust view of a field, which the types template prints.
#[derive(Serialize)]
struct FieldView<'a> {
    doc: &'a [String],
    attributes: Vec<String>,
    name: &'a str,
    rust_type: String,
    default: Option<DefaultView>,
}

/// What the types file defines for a defaulted field: `DEFAULT_PORT` and `default_port()`.
#[derive(Serialize)]
struct DefaultView {
    json_name: String,
    constant: String,
    function: String,
    value_type: &'static str,
    value: i64,
}

impl Field {
    /// The constant and function that give a defaulted field its value.
    fn default_view(&self) -> Option<DefaultView> {
        let Presence::Defaulted { value } = self.presence else {
            return None;
        };
        Some(DefaultView {
            json_name: self.json_name(),
            constant: format!("DEFAULT_{}", self.name.to_ascii_uppercase()),
            function: format!("default_{}", self.name),
            value_type: self.value_type(),
            value,
        })
    }
}

impl Serialize for Field {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        FieldView {
            doc: &self.doc,
            attributes: self.attributes(),
            name: self.name,
            rust_type: self.rust_type(),
            default: self.default_view(),
        }
        .serialize(serializer)
    }
}

/// The second line of a status's conditions' doc: why they are a map.
const LISTED_AS_MAP: &str =
    "Listed as a map keyed by `type`, so that server-side apply merges conditions one by one.";

impl Struct {
    /// The spec of `kind`, holding `fields`.
    fn spec(kind: &str, fields: Vec<Field>) -> Self {
        Self {
            doc: format!(
                "{kind}Spec defines the desired state of {}.",
                with_article(kind)
            ),
            fields,
        }
    }

    /// The status of `kind`: its conditions (documented by `conditions`), `fields`, and the
    /// generation it was computed from.
    fn status(kind: &str, conditions: &[&str], fields: Vec<Field>) -> Self {
        let conditions = Field::new(
            "conditions",
            Type::Conditions,
            Presence::Optional,
            conditions,
        );
        let observed_generation = Field::new(
            "observed_generation",
            Type::I64,
            Presence::Optional,
            &["The `metadata.generation` that the status was computed from."],
        );
        let mut all = vec![conditions];
        all.extend(fields);
        all.push(observed_generation);
        Self {
            doc: format!(
                "{kind}Status defines the observed state of {}.",
                with_article(kind)
            ),
            fields: all,
        }
    }

    fn schema(&self) -> Value {
        let properties: Map<String, Value> = self
            .fields
            .iter()
            .map(|f| (f.json_name(), f.schema()))
            .collect();
        let required: Vec<String> = self
            .fields
            .iter()
            .filter(|f| f.required())
            .map(Field::json_name)
            .collect();
        let mut schema = json!({
            "description": self.doc,
            "properties": properties,
            "type": "object",
        });
        if !required.is_empty() {
            schema["required"] = json!(required);
        }
        schema
    }
}

impl ApiTypes {
    /// The types rbuilder scaffolds for `r`; `None` for a kind the project does not define.
    pub fn of(r: &Resource) -> Option<Self> {
        match &r.flavor {
            Flavor::Plain => Some(Self::plain(r)),
            Flavor::DeployImage(image) => Some(Self::deploy_image(r, image)),
            Flavor::Builtin { .. } | Flavor::External { .. } => None,
        }
    }

    /// A kind with an example field, and a status with a Ready condition.
    fn plain(r: &Resource) -> Self {
        let kind = r.kind.as_str();
        let example = format!(
            "An example field of {kind}: edit `{}` to remove or update it.",
            r.api_file()
        );
        let ready =
            format!("The current state of the {kind}. `Ready` is `True` once the latest spec (see");
        let conditions = [
            ready.as_str(),
            "`observedGeneration`) has been reconciled.",
            LISTED_AS_MAP,
        ];
        Self {
            doc: format!("{kind} is the Schema for the {} API.", r.plural),
            validations: Vec::new(),
            print_columns: Vec::new(),
            spec: Struct::spec(
                kind,
                vec![Field::new(
                    "foo",
                    Type::String,
                    Presence::Optional,
                    &[&example],
                )],
            ),
            status: Struct::status(kind, &conditions, Vec::new()),
        }
    }

    /// A kind whose `spec.image` runs as a Deployment.
    fn deploy_image(r: &Resource, image: &DeployImage) -> Self {
        let kind = r.kind.as_str();
        let port = match image.port {
            Some(port) => Field::new(
                "port",
                Type::I32,
                Presence::Defaulted {
                    value: i64::from(port),
                },
                &["The port the container listens on, declared as its container port."],
            ),
            None => Field::new(
                "port",
                Type::I32,
                Presence::Optional,
                &["The port the container listens on, if any, declared as its container port."],
            ),
        };
        let image_doc = format!("The container image to run, e.g. `{}`.", image.image);
        let spec = vec![
            Field::new("image", Type::String, Presence::Required, &[&image_doc]).min_length(1),
            Field::new(
                "replicas",
                Type::I32,
                Presence::Optional,
                &[
                    "How many pods to run. Leave it unset to let something else scale the Deployment, e.g. a",
                    "HorizontalPodAutoscaler or `kubectl scale`; a new Deployment then starts with one pod.",
                ],
            )
            .range(Some(0), None),
            port.range(Some(1), Some(65535)),
        ];
        let conditions = [
            "`Available`, `Progressing` and `Degraded`, derived from the Deployment's status.",
            LISTED_AS_MAP,
        ];
        let ready_replicas = Field::new(
            "ready_replicas",
            Type::I32,
            Presence::Optional,
            &["Pods of the Deployment that are ready."],
        );
        Self {
            doc: format!("{kind} runs a container image as a Deployment."),
            validations: vec![Validation {
                why: vec![
                    "The name becomes a label value of the Deployment and its pods, which Kubernetes limits",
                    "to 63 characters; without this rule a longer name would fail only in the reconciler.",
                ],
                rule: "self.metadata.name.size() <= 63",
                message: "metadata.name must be at most 63 characters (it labels the Deployment)",
            }],
            print_columns: vec![
                PrintColumn::new("Image", "string", ".spec.image"),
                PrintColumn::new("Ready", "integer", ".status.readyReplicas"),
                PrintColumn::new("Age", "date", ".metadata.creationTimestamp"),
            ],
            spec: Struct::spec(kind, spec),
            status: Struct::status(kind, &conditions, vec![ready_replicas]),
        }
    }

    /// The version's `openAPIV3Schema`, as kube-derive makes it from the types: the object
    /// with `spec` required and `status` optional, titled with the kind.
    pub fn openapi_schema(&self, kind: &str) -> Value {
        let mut status = self.status.schema();
        status["nullable"] = json!(true);
        let mut schema = json!({
            "description": self.doc,
            "properties": {"spec": self.spec.schema(), "status": status},
            "required": ["spec"],
            "title": kind,
            "type": "object",
        });
        if !self.validations.is_empty() {
            let rules: Vec<Value> = self
                .validations
                .iter()
                .map(|v| json!({"rule": v.rule, "message": v.message}))
                .collect();
            schema["x-kubernetes-validations"] = json!(rules);
        }
        schema
    }

    /// The version's `additionalPrinterColumns`, if it has any.
    pub fn printer_columns(&self) -> Option<Value> {
        let columns: Vec<Value> = self
            .print_columns
            .iter()
            .map(|c| json!({"jsonPath": c.json_path, "name": c.name, "type": c.type_}))
            .collect();
        (!columns.is_empty()).then(|| json!(columns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_names_are_serdes_camel_case() {
        let field = |name| Field::new(name, Type::I32, Presence::Optional, &[]);
        assert_eq!(field("ready_replicas").json_name(), "readyReplicas");
        assert_eq!(
            field("observed_generation").json_name(),
            "observedGeneration"
        );
        assert_eq!(field("image").json_name(), "image");
    }

    #[test]
    fn an_option_is_nullable_and_a_required_field_is_listed() {
        let spec = Struct {
            doc: "spec".into(),
            fields: vec![
                Field::new("image", Type::String, Presence::Required, &["a"]).min_length(1),
                Field::new("replicas", Type::I32, Presence::Optional, &["b", "c"])
                    .range(Some(0), None),
                Field::new("conditions", Type::Conditions, Presence::Optional, &["d"]),
            ],
        };
        let schema = spec.schema();
        assert_eq!(schema["required"], json!(["image"]));
        let image = &schema["properties"]["image"];
        assert_eq!(image["nullable"], Value::Null);
        assert_eq!(image["minLength"], 1);
        let replicas = &schema["properties"]["replicas"];
        assert_eq!(replicas["nullable"], true);
        assert_eq!(replicas["description"], "b\nc");
        assert_eq!(replicas["minimum"], json!(0.0));
        // An empty list is left out, never null.
        assert_eq!(schema["properties"]["conditions"]["nullable"], Value::Null);
        assert_eq!(spec.fields[1].rust_type(), "Option<i32>");
        assert_eq!(spec.fields[2].rust_type(), "Vec<metav1::Condition>");
    }
}
