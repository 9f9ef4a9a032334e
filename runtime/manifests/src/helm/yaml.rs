//! YAML with Helm template actions in it: a tree of nodes that are either data (written as
//! YAML) or template text (written as is), and the writer that lays them out.
//!
//! The writer, not string replacements on finished YAML, places every action, so the
//! indentation of `nindent` and of `{{- if }}` blocks follows from where a node sits. Data is
//! written in the block style kubectl uses (sequences at their key's indentation), strings
//! quoted only where YAML would read them as something else, and `{{` in data escaped so that
//! Helm writes it back verbatim.

use serde_json::Value;

/// A node of the template: what goes where a YAML value would.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A string, number, boolean or null.
    Scalar(Value),
    /// Template text standing for a scalar (`{{ .Release.Namespace }}`), written as is.
    Expr(String),
    /// A mapping; its entries may be conditional.
    Map(Vec<Entry>),
    /// A sequence; its items may be conditional.
    Seq(Vec<Item>),
    /// A value taken whole from values.yaml (`toYaml`), or `fallback` when that is empty.
    FromValues {
        /// The value's path, e.g. `.Values.manager.resources`.
        path: String,
        /// Written when the value is empty or unset (`{}` or `[]`, so the field stays valid).
        fallback: Value,
    },
}

/// An entry of a mapping.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// `key: value`.
    Field(String, Node),
    /// Entries written only if `cond` holds (`{{- if cond }}`), else those of `otherwise`.
    If {
        cond: String,
        then: Vec<Entry>,
        otherwise: Vec<Entry>,
    },
    /// Template lines written at the mapping's indentation; `{indent}` in them becomes that
    /// indentation's width (for `nindent`), `{indent2}` the next level's.
    Raw(String),
}

/// An item of a sequence.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// `- value`.
    Node(Node),
    /// Items written only if `cond` holds, else those of `otherwise`.
    If {
        cond: String,
        then: Vec<Item>,
        otherwise: Vec<Item>,
    },
    /// Template lines written at the sequence's indentation (see [`Entry::Raw`]).
    Raw(String),
}

impl Entry {
    /// `key: node`.
    pub fn field(key: &str, node: Node) -> Entry {
        Entry::Field(key.to_owned(), node)
    }

    /// `entries` written only if `cond` holds.
    pub fn when(cond: &str, then: Vec<Entry>) -> Entry {
        Entry::If {
            cond: cond.to_owned(),
            then,
            otherwise: Vec::new(),
        }
    }
}

impl Item {
    /// `items` written only if `cond` holds.
    pub fn when(cond: &str, then: Vec<Item>) -> Item {
        Item::If {
            cond: cond.to_owned(),
            then,
            otherwise: Vec::new(),
        }
    }
}

impl From<&Value> for Node {
    /// The data of `value`, as nodes that can be changed one by one.
    fn from(value: &Value) -> Node {
        match value {
            Value::Object(map) => Node::Map(
                map.iter()
                    .map(|(k, v)| Entry::Field(k.clone(), Node::from(v)))
                    .collect(),
            ),
            Value::Array(items) => Node::Seq(items.iter().map(|v| Item::Node(v.into())).collect()),
            scalar => Node::Scalar(scalar.clone()),
        }
    }
}

impl Node {
    /// Template text for a scalar.
    pub fn expr(text: impl Into<String>) -> Node {
        Node::Expr(text.into())
    }

    /// A string scalar.
    pub fn string(text: &str) -> Node {
        Node::Scalar(Value::String(text.to_owned()))
    }

    /// The node at `path` (mapping keys, or sequence indexes as numbers), if it is data all the
    /// way there.
    pub fn get(&self, path: &[&str]) -> Option<&Node> {
        let Some((first, rest)) = path.split_first() else {
            return Some(self);
        };
        let next = match self {
            Node::Map(entries) => entries.iter().find_map(|e| match e {
                Entry::Field(k, v) if k == first => Some(v),
                _ => None,
            }),
            Node::Seq(items) => {
                let index: usize = first.parse().ok()?;
                match items.get(index) {
                    Some(Item::Node(node)) => Some(node),
                    _ => None,
                }
            }
            _ => None,
        }?;
        next.get(rest)
    }

    /// The node at `path`, to change it.
    pub fn get_mut(&mut self, path: &[&str]) -> Option<&mut Node> {
        let Some((first, rest)) = path.split_first() else {
            return Some(self);
        };
        let next = match self {
            Node::Map(entries) => entries.iter_mut().find_map(|e| match e {
                Entry::Field(k, v) if k == first => Some(v),
                _ => None,
            }),
            Node::Seq(items) => {
                let index: usize = first.parse().ok()?;
                match items.get_mut(index) {
                    Some(Item::Node(node)) => Some(node),
                    _ => None,
                }
            }
            _ => None,
        }?;
        next.get_mut(rest)
    }

    /// The string at `path`, if there is one.
    pub fn str_at(&self, path: &[&str]) -> Option<&str> {
        match self.get(path) {
            Some(Node::Scalar(Value::String(s))) => Some(s),
            _ => None,
        }
    }

    /// Replaces the node at `path`, if there is one; tells whether there was.
    pub fn set(&mut self, path: &[&str], node: Node) -> bool {
        match self.get_mut(path) {
            Some(slot) => {
                *slot = node;
                true
            }
            None => false,
        }
    }

    /// The entries of a mapping (none for another node).
    pub fn entries_mut(&mut self) -> Option<&mut Vec<Entry>> {
        match self {
            Node::Map(entries) => Some(entries),
            _ => None,
        }
    }

    /// The mapping at `path` (mapping keys, or sequence indexes as numbers), made (empty) where
    /// a mapping's key is missing; `None` if something else is there.
    pub fn map_at(&mut self, path: &[&str]) -> Option<&mut Vec<Entry>> {
        let Some((first, rest)) = path.split_first() else {
            return self.entries_mut();
        };
        if let Node::Seq(items) = self {
            let index: usize = first.parse().ok()?;
            return match items.get_mut(index) {
                Some(Item::Node(node)) => node.map_at(rest),
                _ => None,
            };
        }
        let entries = self.entries_mut()?;
        let at = match entries
            .iter()
            .position(|e| matches!(e, Entry::Field(k, _) if k == first))
        {
            Some(at) => at,
            None => {
                entries.push(Entry::field(first, Node::Map(Vec::new())));
                entries.len() - 1
            }
        };
        match &mut entries[at] {
            Entry::Field(_, node) => node.map_at(rest),
            _ => None,
        }
    }

    /// Whether this is an empty mapping or sequence.
    fn is_empty_collection(&self) -> bool {
        match self {
            Node::Map(entries) => entries.is_empty(),
            Node::Seq(items) => items.is_empty(),
            _ => false,
        }
    }
}

/// Replaces the field `key` of `entries` with the entries `with` gives it (its node), in place;
/// tells whether there was such a field.
pub fn replace_field(
    entries: &mut Vec<Entry>,
    key: &str,
    with: impl FnOnce(Node) -> Vec<Entry>,
) -> bool {
    let Some(at) = entries
        .iter()
        .position(|e| matches!(e, Entry::Field(k, _) if k == key))
    else {
        return false;
    };
    let Entry::Field(_, node) = entries.remove(at) else {
        return false;
    };
    for (offset, entry) in with(node).into_iter().enumerate() {
        entries.insert(at + offset, entry);
    }
    true
}

/// Writes `node` as the whole of a YAML document.
pub fn document(node: &Node) -> String {
    let mut out = Writer::default();
    match node {
        Node::Map(entries) => out.entries(entries, 0),
        other => {
            let mut lines = Vec::new();
            inline(other, 0, &mut lines);
            out.lines.extend(lines);
        }
    }
    let mut text = out.lines.join("\n");
    text.push('\n');
    text
}

/// The writer's output, line by line.
#[derive(Default)]
struct Writer {
    lines: Vec<String>,
}

impl Writer {
    fn push(&mut self, indent: usize, text: &str) {
        self.lines.push(format!("{:indent$}{text}", ""));
    }

    /// Template lines at `indent`, `{indent}` replaced by its width and `{indent2}` by the
    /// width of the next level.
    fn raw(&mut self, indent: usize, text: &str) {
        for line in text.lines() {
            let line = line
                .replace("{indent}", &indent.to_string())
                .replace("{indent2}", &(indent + 2).to_string());
            self.push(indent, &line);
        }
    }

    fn entries(&mut self, entries: &[Entry], indent: usize) {
        for entry in entries {
            match entry {
                Entry::Field(key, node) => self.field(key, node, indent),
                Entry::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    self.push(indent, &format!("{{{{- if {cond} }}}}"));
                    self.entries(then, indent);
                    if !otherwise.is_empty() {
                        self.push(indent, "{{- else }}");
                        self.entries(otherwise, indent);
                    }
                    self.push(indent, "{{- end }}");
                }
                Entry::Raw(text) => self.raw(indent, text),
            }
        }
    }

    fn field(&mut self, key: &str, node: &Node, indent: usize) {
        let key = escape(&scalar_text(&Value::String(key.to_owned())));
        match node {
            Node::Map(entries) if !entries.is_empty() => {
                self.push(indent, &format!("{key}:"));
                self.entries(entries, indent + 2);
            }
            // kubectl's style: a sequence's dashes at its key's indentation.
            Node::Seq(items) if !items.is_empty() => {
                self.push(indent, &format!("{key}:"));
                self.items(items, indent);
            }
            Node::FromValues { path, fallback } => {
                self.push(indent, &format!("{key}:"));
                self.values_block(path, fallback, indent + 2);
            }
            other => {
                let mut lines = Vec::new();
                let first = inline(other, indent + 2, &mut lines);
                self.push(indent, &format!("{key}: {first}"));
                self.lines.extend(lines);
            }
        }
    }

    fn values_block(&mut self, path: &str, fallback: &Value, indent: usize) {
        self.push(indent, &format!("{{{{- if {path} }}}}"));
        self.push(
            indent,
            &format!("{{{{- toYaml {path} | nindent {indent} }}}}"),
        );
        self.push(indent, "{{- else }}");
        self.push(indent, &escape(&scalar_text(fallback)));
        self.push(indent, "{{- end }}");
    }

    fn items(&mut self, items: &[Item], indent: usize) {
        for item in items {
            match item {
                Item::Node(node) => self.item(node, indent),
                Item::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    self.push(indent, &format!("{{{{- if {cond} }}}}"));
                    self.items(then, indent);
                    if !otherwise.is_empty() {
                        self.push(indent, "{{- else }}");
                        self.items(otherwise, indent);
                    }
                    self.push(indent, "{{- end }}");
                }
                Item::Raw(text) => self.raw(indent, text),
            }
        }
    }

    fn item(&mut self, node: &Node, indent: usize) {
        match node {
            Node::Map(entries) if !entries.is_empty() => {
                // A field that is always there goes first, on the dash's line (the order of a
                // mapping's keys means nothing).
                let mut entries = entries.clone();
                if let Some(at) = entries.iter().position(|e| matches!(e, Entry::Field(..))) {
                    let first = entries.remove(at);
                    entries.insert(0, first);
                }
                let mut nested = Writer::default();
                nested.entries(&entries, indent + 2);
                let mut lines = nested.lines.into_iter();
                match lines.next() {
                    // The first field on the dash's line, as kubectl writes it.
                    Some(first) if !first.trim_start().starts_with("{{") => {
                        self.push(indent, &format!("- {}", first.trim_start()));
                    }
                    // A template action cannot share the dash's line: `{{-` would eat the
                    // space after the dash. The mapping starts on the next line instead.
                    Some(first) => {
                        self.push(indent, "-");
                        self.lines.push(first);
                    }
                    None => self.push(indent, "- {}"),
                }
                self.lines.extend(lines);
            }
            Node::Seq(items) if !items.is_empty() => {
                self.push(indent, "-");
                self.items(items, indent + 2);
            }
            Node::FromValues { path, fallback } => {
                self.push(indent, "-");
                self.values_block(path, fallback, indent + 2);
            }
            other => {
                let mut lines = Vec::new();
                let first = inline(other, indent + 2, &mut lines);
                self.push(indent, &format!("- {first}"));
                self.lines.extend(lines);
            }
        }
    }
}

/// A node that fits after `key: ` or `- ` (a scalar, an action, an empty collection): the text
/// for that line; a literal block's lines, at `indent`, go to `more`.
fn inline(node: &Node, indent: usize, more: &mut Vec<String>) -> String {
    match node {
        Node::Expr(text) => text.clone(),
        Node::Map(_) if node.is_empty_collection() => "{}".into(),
        Node::Seq(_) if node.is_empty_collection() => "[]".into(),
        Node::Scalar(Value::String(s)) if literal_block_fits(s) => {
            let body = s.strip_suffix('\n').unwrap_or(s);
            for line in body.split('\n') {
                more.push(if line.is_empty() {
                    String::new()
                } else {
                    format!("{:indent$}{}", "", escape(line))
                });
            }
            if s.ends_with('\n') { "|" } else { "|-" }.into()
        }
        Node::Scalar(value) => escape(&scalar_text(value)),
        // Not reached: the writer handles collections and values before asking.
        Node::Map(_) | Node::Seq(_) | Node::FromValues { .. } => "{}".into(),
    }
}

/// Whether `s` reads back the same as a literal block (`|` or `|-`): several lines, nothing a
/// block cannot hold (control characters, a line of blanks only, leading blanks, which would
/// need an indentation indicator, or several trailing newlines).
fn literal_block_fits(s: &str) -> bool {
    let body = s.strip_suffix('\n').unwrap_or(s);
    body.contains('\n')
        && !body.ends_with('\n')
        && !body.starts_with([' ', '\t'])
        && !s.chars().any(|c| c.is_control() && c != '\n' && c != '\t')
        && !body
            .split('\n')
            .any(|line| !line.is_empty() && line.trim().is_empty())
}

/// `value` as a YAML scalar: strings plain where YAML reads them back as the same string, else
/// quoted.
pub fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) if plain_is_safe(s) => s.clone(),
        Value::String(s) if !s.contains('\'') && !s.chars().any(char::is_control) => {
            format!("'{s}'")
        }
        // JSON's string syntax is YAML's double-quoted style.
        Value::String(s) => Value::String(s.clone()).to_string(),
        Value::Null => "null".into(),
        Value::Object(map) if map.is_empty() => "{}".into(),
        Value::Array(items) if items.is_empty() => "[]".into(),
        // Collections are written by the writer; a scalar position gets them as JSON, which
        // is YAML's flow style.
        other => other.to_string(),
    }
}

/// Whether `s` can be written unquoted and read back as the same string, by YAML 1.1 (Helm's
/// parser) and 1.2. Conservative: quoting more than needed is harmless.
fn plain_is_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-_./=+@,()<>:$ ".contains(c);
    // A quantity or duration ("500m", "128Mi", "15s") is a string to YAML; what has only
    // digits, dots, signs and exponents is a number, and 0x/0o/0b prefixes make integers.
    let numeric_start = first.is_ascii_digit()
        && !s.contains([':', ' '])
        && !["0x", "0o", "0b"]
            .iter()
            .any(|p| s.to_ascii_lowercase().starts_with(p))
        && s.chars()
            .any(|c| c.is_ascii_alphabetic() && c != 'e' && c != 'E');
    let starts_well = first.is_ascii_alphabetic()
        || first == '/'
        || first == '_'
        || numeric_start
        || (first == '-' && s[1..].starts_with(|c: char| c == '-' || c.is_ascii_alphabetic()));
    let reserved = ["y", "n", "yes", "no", "true", "false", "on", "off", "null"]
        .contains(&s.to_ascii_lowercase().as_str());
    starts_well
        && !reserved
        && s.chars().all(allowed)
        && !s.ends_with([' ', ':'])
        && !s.contains(": ")
        && !s.contains(" #")
}

/// `text` with every `{{` turned into an action that writes it, so Helm does not read data as
/// a template.
pub fn escape(text: &str) -> String {
    text.replace("{{", "{{ \"{{\" }}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn data_is_written_as_kubectl_writes_it() {
        let value = json!({
            "apiVersion": "v1",
            "metadata": {"name": "x", "labels": {"app.kubernetes.io/name": "op"}},
            "rules": [{"verbs": ["*"], "apiGroups": [""]}, {"nonResourceURLs": ["/metrics"]}],
            "empty": {}, "none": [], "count": 3, "flag": true, "nothing": null,
        });
        let text = document(&Node::from(&value));
        assert_eq!(
            text,
            "apiVersion: v1\ncount: 3\nempty: {}\nflag: true\nmetadata:\n  labels:\n    \
             app.kubernetes.io/name: op\n  name: x\nnone: []\nnothing: null\nrules:\n- \
             apiGroups:\n  - ''\n  verbs:\n  - '*'\n- nonResourceURLs:\n  - /metrics\n"
        );
    }

    #[test]
    fn strings_that_yaml_would_read_otherwise_are_quoted() {
        for (s, written) in [
            ("--leader-elect", "--leader-elect"),
            ("500m", "500m"),
            ("128Mi", "128Mi"),
            ("/manager", "/manager"),
            ("true", "'true'"),
            ("No", "'No'"),
            ("1001", "'1001'"),
            ("6.7.1", "'6.7.1'"),
            ("-1", "'-1'"),
            ("1:20", "'1:20'"),
            ("1e3", "'1e3'"),
            ("0x1F", "'0x1F'"),
            ("15s", "15s"),
            ("1.5Gi", "1.5Gi"),
            ("a: b", "'a: b'"),
            ("a #b", "'a #b'"),
            ("*", "'*'"),
            ("", "''"),
            ("it's", "\"it's\""),
            ("tab\there", "\"tab\\there\""),
            (" lead", "' lead'"),
        ] {
            assert_eq!(scalar_text(&json!(s)), written, "{s}");
        }
    }

    #[test]
    fn every_string_reads_back_as_written() {
        let strings = [
            "plain",
            "two\nlines",
            "ends with a newline\n",
            "two newlines\n\n",
            "  leading blanks\nand more",
            "a line\n   \nof blanks",
            "quote ' and \" both",
            "{{ not a template }}",
            "control \u{7} char",
            "x: y\n- z",
        ];
        for s in strings {
            let node = Node::Map(vec![Entry::field("k", Node::string(s))]);
            let text = document(&node);
            // Helm writes `{{ "{{" }}` as `{{`.
            let rendered = text.replace("{{ \"{{\" }}", "{{");
            let back: Value = serde_saphyr::from_str(&rendered).expect("YAML");
            assert_eq!(back, json!({ "k": s }), "{text}");
        }
    }

    #[test]
    fn conditions_and_values_are_placed_at_their_indentation() {
        let node = Node::Map(vec![
            Entry::field(
                "spec",
                Node::Map(vec![
                    Entry::field("replicas", Node::expr("{{ .Values.replicas }}")),
                    Entry::when(".Values.on", vec![Entry::field("extra", Node::string("x"))]),
                    Entry::field(
                        "resources",
                        Node::FromValues {
                            path: ".Values.resources".into(),
                            fallback: json!({}),
                        },
                    ),
                    Entry::field(
                        "args",
                        Node::Seq(vec![
                            Item::Node(Node::string("--a")),
                            Item::when(".Values.b", vec![Item::Node(Node::string("--b"))]),
                            Item::Raw("{{- range .Values.args }}\n- {{ . }}\n{{- end }}".into()),
                        ]),
                    ),
                    Entry::field(
                        "ports",
                        Node::Seq(vec![Item::Node(Node::Map(vec![Entry::when(
                            ".Values.c",
                            vec![Entry::field("port", Node::Scalar(json!(1)))],
                        )]))]),
                    ),
                ]),
            ),
            Entry::Raw(
                "{{- with .Values.labels }}{{ toYaml . | nindent {indent} }}{{- end }}".into(),
            ),
        ]);
        assert_eq!(
            document(&node),
            "spec:\n  replicas: {{ .Values.replicas }}\n  {{- if .Values.on }}\n  extra: x\n  \
             {{- end }}\n  resources:\n    {{- if .Values.resources }}\n    {{- toYaml \
             .Values.resources | nindent 4 }}\n    {{- else }}\n    {}\n    {{- end }}\n  \
             args:\n  - --a\n  {{- if .Values.b }}\n  - --b\n  {{- end }}\n  {{- range \
             .Values.args }}\n  - {{ . }}\n  {{- end }}\n  ports:\n  -\n    {{- if .Values.c \
             }}\n    port: 1\n    {{- end }}\n{{- with .Values.labels }}{{ toYaml . | nindent \
             0 }}{{- end }}\n"
        );
    }

    #[test]
    fn nodes_are_found_and_changed_by_path() {
        let mut node = Node::from(&json!({"a": {"b": [{"c": "d"}]}}));
        assert_eq!(node.str_at(&["a", "b", "0", "c"]), Some("d"));
        assert!(node.set(&["a", "b", "0", "c"], Node::expr("{{ x }}")));
        assert!(!node.set(&["a", "x", "y"], Node::expr("{{ x }}")));
        node.map_at(&["a", "e"])
            .expect("a mapping")
            .push(Entry::field("f", Node::string("g")));
        assert_eq!(node.str_at(&["a", "e", "f"]), Some("g"));
        assert!(
            node.map_at(&["a", "b"]).is_none(),
            "a sequence is no mapping"
        );
    }
}
