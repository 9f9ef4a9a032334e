//! From a CRD version's structural schema to Rust types: one struct per object that has
//! properties, named by its path (`CertificateSpecPrivateKey`), `Option` for what is not
//! required, `Vec` for arrays, `BTreeMap` for maps, `IntOrString` for
//! x-kubernetes-int-or-string, `serde_json::Value` where the schema keeps unknown fields.
//! Structs with the same fields (Argo CD repeats `source` under spec, status and operation)
//! are written once.
//!
//! Two uses. Another project's kind ([`Types::default`]): enums stay `String` (lossless for any
//! value the API server accepts), date-times too, and nothing derives a schema (the CRD is
//! not this project's). A project's own kind made from its CRD ([`Types::exact`], a kubebuilder
//! project's kind): the types make the CRD from then on, so they derive `JsonSchema` and carry
//! the attributes that make the very schema of the CRD (see `derived`): string enums become
//! Rust enums, date-times `metav1::Time`, quantities `Quantity`, a status's conditions
//! `metav1::Condition`s.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value, json};

use super::comparable::without_descriptions;
use super::derived::{self, Attribute, Made, QUANTITY_PATTERN, TYPE_DESCRIPTION};
use super::names::{field_ident, pascal_case};
use super::schema::{AdditionalProperties, Schema};
use crate::model::conditions::conditions_schema;

/// One field of a struct.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// As Rust names it: `secret_name`, `r#type`.
    pub ident: String,
    /// As the API names it: `secretName`.
    pub wire: String,
    /// The type without the `Option`: `Vec<String>`.
    pub ty: String,
    /// Not required (or nullable): `Option<ty>`, skipped when `None`.
    pub optional: bool,
    /// `#[serde(flatten)]`: the object's other fields, for an object that keeps unknown ones.
    pub flatten: bool,
    /// A list left out when empty rather than an `Option` (a status's conditions).
    pub vec_optional: bool,
    pub doc: Option<String>,
    /// Exact types: the doc comment's lines (for `doc`, its text) and the schema attributes.
    pub doc_lines: Vec<String>,
    pub attributes: Vec<Attribute>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Struct {
    /// When its name was chosen: a struct comes before the structs of its fields.
    pub order: usize,
    pub name: String,
    pub doc: Option<String>,
    pub fields: Vec<Field>,
    /// Exact types: the doc comment's lines, the container attributes, and, for a string enum,
    /// its variants instead of fields.
    pub doc_lines: Vec<String>,
    pub attributes: Vec<Attribute>,
    pub variants: Option<Variants>,
    /// It derives `Default`: none of its required fields is of a type without one.
    pub default: bool,
}

/// The variants of a string enum: `(Rust name, value)` in the CRD's order, and which is the
/// default (the CRD's default, else the first).
#[derive(Debug, Clone, PartialEq)]
pub struct Variants {
    pub variants: Vec<(String, String)>,
    pub default: usize,
}

/// The structs made so far, and the names taken.
#[derive(Default)]
pub struct Types {
    /// In the order they were finished (see `Struct::order` for the order to write them in).
    pub structs: Vec<Struct>,
    taken: BTreeSet<String>,
    /// A struct's fields (its identity) -> its name, to write each shape once.
    shapes: HashMap<String, String>,
    /// Whether the types use `IntOrString`, `Value`, `BTreeMap` (for the imports).
    pub uses_int_or_string: bool,
    pub uses_value: bool,
    pub uses_map: bool,
    /// Exact types (see the module's doc); and whether they use `Quantity`, `metav1`.
    exact: bool,
    pub uses_quantity: bool,
    pub uses_metav1: bool,
}

impl Types {
    /// Types of a project's own kind, which make its CRD: see the module's doc.
    pub fn exact() -> Self {
        Self {
            exact: true,
            ..Self::default()
        }
    }

    /// Whether these are exact types (see the module's doc).
    pub fn is_exact(&self) -> bool {
        self.exact
    }

    /// Names the generated code uses besides the structs: never a struct's name.
    pub fn reserve(&mut self, names: &[&str]) {
        self.taken.extend(names.iter().map(|n| (*n).to_owned()));
    }

    /// `wanted`, or `wanted2`, `wanted3`, ... if it is taken.
    fn unique(&mut self, wanted: &str) -> String {
        let mut name = wanted.to_owned();
        let mut n = 1;
        while self.taken.contains(&name) {
            n += 1;
            name = format!("{wanted}{n}");
        }
        self.taken.insert(name.clone());
        name
    }

    /// The Rust type of `schema`; an object with properties becomes a struct named `name`.
    pub fn type_of(&mut self, schema: &Schema, name: &str) -> String {
        self.made(schema, name).rust
    }

    /// The Rust type of `schema` and (exact types) the schema it makes.
    pub fn made(&mut self, schema: &Schema, name: &str) -> Made {
        if schema.int_or_string {
            if self.exact && schema.keywords.get("pattern") == Some(&json!(QUANTITY_PATTERN)) {
                self.uses_quantity = true;
                return with_description(Made::new(
                    "Quantity",
                    json!({"x-kubernetes-int-or-string": true}),
                ));
            }
            self.uses_int_or_string = true;
            return with_description(Made::new(
                "IntOrString",
                json!({"x-kubernetes-int-or-string": true}),
            ));
        }
        match schema.type_.as_deref() {
            Some("string") if self.exact && schema.format.as_deref() == Some("date-time") => {
                self.uses_metav1 = true;
                with_description(Made::new(
                    "metav1::Time",
                    json!({"type": "string", "format": "date-time"}),
                ))
                .without_default()
            }
            Some("string") => match self.exact.then(|| self.string_enum(schema, name)) {
                Some(Some(made)) => made,
                _ => Made::new("String", json!({"type": "string"})),
            },
            Some("integer") if schema.format.as_deref() == Some("int32") => {
                Made::new("i32", json!({"type": "integer", "format": "int32"}))
            }
            Some("integer") => Made::new("i64", json!({"type": "integer", "format": "int64"})),
            Some("number") => Made::new("f64", json!({"type": "number", "format": "double"})),
            Some("boolean") => Made::new("bool", json!({"type": "boolean"})),
            Some("array") => match &schema.items {
                Some(items) if self.exact && is_conditions(items) => {
                    self.uses_metav1 = true;
                    Made {
                        rust: "Vec<metav1::Condition>".into(),
                        schema: derived::object(conditions_schema()),
                        schema_with: Some("rbuilder_runtime::conditions::schema"),
                        default: true,
                    }
                }
                Some(items) => {
                    let items = self.made(items, name);
                    Made::new(
                        format!("Vec<{}>", items.rust),
                        json!({"type": "array", "items": items.schema}),
                    )
                }
                None => {
                    self.uses_value = true;
                    Made::new("Vec<Value>", json!({"type": "array", "items": {}}))
                }
            },
            _ if !schema.properties.is_empty() => self.struct_made(schema, name),
            Some("object") if self.exact && schema.additional_properties.is_none() => {
                if schema.preserve_unknown_fields || schema.embedded_resource {
                    self.uses_value = true;
                    Made::new("Value", json!({}))
                } else {
                    // An object without properties (a Go struct without fields): a struct of
                    // none, which drops nothing the API server would keep.
                    self.struct_made(schema, name)
                }
            }
            Some("object") => {
                let value = match &schema.additional_properties {
                    Some(AdditionalProperties::Schema(values)) => self.made(values, name),
                    _ => {
                        self.uses_value = true;
                        Made::new("Value", json!(true))
                    }
                };
                self.uses_map = true;
                // A map of any values: schemars writes `additionalProperties: true`.
                let values = match value.rust == "Value" {
                    true => json!(true),
                    false => Value::Object(value.schema),
                };
                Made::new(
                    format!("BTreeMap<String, {}>", value.rust),
                    json!({"type": "object", "additionalProperties": values}),
                )
            }
            // No type: preserve-unknown-fields (any JSON), or a schema rbuilder does not know.
            _ => {
                self.uses_value = true;
                Made::new("Value", json!({}))
            }
        }
    }

    /// An object's struct as a type.
    fn struct_made(&mut self, schema: &Schema, name: &str) -> Made {
        let (rust, made) = self.object_made(schema, name, name, true);
        let default = self.has_default(&rust);
        let made = Made::new(rust, Value::Object(made));
        if default {
            made
        } else {
            made.without_default()
        }
    }

    /// Whether the struct or enum `name` implements `Default`.
    pub fn has_default(&self, name: &str) -> bool {
        self.structs
            .iter()
            .find(|s| s.name == name)
            .is_none_or(|s| s.default)
    }

    /// The struct of an object with properties, named `name` (made unique), its objects'
    /// structs named `<prefix><Property>`; with `share`, an existing struct of the same fields
    /// instead.
    pub fn object(&mut self, schema: &Schema, name: &str, prefix: &str, share: bool) -> String {
        self.object_made(schema, name, prefix, share).0
    }

    /// [`Types::object`], with the schema the struct makes (exact types).
    pub fn object_made(
        &mut self,
        schema: &Schema,
        name: &str,
        prefix: &str,
        share: bool,
    ) -> (String, Map<String, Value>) {
        let wanted = name;
        let name = self.unique(wanted);
        let order = self.taken.len();
        let prefix = if prefix == wanted {
            name.as_str()
        } else {
            prefix
        };
        let mut fields: Vec<Field> = Vec::new();
        let mut idents = BTreeSet::new();
        let mut properties = Map::new();
        let mut required = Vec::new();
        let mut default = true;
        for (wire, property) in &schema.properties {
            let made = self.made(property, &format!("{prefix}{}", pascal_case(wire)));
            let is_required = schema.required.contains(wire);
            default &= made.default || !is_required || property.nullable;
            let optional = !is_required || property.nullable;
            let mut field = Field {
                ident: unique_ident(&mut idents, field_ident(wire)),
                wire: wire.clone(),
                ty: made.rust.clone(),
                optional,
                flatten: false,
                vec_optional: false,
                doc: property.description.clone(),
                doc_lines: Vec::new(),
                attributes: Vec::new(),
            };
            if self.exact {
                // A status's conditions are a list left out when empty, as rbuilder's own
                // kinds have them (`Option` would make every controller unwrap it).
                let vec_optional = made.schema_with.is_some() && !is_required;
                field.vec_optional = vec_optional;
                field.optional = optional && !vec_optional;
                let mut node = property.node();
                if made.schema_with.is_some() {
                    // A status's conditions: controller-gen's items but for descriptions, which
                    // are the runtime's (k8s-openapi's wording of the same Go comments).
                    if let Some(items) = made.schema.get("items") {
                        node.insert("items".into(), items.clone());
                    }
                }
                let exact = derived::field(&made, &node, !is_required, field.optional);
                field.doc = derived::described(&exact.doc);
                field.doc_lines = exact.doc;
                field.attributes = exact.attributes;
                properties.insert(wire.clone(), Value::Object(exact.schema));
                if is_required {
                    required.push(wire.clone());
                }
            }
            fields.push(field);
        }
        // An object that keeps fields its schema does not list keeps them here.
        let others = match &schema.additional_properties {
            Some(AdditionalProperties::Schema(values)) => {
                Some(self.made(values, &format!("{name}Value")))
            }
            Some(AdditionalProperties::Allowed(true)) => Some(Made::new("Value", json!(true))),
            _ if schema.preserve_unknown_fields || schema.embedded_resource => {
                Some(Made::new("Value", json!(true)))
            }
            _ => None,
        };
        let mut made = Map::new();
        made.insert("type".into(), json!("object"));
        if let Some(value) = others {
            self.uses_map = true;
            self.uses_value |= value.rust == "Value";
            if value.rust != "Value" {
                made.insert("additionalProperties".into(), Value::Object(value.schema));
            } else if schema.properties.is_empty() {
                made.insert("additionalProperties".into(), json!(true));
            } else {
                // kube-derive keeps the unknown fields of an object with properties.
                made.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
            }
            fields.push(Field {
                ident: unique_ident(&mut idents, "other_fields".into()),
                wire: String::new(),
                ty: format!("BTreeMap<String, {}>", value.rust),
                optional: false,
                flatten: true,
                vec_optional: false,
                doc: Some("The fields the schema does not list, which it keeps.".into()),
                doc_lines: vec!["The fields the schema does not list, which it keeps.".into()],
                attributes: Vec::new(),
            });
        }
        if !properties.is_empty() {
            made.insert("properties".into(), Value::Object(properties));
        }
        if !required.is_empty() {
            made.insert("required".into(), json!(required));
        }
        let (doc_lines, attributes, made) = if self.exact {
            let mut wanted = schema.node();
            // The fields' own schemas, with their descriptions as the doc comments make them.
            for key in ["properties", "required"] {
                match made.get(key) {
                    Some(value) => wanted.insert(key.into(), value.clone()),
                    None => wanted.remove(key),
                };
            }
            let exact = derived::container(&made, &wanted);
            (exact.doc, exact.attributes, exact.schema)
        } else {
            (Vec::new(), Vec::new(), made)
        };
        let doc = if self.exact {
            derived::described(&doc_lines)
        } else {
            schema.description.clone()
        };
        // Another project's structs are the same if their fields are; exact ones must make the
        // same schema too.
        let key = match self.exact {
            true => shape_key(&fields, &doc, &attributes),
            false => shape_key(&fields, &None, &[]),
        };
        if share {
            if let Some(existing) = self.shapes.get(&key) {
                self.taken.remove(&name);
                return (existing.clone(), made);
            }
            self.shapes.insert(key, name.clone());
        }
        self.structs.push(Struct {
            order,
            name: name.clone(),
            doc,
            fields,
            doc_lines,
            attributes,
            variants: None,
            default,
        });
        (name, made)
    }

    /// A string with an `enum` of strings as a Rust enum named `name`, if each value makes a
    /// variant name of its own (`Very-High` -> `VeryHigh`).
    fn string_enum(&mut self, schema: &Schema, name: &str) -> Option<Made> {
        let values: Vec<String> = schema
            .keywords
            .get("enum")?
            .as_array()?
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<_>>()?;
        let mut variants: Vec<(String, String)> = Vec::new();
        for value in &values {
            let ident = pascal_case(value);
            let valid = ident.starts_with(|c: char| c.is_ascii_alphabetic()) && ident != "Self";
            if !valid || variants.iter().any(|(taken, _)| *taken == ident) {
                return None;
            }
            variants.push((ident, value.clone()));
        }
        if variants.is_empty() {
            return None;
        }
        // The CRD's default, if it is one of them, is the Rust default too.
        let default = schema
            .keywords
            .get("default")
            .and_then(Value::as_str)
            .and_then(|default| variants.iter().position(|(_, value)| value == default))
            .unwrap_or(0);
        let made = json!({"type": "string", "enum": values});
        let mut wanted = Map::new();
        if let Some(description) = &schema.description {
            wanted.insert("description".into(), json!(description));
        }
        for key in ["type", "enum"] {
            if let Some(value) = made.get(key) {
                wanted.insert(key.into(), value.clone());
            }
        }
        let exact = derived::container(&derived::object(made.clone()), &wanted);
        let mut made = derived::object(made);
        let doc = derived::described(&exact.doc);
        if let Some(doc) = &doc {
            made.insert("description".into(), json!(doc));
        }
        let key = format!("enum {values:?} {doc:?}");
        if let Some(existing) = self.shapes.get(&key) {
            return Some(Made::new(existing.clone(), Value::Object(made)));
        }
        let name = self.unique(name);
        self.shapes.insert(key, name.clone());
        let order = self.taken.len();
        self.structs.push(Struct {
            order,
            name: name.clone(),
            doc,
            fields: Vec::new(),
            doc_lines: exact.doc,
            attributes: Vec::new(),
            variants: Some(Variants { variants, default }),
            default: true,
        });
        Some(Made::new(name, Value::Object(made)))
    }
}

/// A type of k8s-openapi, which brings a description of its own.
fn with_description(mut made: Made) -> Made {
    made.schema
        .insert("description".into(), json!(TYPE_DESCRIPTION));
    made
}

/// What makes two structs the same.
fn shape_key(fields: &[Field], doc: &Option<String>, attributes: &[Attribute]) -> String {
    let fields: Vec<String> = fields
        .iter()
        .map(|f| {
            format!(
                "{}|{}|{}|{}|{}|{}|{:?}|{:?}",
                f.ident, f.wire, f.ty, f.optional, f.flatten, f.vec_optional, f.doc, f.attributes
            )
        })
        .collect();
    format!("{fields:?} {doc:?} {attributes:?}")
}

/// Whether an array's `items` are Kubernetes' `metav1.Condition`, as controller-gen writes it
/// (descriptions aside): the runtime's schema for conditions gives the same.
fn is_conditions(items: &Schema) -> bool {
    let Some(expected) = conditions_schema().get("items").cloned() else {
        return false;
    };
    let items = without_descriptions(Value::Object(items.node()));
    derived::same(Some(&items), Some(&without_descriptions(expected)))
}

/// `ident`, or `ident_2`, ... if the struct has a field of that name already.
fn unique_ident(taken: &mut BTreeSet<String>, ident: String) -> String {
    let mut name = ident.clone();
    let mut n = 1;
    while taken.contains(&name) {
        n += 1;
        name = match ident.strip_prefix("r#") {
            Some(raw) => format!("{raw}_{n}"),
            None => format!("{ident}_{n}"),
        };
    }
    taken.insert(name.clone());
    name
}
