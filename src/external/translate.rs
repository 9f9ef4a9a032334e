//! From a CRD version's structural schema to Rust types: one struct per object that has
//! properties, named by its path (`CertificateSpecPrivateKey`), `Option` for what is not
//! required, `Vec` for arrays, `BTreeMap` for maps, `IntOrString` for
//! x-kubernetes-int-or-string, `serde_json::Value` where the schema keeps unknown fields.
//! Enums stay `String` (lossless for any value the API server accepts), date-times too.
//! Structs with the same fields (Argo CD repeats `source` under spec, status and operation)
//! are written once.

use std::collections::{BTreeSet, HashMap};

use super::names::{field_ident, pascal_case};
use super::schema::{AdditionalProperties, Schema};

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
    pub doc: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Struct {
    /// When its name was chosen: a struct comes before the structs of its fields.
    pub order: usize,
    pub name: String,
    pub doc: Option<String>,
    pub fields: Vec<Field>,
}

/// The structs made so far, and the names taken.
#[derive(Default)]
pub struct Types {
    /// In the order they were finished (see `Struct::order` for the order to write them in).
    pub structs: Vec<Struct>,
    taken: BTreeSet<String>,
    /// A struct's fields (its identity) -> its name, to write each shape once.
    shapes: HashMap<Vec<FieldKey>, String>,
    /// Whether the types use `IntOrString`, `Value`, `BTreeMap` (for the imports).
    pub uses_int_or_string: bool,
    pub uses_value: bool,
    pub uses_map: bool,
}

type FieldKey = (String, String, String, bool, bool, Option<String>);

impl Types {
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
        if schema.int_or_string {
            self.uses_int_or_string = true;
            return "IntOrString".into();
        }
        match schema.type_.as_deref() {
            Some("string") => "String".into(),
            Some("integer") if schema.format.as_deref() == Some("int32") => "i32".into(),
            Some("integer") => "i64".into(),
            Some("number") => "f64".into(),
            Some("boolean") => "bool".into(),
            Some("array") => match &schema.items {
                Some(items) => format!("Vec<{}>", self.type_of(items, name)),
                None => {
                    self.uses_value = true;
                    "Vec<Value>".into()
                }
            },
            _ if !schema.properties.is_empty() => self.object(schema, name, name, true),
            Some("object") => {
                let value = match &schema.additional_properties {
                    Some(AdditionalProperties::Schema(values)) => self.type_of(values, name),
                    _ => {
                        self.uses_value = true;
                        "Value".into()
                    }
                };
                self.uses_map = true;
                format!("BTreeMap<String, {value}>")
            }
            // No type: preserve-unknown-fields (any JSON), or a schema rbuilder does not know.
            _ => {
                self.uses_value = true;
                "Value".into()
            }
        }
    }

    /// The struct of an object with properties, named `name` (made unique), its objects'
    /// structs named `<prefix><Property>`; with `share`, an existing struct of the same fields
    /// instead.
    pub fn object(&mut self, schema: &Schema, name: &str, prefix: &str, share: bool) -> String {
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
        for (wire, property) in &schema.properties {
            let ty = self.type_of(property, &format!("{prefix}{}", pascal_case(wire)));
            let required = schema.required.contains(wire) && !property.nullable;
            fields.push(Field {
                ident: unique_ident(&mut idents, field_ident(wire)),
                wire: wire.clone(),
                ty,
                optional: !required,
                flatten: false,
                doc: property.description.clone(),
            });
        }
        // An object that keeps fields its schema does not list keeps them here.
        let others = match &schema.additional_properties {
            Some(AdditionalProperties::Schema(values)) => {
                Some(self.type_of(values, &format!("{name}Value")))
            }
            Some(AdditionalProperties::Allowed(true)) => Some("Value".to_owned()),
            _ if schema.preserve_unknown_fields || schema.embedded_resource => {
                Some("Value".to_owned())
            }
            _ => None,
        };
        if let Some(value) = others {
            self.uses_map = true;
            self.uses_value |= value == "Value";
            fields.push(Field {
                ident: unique_ident(&mut idents, "other_fields".into()),
                wire: String::new(),
                ty: format!("BTreeMap<String, {value}>"),
                optional: false,
                flatten: true,
                doc: Some("The fields the schema does not list, which it keeps.".into()),
            });
        }
        let key: Vec<FieldKey> = fields
            .iter()
            .map(|f| {
                let (ident, wire, ty) = (f.ident.clone(), f.wire.clone(), f.ty.clone());
                (ident, wire, ty, f.optional, f.flatten, f.doc.clone())
            })
            .collect();
        if share {
            if let Some(existing) = self.shapes.get(&key) {
                self.taken.remove(&name);
                return existing.clone();
            }
            self.shapes.insert(key, name.clone());
        }
        self.structs.push(Struct {
            order,
            name: name.clone(),
            doc: schema.description.clone(),
            fields,
        });
        name
    }
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
