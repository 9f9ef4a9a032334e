//! The types of a project's own kind made from its CRD (a kubebuilder project's, migrated):
//! from then on `make manifests` writes the CRD from these types, through kube-derive and
//! schemars, so each node of the types must make the very node of the CRD it comes from.
//!
//! A Rust type makes a schema of its own ([`Made`]: `i32` is an integer of format int32, a
//! struct an object with its fields); a field's doc comment gives the description; attributes
//! make up the rest ([`Attribute`]): `with` on an `Option` (whose schema kube-derive would
//! otherwise make `nullable`, which controller-gen does not write for an optional field),
//! schemars' `length`, `range` and `regex` for bounds and patterns, and `extend` for every
//! other keyword, set or (`null`) removed: kube-derive reads the schema into Kubernetes'
//! JSONSchemaProps, where a keyword that is `null` is no keyword. What makes the types is what
//! predicts their CRD: [`field`] and [`container`] return the schema the attributes make.

use serde_json::{Map, Value, json};

/// The description a type of k8s-openapi brings (`Time`, `Quantity`, `IntOrString`): never a
/// CRD's, so that a field without a description of its own removes it.
pub const TYPE_DESCRIPTION: &str = "(the description of the k8s-openapi type)";

/// The pattern controller-gen writes for a `resource.Quantity`: such an int-or-string node
/// is a k8s-openapi `Quantity`.
pub const QUANTITY_PATTERN: &str = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$";

/// rustfmt's default line width.
const MAX_WIDTH: usize = 100;

/// A Rust type and the schema schemars and kube-derive make of it, before a field's doc
/// comment and attributes.
#[derive(Debug, Clone)]
pub struct Made {
    /// `i32`, `Vec<OrderSpecItems>`, `metav1::Time`.
    pub rust: String,
    pub schema: Map<String, Value>,
    /// `#[schemars(schema_with = ...)]`: the type's schema comes from this function (a status's
    /// conditions, from the runtime's `conditions::schema`).
    pub schema_with: Option<&'static str>,
    /// The type implements `Default` (`metav1::Time` does not, nor a struct holding one).
    pub default: bool,
}

impl Made {
    pub fn new(rust: impl Into<String>, schema: Value) -> Self {
        Self {
            rust: rust.into(),
            schema: object(schema),
            schema_with: None,
            default: true,
        }
    }

    /// A type without `Default`.
    pub fn without_default(self) -> Self {
        Self {
            default: false,
            ..self
        }
    }

    fn is_int_or_string(&self) -> bool {
        self.schema.get("x-kubernetes-int-or-string") == Some(&json!(true))
    }
}

/// `value` as a JSON object (an empty one if it is not).
pub fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// One attribute of a field or a struct.
#[derive(Debug, Clone, PartialEq)]
pub enum Attribute {
    /// `#[path(item, item)]`, laid out as rustfmt lays out a meta list.
    Meta { path: String, items: Vec<String> },
    /// Written as it is: rustfmt leaves alone an attribute that is not a meta list, such as
    /// schemars' `extend("key" = value)`.
    Verbatim(String),
}

impl Attribute {
    pub fn meta(path: &str, items: Vec<String>) -> Self {
        Self::Meta {
            path: path.to_owned(),
            items,
        }
    }

    /// The attribute's lines at `indent`, as rustfmt leaves them: on one line if it fits in 100
    /// columns and each list of two items or more in rustfmt's 70 (`attr_fn_like_width`), else
    /// one item a line (a lone list item opens on the first line, as rustfmt overflows a last
    /// argument).
    pub fn lines(&self, indent: &str) -> String {
        let (path, items) = match self {
            Attribute::Verbatim(text) => return format!("{indent}{text}\n"),
            Attribute::Meta { path, items } => (path, items),
        };
        let one_line = format!("{indent}#[{path}({})]", items.join(", "));
        if one_line.len() <= MAX_WIDTH && narrow(items) {
            return format!("{one_line}\n");
        }
        let inner = format!("{indent}    ");
        if let [only] = items.as_slice()
            && let Some((head, args)) = nested(only)
        {
            let args = split_top_level(args);
            return format!(
                "{indent}#[{path}({head}(\n{inner}{}\n{indent}))]\n",
                args.join(&format!(",\n{inner}"))
            );
        }
        format!(
            "{indent}#[{path}(\n{inner}{}\n{indent})]\n",
            items.join(&format!(",\n{inner}"))
        )
    }
}

/// rustfmt's `attr_fn_like_width`: an attribute's list of two items or more that is wider goes
/// one item a line.
const ATTR_FN_LIKE_WIDTH: usize = 70;

/// Whether every list of two items or more among `items` (and the lists they hold) is within
/// [`ATTR_FN_LIKE_WIDTH`].
fn narrow(items: &[String]) -> bool {
    (items.len() < 2 || items.join(", ").len() <= ATTR_FN_LIKE_WIDTH)
        && items
            .iter()
            .filter_map(|item| nested(item))
            .all(|(_, args)| narrow(&split_top_level(args)))
}

/// `head(args)`, a meta list within a list: its head and arguments.
fn nested(item: &str) -> Option<(&str, &str)> {
    let (head, rest) = item.split_once('(')?;
    let args = rest.strip_suffix(')')?;
    head.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
        .then_some((head, args))
}

/// The arguments of a meta list, split at its top-level commas (none in a string).
fn split_top_level(args: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let (mut depth, mut in_string, mut escaped) = (0, false, false);
    let mut current = String::new();
    for c in args.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '(' | '[' | '{' if !in_string => depth += 1,
            ')' | ']' | '}' if !in_string => depth -= 1,
            ',' if !in_string && depth == 0 => {
                parts.push(current.trim().to_owned());
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    if !current.trim().is_empty() {
        parts.push(current.trim().to_owned());
    }
    parts
}

/// A Rust string literal of `s`: raw when it holds backslashes (a pattern reads as written).
pub fn string_literal(s: &str) -> String {
    if s.contains('\\') && !s.contains(['\n', '\r', '\t']) {
        let mut hashes = String::new();
        while s.contains(&format!("\"{hashes}")) {
            hashes.push('#');
        }
        return format!("r{hashes}\"{s}\"{hashes}");
    }
    format!("{s:?}")
}

/// `value` as the tokens of serde_json's `json!` macro, which schemars' `extend` takes.
pub fn json_tokens(value: &Value) -> String {
    match value {
        Value::String(s) => string_literal(s),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(json_tokens).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", string_literal(k), json_tokens(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        other => other.to_string(),
    }
}

/// The doc comment lines that make `description`, as close to it as a doc comment may be:
/// no trailing spaces or tabs (rustfmt and clippy), Markdown code fences marked as text and
/// indented code blocks outdented, so that rustdoc takes no description for a doctest, and a
/// first line that would be a heading (schemars makes it a title) escaped.
pub fn doc_lines(description: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_fence = false;
    let mut after_blank = true;
    for raw in description.trim().lines() {
        let mut line = raw.replace('\t', "    ").trim_end().to_owned();
        if line.trim_start().starts_with("```") {
            if !in_fence {
                line = format!("{}text", line.trim_end_matches(|c: char| c != '`'));
            }
            in_fence = !in_fence;
        } else if !in_fence && after_blank && line.starts_with("    ") {
            line = format!("   {}", line.trim_start());
        }
        after_blank = line.is_empty();
        lines.push(line);
    }
    if in_fence {
        lines.push("```".to_owned());
    }
    if let Some(first) = lines.first_mut()
        && first.starts_with('#')
    {
        first.insert(0, '\\');
    }
    lines
}

/// The description schemars makes of doc comment `lines` (each written `/// {line}`): the
/// lines joined, trimmed.
pub fn described(lines: &[String]) -> Option<String> {
    let text = lines.join("\n");
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// A field's doc comment, and the attributes that make the field's schema `wanted` from its
/// type `made`. `optional`: the field is an `Option` (or a list left out when empty).
pub struct FieldSchema {
    pub doc: Vec<String>,
    pub attributes: Vec<Attribute>,
    /// The schema the field gets: `wanted`, but for a reworded description.
    pub schema: Map<String, Value>,
}

/// The validation keywords schemars' own attributes write: `(keyword, attribute, argument,
/// the JSON type it applies to)`.
const NATIVE: &[(&str, &str, &str, &str)] = &[
    ("minLength", "length", "min", "string"),
    ("maxLength", "length", "max", "string"),
    ("minItems", "length", "min", "array"),
    ("maxItems", "length", "max", "array"),
    ("minimum", "range", "min", "number"),
    ("maximum", "range", "max", "number"),
    ("pattern", "regex", "pattern", "string"),
];

/// Whether a schema's `type` is `json_type` (an integer is a number too, as for schemars).
fn has_type(schema: &Map<String, Value>, json_type: &str) -> bool {
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => json_type == "number" || json_type == "integer",
        Some(t) => t == json_type,
        None => false,
    }
}

/// schemars' validation attributes (`length(min = 1)`, `range(max = 5)`,
/// `regex(pattern = ...)`) for the keywords of `set` it can write on a schema like `base`;
/// they are taken out of `set`.
fn native(set: &mut Map<String, Value>, base: &Map<String, Value>) -> Vec<String> {
    let mut attributes: Vec<(&str, Vec<String>)> = Vec::new();
    for (keyword, attribute, argument, json_type) in NATIVE {
        let Some(value) = set.get(*keyword) else {
            continue;
        };
        let literal = match value {
            Value::Number(n) if *attribute != "regex" => n.to_string(),
            Value::String(s) if *attribute == "regex" => string_literal(s),
            _ => continue,
        };
        if !has_type(base, json_type) {
            continue;
        }
        set.remove(*keyword);
        let item = format!("{argument} = {literal}");
        match attributes.iter_mut().find(|(a, _)| a == attribute) {
            Some((_, items)) => items.push(item),
            None => attributes.push((attribute, vec![item])),
        }
    }
    attributes
        .into_iter()
        .map(|(attribute, items)| format!("{attribute}({})", items.join(", ")))
        .collect()
}

/// What `schema` lacks or has differently from `wanted` (`null`: a keyword to remove), but
/// the description.
fn difference(schema: &Map<String, Value>, wanted: &Map<String, Value>) -> Map<String, Value> {
    let mut set = Map::new();
    for (key, value) in wanted {
        if key != "description" && !same(schema.get(key), Some(value)) {
            set.insert(key.clone(), value.clone());
        }
    }
    for key in schema.keys() {
        if key != "description" && !wanted.contains_key(key) {
            set.insert(key.clone(), Value::Null);
        }
    }
    set
}

/// Whether two keyword values are the same for Kubernetes: numbers by value (`0` and `0.0`).
pub fn same(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(Value::Number(a)), Some(Value::Number(b))) => a.as_f64() == b.as_f64(),
        (Some(Value::Array(a)), Some(Value::Array(b))) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(Some(a), Some(b)))
        }
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            a.len() == b.len() && a.iter().all(|(k, v)| same(Some(v), b.get(k)))
        }
        (a, b) => a == b,
    }
}

/// The description part of a schema: the doc comment that makes `wanted`'s, and whether the
/// type's own (in `made`) must go.
fn description(made: &Map<String, Value>, wanted: &Map<String, Value>) -> (Vec<String>, bool) {
    match wanted.get("description").and_then(Value::as_str) {
        Some(text) => (doc_lines(text), false),
        None => (Vec::new(), made.contains_key("description")),
    }
}

/// The field of type `made` whose schema is to be `wanted`: its doc comment, attributes and
/// resulting schema. `optional`: the schema does not require it; `option`: it is an
/// `Option<made.rust>` (`with` keeps its schema the type's), where a list left out when empty
/// (a status's conditions) is not.
pub fn field(
    made: &Made,
    wanted: &Map<String, Value>,
    optional: bool,
    option: bool,
) -> FieldSchema {
    let mut schema = made.schema.clone();
    // kube-derive makes an int-or-string field that is not required `nullable`, unless the
    // field's schema names `nullable` itself.
    if optional && made.is_int_or_string() && !wanted.contains_key("nullable") {
        schema.insert("nullable".into(), json!(true));
    }
    let (doc, drop_description) = description(&schema, wanted);
    let mut set = difference(&schema, wanted);
    if drop_description {
        set.insert("description".into(), Value::Null);
    }
    let mut items = Vec::new();
    if let Some(function) = made.schema_with {
        items.push(format!("schema_with = {}", string_literal(function)));
    } else if option {
        items.push(format!("with = {}", string_literal(&made.rust)));
    }
    items.extend(native(&mut set, &schema));
    // A list's items, or a map's values, that differ: schemars' `inner` for bounds and
    // patterns of scalar items, else the whole node as the CRD has it.
    for key in ["items", "additionalProperties"] {
        let (Some(Value::Object(inner)), Some(Value::Object(base))) =
            (set.get(key), schema.get(key))
        else {
            continue;
        };
        let mut inner_set = difference(base, inner);
        let described_same = same(base.get("description"), inner.get("description"));
        let validations = native(&mut inner_set, base);
        if key == "items" && inner_set.is_empty() && described_same && !validations.is_empty() {
            items.push(format!("inner({})", validations.join(", ")));
            set.remove(key);
        }
    }
    let mut attributes = Vec::new();
    if !items.is_empty() {
        attributes.push(Attribute::meta("schemars", items));
    }
    for (key, value) in &set {
        attributes.push(Attribute::Verbatim(format!(
            "#[schemars(extend({} = {}))]",
            string_literal(key),
            json_tokens(value)
        )));
    }
    let mut result = wanted.clone();
    match described(&doc) {
        Some(text) => {
            result.insert("description".into(), json!(text));
        }
        None => {
            result.remove("description");
        }
    }
    FieldSchema {
        doc,
        attributes,
        schema: result,
    }
}

/// The container attributes that make a struct's (or an enum's) schema `wanted`, given the
/// schema `made` of its fields and doc comment; returns them with the struct's doc comment and
/// resulting schema.
pub fn container(made: &Map<String, Value>, wanted: &Map<String, Value>) -> FieldSchema {
    let (doc, _) = description(&Map::new(), wanted);
    let set = difference(made, wanted);
    let attributes = set
        .iter()
        .map(|(key, value)| {
            Attribute::Verbatim(format!(
                "#[schemars(extend({} = {}))]",
                string_literal(key),
                json_tokens(value)
            ))
        })
        .collect();
    let mut result = wanted.clone();
    match described(&doc) {
        Some(text) => {
            result.insert("description".into(), json!(text));
        }
        None => {
            result.remove("description");
        }
    }
    FieldSchema {
        doc,
        attributes,
        schema: result,
    }
}

/// `schema` as Kubernetes' JSONSchemaProps writes it: `minimum`, `maximum` and `multipleOf`
/// are floating-point numbers there (`0.0`), at every depth.
pub fn as_written(schema: Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| {
                    let value = match (key.as_str(), &value) {
                        ("minimum" | "maximum" | "multipleOf", Value::Number(n)) => {
                            n.as_f64().map_or(value.clone(), |f| json!(f))
                        }
                        ("properties" | "patternProperties" | "definitions", Value::Object(m)) => {
                            Value::Object(
                                m.iter()
                                    .map(|(k, v)| (k.clone(), as_written(v.clone())))
                                    .collect(),
                            )
                        }
                        ("default" | "enum" | "example", _) => value,
                        _ => as_written(value),
                    };
                    (key, value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(as_written).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_become_doc_comments_rustdoc_tests_nothing_of() {
        assert_eq!(doc_lines("a\n\nb  \n\tc"), ["a", "", "b", "    c"]);
        assert_eq!(
            doc_lines("x\n\n    code\n```\nfenced\n```"),
            ["x", "", "   code", "```text", "fenced", "```"]
        );
        assert_eq!(doc_lines("# Title"), ["\\# Title"]);
        assert_eq!(described(&doc_lines("  a\nb  ")), Some("a\nb".into()));
        assert_eq!(described(&[]), None);
    }

    #[test]
    fn an_optional_field_keeps_its_types_schema_and_gets_what_it_lacks() {
        let made = Made::new("i32", json!({"type": "integer", "format": "int32"}));
        let wanted = object(json!({
            "type": "integer", "format": "int32", "minimum": 0, "maximum": 10,
            "default": 1, "description": "size",
        }));
        let field = field(&made, &wanted, true, true);
        assert_eq!(field.doc, ["size"]);
        assert_eq!(
            field.attributes,
            [
                Attribute::meta(
                    "schemars",
                    vec!["with = \"i32\"".into(), "range(min = 0, max = 10)".into()]
                ),
                Attribute::Verbatim("#[schemars(extend(\"default\" = 1))]".into()),
            ]
        );
        assert_eq!(field.schema, wanted);
    }

    #[test]
    fn what_a_type_has_and_the_crd_has_not_is_removed() {
        let made = Made::new("i64", json!({"type": "integer", "format": "int64"}));
        let wanted = object(json!({"type": "integer"}));
        let integer = field(&made, &wanted, false, false);
        assert_eq!(
            integer.attributes,
            [Attribute::Verbatim(
                "#[schemars(extend(\"format\" = null))]".into()
            )]
        );
        // An optional quantity, which kube-derive would make nullable.
        let mut made = Made::new("Quantity", json!({"x-kubernetes-int-or-string": true}));
        made.schema
            .insert("description".into(), json!(TYPE_DESCRIPTION));
        let wanted =
            object(json!({"x-kubernetes-int-or-string": true, "pattern": QUANTITY_PATTERN}));
        let quantity = field(&made, &wanted, true, true);
        let extends: Vec<String> = quantity.attributes[1..]
            .iter()
            .map(|a| a.lines(""))
            .collect();
        assert_eq!(
            extends,
            [
                "#[schemars(extend(\"description\" = null))]\n".to_owned(),
                "#[schemars(extend(\"nullable\" = null))]\n".to_owned(),
                format!("#[schemars(extend(\"pattern\" = r\"{QUANTITY_PATTERN}\"))]\n"),
            ]
        );
    }

    #[test]
    fn attributes_are_laid_out_as_rustfmt_does() {
        let short = Attribute::meta("schemars", vec!["with = \"i32\"".into()]);
        assert_eq!(short.lines("    "), "    #[schemars(with = \"i32\")]\n");
        let long = Attribute::meta(
            "schemars",
            vec![format!("regex(pattern = \"{}\")", "x".repeat(90))],
        );
        assert_eq!(
            long.lines("    "),
            format!(
                "    #[schemars(regex(\n        pattern = \"{}\"\n    ))]\n",
                "x".repeat(90)
            )
        );
        let many = Attribute::meta(
            "schemars",
            vec![
                format!("with = \"{}\"", "X".repeat(80)),
                "length(min = 1)".into(),
            ],
        );
        assert_eq!(
            many.lines(""),
            format!(
                "#[schemars(\n    with = \"{}\",\n    length(min = 1)\n)]\n",
                "X".repeat(80)
            )
        );
        assert_eq!(
            json_tokens(&json!({"rule": "a\\b", "n": [1, null]})),
            "{\"n\": [1, null], \"rule\": r\"a\\b\"}"
        );
        assert_eq!(string_literal("say \"x\\y\""), "r#\"say \"x\\y\"\"#");
    }

    /// rustfmt leaves the attributes as [`Attribute::lines`] lays them out, for lists and names of
    /// every length around its limits (100 columns, 70 for a list's items).
    #[test]
    fn rustfmt_keeps_the_attributes_as_laid_out() {
        use std::io::Write as _;
        use std::process::{Command, Stdio};

        let mut source = String::from("pub struct S {\n");
        let mut root = String::new();
        for n in (20..95).step_by(3) {
            let name = "x".repeat(n);
            let column = Attribute::meta(
                "kube",
                vec![format!(
                    "printcolumn = r#\"{{\"jsonPath\":\".{name}\",\"name\":\"Age\"}}\"#"
                )],
            );
            root.push_str(&column.lines(""));
            let scale = Attribute::meta(
                "kube",
                vec![format!(
                    "scale(spec_replicas_path = \".{name}\", status_replicas_path = \".x\")"
                )],
            );
            root.push_str(&scale.lines(""));
            let rename = Attribute::meta("serde", vec![format!("rename = \"{name}\"")]);
            let with = Attribute::meta(
                "schemars",
                vec![
                    format!("with = \"{name}\""),
                    "range(min = 1, max = 5)".into(),
                ],
            );
            let pattern = Attribute::meta("schemars", vec![format!("regex(pattern = \"{name}\")")]);
            for attribute in [rename, with, pattern] {
                source.push_str(&attribute.lines("    "));
            }
            source.push_str(&format!("    pub f{n}: i32,\n"));
        }
        source.push_str("}\n");
        let source = format!("{root}{source}");
        let mut child = Command::new("rustfmt")
            .args(["--edition", "2024", "--emit", "stdout", "--quiet"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("rustfmt runs (rustup component add rustfmt)");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(source.as_bytes()).expect("write");
        drop(stdin);
        let out = child.wait_with_output().expect("rustfmt");
        assert_eq!(String::from_utf8_lossy(&out.stdout), source);
    }

    #[test]
    fn bounds_are_floats_as_kubernetes_writes_them() {
        let written = as_written(json!({"properties": {"minimum": {"minimum": 1, "default": 2}}}));
        assert_eq!(
            written,
            json!({"properties": {"minimum": {"minimum": 1.0, "default": 2}}})
        );
    }
}
