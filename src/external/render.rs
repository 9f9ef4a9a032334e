//! The Rust source of the types, laid out as rustfmt lays it out (the golden test checks it),
//! so that a project stays `cargo fmt`-clean without running rustfmt.

use std::fmt::Write as _;

use super::derived::Attribute;
use super::names::unraw;
use super::translate::{Field, Struct, Types};

/// rustfmt's default line width.
const MAX_WIDTH: usize = 100;

const DERIVES: &str = "#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]";

/// The derives of exact types (see `translate`), which make the CRD: structs, and string enums.
const EXACT_DERIVES: &str =
    "#[derive(Serialize, Deserialize, JsonSchema, Clone, Debug, Default, PartialEq)]";
const ENUM_DERIVES: &str =
    "#[derive(Serialize, Deserialize, JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]";

/// How the root type is declared: kube-derive's attributes on one of the structs.
pub struct Root {
    /// The struct kube-derive's `CustomResource` goes on.
    pub spec_struct: String,
    /// `#[kube(...)]` lines.
    pub kube: Vec<String>,
    /// A type alias for a status that is not a struct: `pub type FooStatus = ...;`.
    pub status_alias: Option<(String, String)>,
}

/// The module: header comment, imports, the root, then the other structs, parents first.
pub fn module(header: &str, types: &Types, root: &Root) -> String {
    let mut out = String::from(header);
    // Descriptions are Markdown written for `kubectl explain`, not for rustdoc and clippy.
    out.push_str(
        "#![allow(clippy::doc_lazy_continuation, clippy::doc_overindented_list_items)]\n\n",
    );
    if types.uses_map {
        out.push_str("use std::collections::BTreeMap;\n\n");
    }
    if types.uses_quantity {
        out.push_str("use k8s_openapi::apimachinery::pkg::api::resource::Quantity;\n");
    }
    if types.uses_metav1 {
        out.push_str("use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;\n");
    }
    if types.uses_int_or_string {
        out.push_str("use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;\n");
    }
    out.push_str("use kube::CustomResource;\n");
    if types.is_exact() {
        out.push_str("use schemars::JsonSchema;\n");
    }
    out.push_str("use serde::{Deserialize, Serialize};\n");
    if types.uses_value {
        out.push_str("use serde_json::Value;\n");
    }
    let mut structs: Vec<&Struct> = types.structs.iter().collect();
    // The root first.
    structs.sort_by_key(|s| (s.name != root.spec_struct, s.order));
    for s in structs {
        out.push('\n');
        if types.is_exact() {
            write_exact(&mut out, s, (s.name == root.spec_struct).then_some(root));
            continue;
        }
        if s.name == root.spec_struct {
            write_doc(&mut out, "", s.doc.as_deref());
            out.push_str(&DERIVES.replace("#[derive(", "#[derive(CustomResource, "));
            out.push('\n');
            for line in &root.kube {
                let _ = writeln!(out, "#[kube({line})]");
            }
            write_struct_body(&mut out, s);
        } else {
            write_doc(&mut out, "", s.doc.as_deref());
            out.push_str(DERIVES);
            out.push('\n');
            write_struct_body(&mut out, s);
        }
    }
    if let Some((name, ty)) = &root.status_alias {
        let _ = write!(
            out,
            "\n/// The status: the CRD gives it no fields.\npub type {name} = {ty};\n"
        );
    }
    out
}

/// A struct or enum of exact types, with its doc comment and attributes; the root's
/// (`root`) with kube-derive's too.
fn write_exact(out: &mut String, s: &Struct, root: Option<&Root>) {
    for line in &s.doc_lines {
        write_doc_line(out, "", line);
    }
    if let Some(variants) = &s.variants {
        out.push_str(ENUM_DERIVES);
        let _ = writeln!(out, "\npub enum {} {{", s.name);
        for (i, (ident, value)) in variants.variants.iter().enumerate() {
            if i == variants.default {
                out.push_str("    #[default]\n");
            }
            if ident != value {
                let attribute = Attribute::meta("serde", vec![format!("rename = {value:?}")]);
                out.push_str(&attribute.lines("    "));
            }
            let _ = writeln!(out, "    {ident},");
        }
        out.push_str("}\n");
        return;
    }
    let derives = match s.default {
        true => EXACT_DERIVES.to_owned(),
        false => EXACT_DERIVES.replace(" Default,", ""),
    };
    match root {
        Some(root) => {
            out.push_str(&derives.replace("#[derive(", "#[derive(CustomResource, "));
            out.push('\n');
            for line in &root.kube {
                out.push_str(&kube_attribute(line).lines(""));
            }
        }
        None => {
            out.push_str(&derives);
            out.push('\n');
        }
    }
    for attribute in &s.attributes {
        out.push_str(&attribute.lines(""));
    }
    if s.fields.is_empty() {
        let _ = writeln!(out, "pub struct {} {{}}", s.name);
        return;
    }
    if "pub struct  {".len() + s.name.len() > MAX_WIDTH {
        let _ = writeln!(out, "pub struct {}\n{{", s.name);
    } else {
        let _ = writeln!(out, "pub struct {} {{", s.name);
    }
    for (i, f) in s.fields.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        write_exact_field(out, f);
    }
    out.push_str("}\n");
}

/// A `#[kube(...)]` item as an attribute: an expression (`validation = Rule::new(..)`) is no
/// meta list, which rustfmt leaves as it is.
fn kube_attribute(item: &str) -> Attribute {
    if item.starts_with("validation = ") {
        Attribute::Verbatim(format!("#[kube({item})]"))
    } else {
        Attribute::meta("kube", vec![item.to_owned()])
    }
}

fn write_exact_field(out: &mut String, f: &Field) {
    for line in &f.doc_lines {
        write_doc_line(out, "    ", line);
    }
    if f.flatten {
        out.push_str("    #[serde(flatten)]\n");
    } else if unraw(&f.ident) != f.wire {
        let rename = Attribute::meta(
            "serde",
            vec![format!("rename = {}", string_literal(&f.wire))],
        );
        out.push_str(&rename.lines("    "));
    }
    let ty = if f.optional {
        out.push_str("    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n");
        format!("Option<{}>", f.ty)
    } else {
        if f.vec_optional {
            out.push_str("    #[serde(default, skip_serializing_if = \"Vec::is_empty\")]\n");
        }
        f.ty.clone()
    };
    for attribute in &f.attributes {
        out.push_str(&attribute.lines("    "));
    }
    write_field(out, &f.ident, &ty);
}

/// One doc comment line, as written.
fn write_doc_line(out: &mut String, indent: &str, line: &str) {
    if line.is_empty() {
        let _ = writeln!(out, "{indent}///");
    } else {
        let _ = writeln!(out, "{indent}/// {line}");
    }
}

fn write_struct_body(out: &mut String, s: &Struct) {
    if s.fields.is_empty() {
        let _ = writeln!(out, "pub struct {} {{}}", s.name);
        return;
    }
    // rustfmt puts the brace of a struct whose line does not fit on a line of its own.
    if "pub struct  {".len() + s.name.len() > MAX_WIDTH {
        let _ = writeln!(out, "pub struct {}\n{{", s.name);
    } else {
        let _ = writeln!(out, "pub struct {} {{", s.name);
    }
    for f in &s.fields {
        write_doc(out, "    ", f.doc.as_deref());
        if f.flatten {
            out.push_str("    #[serde(flatten)]\n");
        } else if unraw(&f.ident) != f.wire {
            let _ = writeln!(out, "    #[serde(rename = {})]", string_literal(&f.wire));
        }
        let ty = if f.optional {
            out.push_str("    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n");
            format!("Option<{}>", f.ty)
        } else {
            f.ty.clone()
        };
        write_field(out, &f.ident, &ty);
    }
    out.push_str("}\n");
}

/// `pub ident: ty,` as rustfmt lays it out: on one line if it fits in 100 columns, else the
/// type on the next line, else (`Option<VeryLongName>`) the type's argument on a line of its own.
fn write_field(out: &mut String, ident: &str, ty: &str) {
    if "    pub : ,".len() + ident.len() + ty.len() <= MAX_WIDTH {
        let _ = writeln!(out, "    pub {ident}: {ty},");
        return;
    }
    let one_argument = ty
        .split_once('<')
        .filter(|(_, rest)| rest.ends_with('>') && !rest.contains(','));
    match one_argument {
        Some((outer, rest)) if "        ,".len() + ty.len() > MAX_WIDTH => {
            let inner = &rest[..rest.len() - 1];
            let _ = writeln!(out, "    pub {ident}: {outer}<\n        {inner},\n    >,");
        }
        _ => {
            let _ = writeln!(out, "    pub {ident}:\n        {ty},");
        }
    }
}

/// A Rust string literal of `s`.
fn string_literal(s: &str) -> String {
    format!("{s:?}")
}

/// `text` as doc comment lines at `indent`: trimmed, Markdown code fences made plain text (so
/// that no description becomes a doctest), no indented code blocks.
fn write_doc(out: &mut String, indent: &str, text: Option<&str>) {
    let Some(text) = text.map(str::trim).filter(|t| !t.is_empty()) else {
        return;
    };
    let mut in_fence = false;
    for line in text.lines() {
        let mut line = line.trim().replace('\t', " ");
        if line.starts_with("```") {
            if !in_fence && line.trim_start_matches('`').is_empty() {
                line.push_str("text");
            } else if !in_fence {
                line = "```text".into();
            }
            in_fence = !in_fence;
        }
        if line.is_empty() {
            let _ = writeln!(out, "{indent}///");
        } else {
            let _ = writeln!(out, "{indent}/// {line}");
        }
    }
    if in_fence {
        let _ = writeln!(out, "{indent}/// ```");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_are_trimmed_and_fences_are_text() {
        let mut out = String::new();
        write_doc(
            &mut out,
            "",
            Some("  First.\n\n    indented\t x  \n```yaml\na: 1\n```\n"),
        );
        assert_eq!(
            out,
            "/// First.\n///\n/// indented  x\n/// ```text\n/// a: 1\n/// ```\n"
        );
    }

    #[test]
    fn long_fields_are_laid_out_as_rustfmt_does() {
        let long = "A".repeat(85);
        let mut out = String::new();
        write_field(&mut out, "short", "String");
        write_field(&mut out, "field", &format!("Option<{}>", "B".repeat(80)));
        write_field(&mut out, "field", &format!("Option<{long}>"));
        assert_eq!(
            out,
            format!(
                "    pub short: String,\n    pub field:\n        Option<{}>,\n    pub field: \
                 Option<\n        {long},\n    >,\n",
                "B".repeat(80)
            )
        );
    }
}
