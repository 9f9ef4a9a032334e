//! One version of a project's own kind made from its CRD (a kubebuilder project's, whose CRD
//! controller-gen wrote from the Go types): the Rust types, which make the same schema through
//! kube-derive from then on (see `derived`), the CRD's version as kube-derive makes it from them
//! (what rbuilder writes until `make manifests` does), what of the CRD they cannot make, and
//! what the controller templates need to know of the API.
//!
//! kube-derive's CRD differs from controller-gen's by design in what changes nothing for the
//! API server: the root leaves out `apiVersion`, `kind` and `metadata` (which the API server
//! checks itself) and has a `title`; the status is `nullable` (kube-derive makes it an
//! `Option`); an int-or-string has no `anyOf: [{type: integer}, {type: string}]` (which says
//! what `x-kubernetes-int-or-string` says); bounds are floating-point numbers; `names` has no
//! `listKind` (the API server defaults it to the same `<Kind>List`); descriptions may be
//! worded differently. `comparable` takes these out, to compare the two.

use std::fmt::Write as _;

use anyhow::{Result, bail};
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::derived::{self, as_written, string_literal};
use super::render::{self, Root};
use super::schema::Schema;
use super::translate::Types;

/// What the types of one version cannot make of its CRD: where (`spec.items`), why, and what
/// to do instead (`{types}` stands for the file of the types).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unexpressed {
    pub path: String,
    pub why: String,
    pub instead: String,
}

/// A field of the spec or status, as the templates need to know it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FieldShape {
    /// The Rust field: `container_port`.
    pub ident: String,
    /// Its type without the `Option`: `i32`.
    pub ty: String,
    /// An `Option`.
    pub optional: bool,
}

/// What the controller templates need to know of a kind's API.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct ApiShape {
    /// The spec's fields, by their names in the API.
    pub spec: Vec<(String, FieldShape)>,
    /// The status's fields, by their names in the API; `None`: the kind has no status.
    pub status: Option<Vec<(String, FieldShape)>>,
    /// The status struct implements `Default`.
    pub status_default: bool,
}

impl ApiShape {
    pub fn spec_field(&self, wire: &str) -> Option<&FieldShape> {
        self.spec.iter().find(|(w, _)| w == wire).map(|(_, f)| f)
    }

    pub fn status_field(&self, wire: &str) -> Option<&FieldShape> {
        self.status
            .as_ref()?
            .iter()
            .find(|(w, _)| w == wire)
            .map(|(_, f)| f)
    }
}

/// One version of the kind, as Rust types.
#[derive(Debug, Clone)]
pub struct OwnTypes {
    /// The module's source (under the license header the caller adds).
    pub source: String,
    /// The CRD's version as kube-derive makes it from the module.
    pub version: Value,
    /// The CRD's `names` as kube-derive makes them.
    pub names: Value,
    pub unexpressed: Vec<Unexpressed>,
    pub shape: ApiShape,
    /// `shop.example.com/v1`, `Order`, and a spec valid for the schema, for a sample.
    api_version: String,
    kind: String,
    sample_spec: Value,
}

impl OwnTypes {
    /// The spec has fields it requires: an object with an empty spec is refused.
    pub fn requires_spec_fields(&self) -> bool {
        self.sample_spec
            .as_object()
            .is_some_and(|spec| !spec.is_empty())
    }

    /// A sample of the kind, as kubebuilder writes one, for a kind whose project had none: its
    /// required fields set to values the schema takes, as far as they can be made up (a
    /// `pattern` cannot: check the sample).
    pub fn sample(&self, project_name: &str) -> String {
        let spec = match &self.sample_spec {
            Value::Object(map) if !map.is_empty() => serde_saphyr::to_string(&self.sample_spec)
                .unwrap_or_default()
                .lines()
                .map(|line| format!("  {line}\n"))
                .collect(),
            _ => String::new(),
        };
        let spec = match spec.is_empty() {
            true => "# TODO(user): Add fields here\nspec: {}\n".to_owned(),
            false => format!("spec:\n{spec}"),
        };
        format!(
            "# Made by rbuilder from the kind's schema: set its fields as your objects have them.\n\
             apiVersion: {}\nkind: {}\nmetadata:\n  labels:\n    app.kubernetes.io/name: \
             {project_name}\n    app.kubernetes.io/managed-by: kustomize\n  name: {}-sample\n\
             {spec}",
            self.api_version,
            self.kind,
            self.kind.to_lowercase()
        )
    }
}

/// The CRD `crd` (a CustomResourceDefinition document, of the file `path` in the project) in
/// one version, `version`, as the module of its types.
pub fn types(crd: &Value, version: &str, path: &str) -> Result<OwnTypes> {
    let spec = &crd["spec"];
    let kind = spec["names"]["kind"].as_str().unwrap_or_default();
    let plural = spec["names"]["plural"].as_str().unwrap_or_default();
    let group = spec["group"].as_str().unwrap_or_default();
    let Some(entry) = spec["versions"]
        .as_array()
        .and_then(|versions| versions.iter().find(|v| v["name"] == version))
    else {
        bail!("the CRD of {kind} has no version {version}");
    };
    let mut unexpressed = Vec::new();
    let mut root = entry["schema"]["openAPIV3Schema"].clone();
    if !root.is_object() {
        bail!("the CRD of {kind} has no schema (openAPIV3Schema) in version {version}");
    }
    expressible(&mut root, "", &mut unexpressed);
    let root_schema: Schema = serde_json::from_value(root.clone())?;
    root_checks(&root, &root_schema, &mut unexpressed);
    let imported = ["BTreeMap", "IntOrString", "JsonSchema", "Quantity", "Value"];
    let derived = ["CustomResource", "Deserialize", "Serialize"];
    if imported.contains(&kind) || derived.contains(&kind) {
        bail!(
            "kind {kind} is named like a type its module imports; rename the kind, or write its \
             types by hand"
        );
    }

    let mut types = Types::exact();
    types.reserve(&[
        kind,
        "BTreeMap",
        "CustomResource",
        "Deserialize",
        "IntOrString",
        "JsonSchema",
        "Option",
        "Quantity",
        "Serialize",
        "String",
        "Value",
        "Vec",
    ]);
    let mut kube = vec![
        format!("group = {group:?}, version = {version:?}"),
        format!("kind = {kind:?}, plural = {plural:?}"),
    ];
    if let Some(singular) = spec["names"]["singular"].as_str()
        && singular != kind.to_lowercase()
    {
        kube.push(format!("singular = {singular:?}"));
    }
    if spec["scope"] == "Namespaced" {
        kube.push("namespaced".into());
    }
    for short in strings(&spec["names"]["shortNames"]) {
        kube.push(format!("shortname = {short:?}"));
    }
    for category in strings(&spec["names"]["categories"]) {
        kube.push(format!("category = {category:?}"));
    }

    let spec_name = format!("{kind}Spec");
    let spec_schema = root_schema
        .properties
        .get("spec")
        .cloned()
        .unwrap_or_else(|| {
            not(
                &mut unexpressed,
                "spec",
                "the CRD has none, and kube-derive's kinds always have one",
                "give every object a spec (spec: {}) before installing the new CRD",
            );
            Schema {
                type_: Some("object".into()),
                ..Schema::default()
            }
        });
    let (spec_struct, spec_made) = types.object_made(&spec_schema, &spec_name, &spec_name, false);
    let subresources = &entry["subresources"];
    let mut status_made = None;
    let mut status_struct = None;
    match root_schema.properties.get("status") {
        Some(status) => {
            let name = format!("{kind}Status");
            let (name, made) = types.object_made(status, &name, &name, false);
            kube.push(format!("status = {name:?}"));
            status_made = Some(made);
            status_struct = Some(name);
            if subresources.get("status").is_none() {
                not(
                    &mut unexpressed,
                    "status",
                    "the CRD has no status subresource, and kube-derive gives a kind with a \
                     status one: the status is then written through /status only",
                    "write the status with the controller's ctx.apply_status, which does",
                );
            }
        }
        None if subresources.get("status").is_some() => not(
            &mut unexpressed,
            "subresources.status",
            "the CRD has a status subresource but no status, and kube-derive gives the \
             subresource to a kind with a status only",
            "nothing: the kind has no status to write",
        ),
        None => {}
    }
    version_attributes(entry, &mut kube);
    let root_doc = root_schema
        .description
        .as_deref()
        .map(|d| derived::doc_lines(d).join("\n"))
        .and_then(|d| derived::described(&[d]));
    // Without a description, kube-derive would write one of its own ("Auto-generated ...").
    kube.push(format!(
        "doc = {}",
        string_literal(root_doc.as_deref().unwrap_or_default())
    ));
    let mut rules = Vec::new();
    for rule in root["x-kubernetes-validations"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let (expression, written, both) = kube_rule(rule);
        if both {
            not(
                &mut unexpressed,
                "x-kubernetes-validations",
                "kube-derive's kind takes a rule with a message or a messageExpression, not \
                 both: the rule keeps its message",
                "put the messageExpression back in a validating webhook's message",
            );
        }
        kube.push(format!("validation = {expression}"));
        rules.push(written);
    }
    kube.push(match types.has_default(&spec_struct) {
        true => "derive = \"Default\", derive = \"PartialEq\"".into(),
        false => "derive = \"PartialEq\"".into(),
    });

    // The root as kube-derive makes it.
    let mut properties = Map::new();
    properties.insert("spec".into(), Value::Object(spec_made));
    if let Some(mut status) = status_made {
        status.insert("nullable".into(), json!(true));
        properties.insert("status".into(), Value::Object(status));
    }
    let mut predicted = json!({
        "properties": properties,
        "required": ["spec"],
        "title": kind,
        "type": "object",
    });
    if let Some(doc) = &root_doc {
        predicted["description"] = json!(doc);
    }
    if !rules.is_empty() {
        predicted["x-kubernetes-validations"] = json!(rules);
    }
    let mut version_out = json!({
        "name": version,
        "schema": {"openAPIV3Schema": as_written(predicted)},
        "served": entry["served"] != false,
        "storage": entry["storage"] != false,
    });
    for key in [
        "additionalPrinterColumns",
        "selectableFields",
        "deprecated",
        "deprecationWarning",
    ] {
        if let Some(value) = entry.get(key) {
            version_out[key] = value.clone();
        }
    }
    let mut subresources_out = Map::new();
    if root_schema.properties.contains_key("status") {
        subresources_out.insert("status".into(), json!({}));
    }
    if let Some(scale) = subresources.get("scale") {
        subresources_out.insert("scale".into(), scale.clone());
    }
    if !subresources_out.is_empty() {
        version_out["subresources"] = Value::Object(subresources_out);
    }

    let shape = shape(&types, &spec_struct, status_struct.as_deref());
    let root = Root {
        spec_struct,
        kube,
        status_alias: None,
    };
    let header = [
        format!(
            "The `{kind}` kind (`{group}/{version}`), with the API its CRD had in the kubebuilder \
             project it was migrated from ({path}): `make manifests` writes the same schema from \
             these types. Edit them to change the API, then run `make manifests`."
        ),
        String::new(),
        "An optional field is an `Option` whose schema is its type's (`#[schemars(with = ...)]`, \
         which keeps kube-derive from making it nullable); `#[schemars(extend(...))]` writes what \
         schemars has no attribute for, as the CRD has it."
            .to_owned(),
    ]
    .iter()
    .map(|paragraph| wrapped(paragraph, "//! "))
    .collect::<String>();
    let mut names = json!({
        "kind": kind,
        "plural": plural,
        "singular": spec["names"]["singular"].as_str().map_or_else(|| kind.to_lowercase(), str::to_owned),
    });
    for key in ["shortNames", "categories"] {
        if let Some(list) = spec["names"]
            .get(key)
            .filter(|l| l.as_array().is_some_and(|l| !l.is_empty()))
        {
            names[key] = list.clone();
        }
    }
    Ok(OwnTypes {
        source: render::module(&header, &types, &root),
        version: version_out,
        names,
        unexpressed,
        shape,
        api_version: format!("{group}/{version}"),
        kind: kind.to_owned(),
        sample_spec: example(&spec_schema),
    })
}

/// A value `schema` takes, of what can be made up: its default, its first `enum` value, or
/// the smallest value of its type with its required properties.
fn example(schema: &Schema) -> Value {
    if let Some(value) = schema
        .keywords
        .get("default")
        .or_else(|| schema.keywords.get("enum").and_then(|e| e.get(0)))
    {
        return value.clone();
    }
    let number = |key: &str| schema.keywords.get(key).and_then(Value::as_f64);
    match schema.type_.as_deref() {
        Some("string") => {
            let length = number("minLength").unwrap_or(0.0) as usize;
            json!("x".repeat(length.max(1)))
        }
        Some("integer") => json!(number("minimum").unwrap_or(0.0).max(1.0) as i64),
        Some("number") => json!(number("minimum").unwrap_or(0.0).max(1.0)),
        Some("boolean") => json!(false),
        Some("array") => {
            let items = number("minItems").unwrap_or(0.0) as usize;
            let item = schema.items.as_deref().map(example).unwrap_or(Value::Null);
            json!(vec![item; items])
        }
        _ if schema.int_or_string => json!(1),
        _ => {
            let mut object = Map::new();
            for required in &schema.required {
                if let Some(property) = schema.properties.get(required) {
                    object.insert(required.clone(), example(property));
                }
            }
            Value::Object(object)
        }
    }
}

/// `text` as comment lines starting with `prefix`, words wrapped at rustfmt's 100 columns.
fn wrapped(text: &str, prefix: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && prefix.len() + line.len() + 1 + word.len() > 100 {
            let _ = writeln!(out, "{prefix}{line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    let _ = writeln!(out, "{}", format!("{prefix}{line}").trim_end());
    out
}

/// What kube-derive cannot make of the root of a version's schema: apiVersion, kind and metadata
/// are the API server's, spec and status the kind's, nothing else.
fn root_checks(root: &Value, root_schema: &Schema, unexpressed: &mut Vec<Unexpressed>) {
    // The root: apiVersion, kind and metadata are the API server's; spec and status are the
    // kind's.
    let known = ["apiVersion", "kind", "metadata", "spec", "status"];
    for property in root_schema.properties.keys() {
        if !known.contains(&property.as_str()) {
            not(
                unexpressed,
                property,
                "kube-derive's kinds have spec and status beside the object's metadata only",
                "move it under spec, in the API and its clients",
            );
        }
    }
    if let Some(metadata) = root_schema.properties.get("metadata") {
        let mut node = metadata.node();
        node.remove("description");
        if Value::Object(node) != json!({"type": "object"}) {
            not(
                unexpressed,
                "metadata",
                "kube-derive's kinds take the object's metadata as Kubernetes defines it",
                "check the metadata in a validating webhook",
            );
        }
    }
    let root_keys = [
        "type",
        "description",
        "properties",
        "required",
        "x-kubernetes-validations",
    ];
    for key in root.as_object().map(|o| o.keys()).into_iter().flatten() {
        if !root_keys.contains(&key.as_str()) {
            not(
                unexpressed,
                key,
                "kube-derive's kinds have no such keyword at the root of the schema",
                "write it as a CEL rule of the kind (#[kube(validation = ...)] in {types}), or \
                 check it in a validating webhook",
            );
        }
    }
    if !root_schema.required.iter().any(|r| r == "spec") {
        not(
            unexpressed,
            "spec",
            "the CRD does not require it, and kube-derive's kinds always have one: an object \
             without spec is refused at its next update, and the operator cannot read it",
            "give every object a spec (spec: {}) before installing the new CRD",
        );
    }
    if root_schema.required.iter().any(|r| r == "status") {
        not(
            unexpressed,
            "status",
            "the CRD requires it, and kube-derive's kinds never do",
            "nothing for the objects stored; check in a validating webhook that new ones have one",
        );
    }
}

/// Lists `path` as what the types cannot make, why, and what to do instead.
fn not(unexpressed: &mut Vec<Unexpressed>, path: &str, why: &str, instead: &str) {
    unexpressed.push(Unexpressed {
        path: path.to_owned(),
        why: why.to_owned(),
        instead: instead.to_owned(),
    });
}

/// The `#[kube(...)]` items of what a version has besides its schema: its scale subresource,
/// printer columns, selectable fields, whether it is served and stored, its deprecation.
fn version_attributes(entry: &Value, kube: &mut Vec<String>) {
    let subresources = &entry["subresources"];
    if let Some(scale) = subresources.get("scale") {
        let mut items = vec![
            format!(
                "spec_replicas_path = {}",
                string_literal(scale["specReplicasPath"].as_str().unwrap_or_default())
            ),
            format!(
                "status_replicas_path = {}",
                string_literal(scale["statusReplicasPath"].as_str().unwrap_or_default())
            ),
        ];
        if let Some(selector) = scale["labelSelectorPath"].as_str() {
            items.push(format!(
                "label_selector_path = {}",
                string_literal(selector)
            ));
        }
        kube.push(format!("scale({})", items.join(", ")));
    }
    // As kube-derive's JSON form, one string a column: clippy's duplicated_attributes would
    // take two columns of one type (`type_ = "string"` twice) for a repeated attribute.
    for column in entry["additionalPrinterColumns"]
        .as_array()
        .into_iter()
        .flatten()
    {
        kube.push(format!("printcolumn = {}", raw_string(&column.to_string())));
    }
    for field in entry["selectableFields"].as_array().into_iter().flatten() {
        let path = field["jsonPath"].as_str().unwrap_or_default();
        kube.push(format!("selectable = {}", string_literal(path)));
    }
    if entry["served"] == false {
        kube.push("served = false".into());
    }
    if entry["storage"] == false {
        kube.push("storage = false".into());
    }
    if entry["deprecated"] == true {
        match entry["deprecationWarning"].as_str() {
            Some(warning) => kube.push(format!("deprecated = {}", string_literal(warning))),
            None => kube.push("deprecated".into()),
        }
    }
}

/// A raw string literal of `s` (JSON, which holds quotes).
fn raw_string(s: &str) -> String {
    let mut hashes = String::from("#");
    while s.contains(&format!("\"{hashes}")) {
        hashes.push('#');
    }
    format!("r{hashes}\"{s}\"{hashes}")
}

/// The strings of a JSON list.
fn strings(value: &Value) -> impl Iterator<Item = &str> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// A CEL rule of the root as kube-derive's `validation` attribute takes it, and as the CRD then
/// has it; and whether the rule had both a message and a messageExpression, of which it keeps
/// the message.
fn kube_rule(rule: &Value) -> (String, Value, bool) {
    let mut expression = format!(
        "kube::core::Rule::new({})",
        string_literal(rule["rule"].as_str().unwrap_or_default())
    );
    let mut written = rule.clone();
    let both = rule["message"].is_string() && rule["messageExpression"].is_string();
    if both && let Some(rule) = written.as_object_mut() {
        rule.remove("messageExpression");
    }
    match (rule["message"].as_str(), rule["messageExpression"].as_str()) {
        (Some(message), _) => {
            let _ = write!(expression, ".message({})", string_literal(message));
        }
        (None, Some(message)) => {
            let _ = write!(
                expression,
                ".message(kube::core::Message::Expression({}.into()))",
                string_literal(message)
            );
        }
        (None, None) => {}
    }
    if let Some(reason) = rule["reason"].as_str() {
        let _ = write!(expression, ".reason(kube::core::Reason::{reason})");
    }
    if let Some(path) = rule["fieldPath"].as_str() {
        let _ = write!(expression, ".field_path({})", string_literal(path));
    }
    if let Some(optional) = rule["optionalOldSelf"].as_bool() {
        let _ = write!(expression, ".optional_old_self({optional})");
    }
    (expression, written, both)
}

/// Takes out of `node` (at `path`) what kube-derive cannot make, listing it in `dropped`: an
/// `anyOf` or `oneOf` (its structural rewriting hoists their types and properties), but the
/// `anyOf` of an int-or-string, which says what `x-kubernetes-int-or-string` says.
fn expressible(node: &mut Value, path: &str, dropped: &mut Vec<Unexpressed>) {
    let Some(map) = node.as_object_mut() else {
        return;
    };
    let int_or_string = json!([{"type": "integer"}, {"type": "string"}]);
    if map.get("x-kubernetes-int-or-string") == Some(&json!(true))
        && map.get("anyOf") == Some(&int_or_string)
    {
        map.remove("anyOf");
    }
    for key in ["anyOf", "oneOf"] {
        if map.remove(key).is_some() {
            let why = format!("its {key}: kube-derive's schemas have none");
            let instead = "write it as a CEL rule (#[schemars(extend(\"x-kubernetes-validations\" \
                           = ...))] in {types}), or check it in a validating webhook";
            not(dropped, path.trim_start_matches('.'), &why, instead);
        }
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            expressible(property, &format!("{path}.{name}"), dropped);
        }
    }
    if let Some(items) = map.get_mut("items") {
        expressible(items, &format!("{path}[*]"), dropped);
    }
    if let Some(values) = map.get_mut("additionalProperties") {
        expressible(values, &format!("{path}.*"), dropped);
    }
}

/// What the templates need to know of the spec and status the types have.
fn shape(types: &Types, spec: &str, status: Option<&str>) -> ApiShape {
    let fields = |name: &str| {
        types
            .structs
            .iter()
            .find(|s| s.name == name)
            .map(|s| {
                s.fields
                    .iter()
                    .filter(|f| !f.flatten)
                    .map(|f| {
                        let shape = FieldShape {
                            ident: f.ident.clone(),
                            ty: f.ty.clone(),
                            optional: f.optional,
                        };
                        (f.wire.clone(), shape)
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    ApiShape {
        spec: fields(spec),
        status: status.map(fields),
        status_default: status.is_some_and(|s| types.has_default(s)),
    }
}

#[cfg(test)]
mod tests;
