//! Templates with their plain text lifted out before Tera parses them.
//!
//! Tera's parser (pest) spends about a thousand instructions on each character of plain text,
//! and a template is mostly plain text: parsing was nine tenths of `init`'s time. So the text
//! between tags is taken out of the source before Tera sees it, and Tera parses the tags alone:
//! - a text outside any block (`if`, `for`, `filter`...) is written once, whatever the context:
//!   it becomes one separator character, and the render puts the text back where Tera's output
//!   has the separator;
//! - a text inside a block (repeated by a loop, or left out by a condition) becomes a reference,
//!   `{{ __text.N }}`, to a list that the render gets in its context;
//! - a tag outside blocks that only prints a variable (`{{ resource.kind }}`) is not Tera's
//!   either: it becomes a separator too, and the render prints the variable's value from the
//!   context in its place, as Tera would.
//!
//! What Tera would have done to the text is done here: `{%-`/`{{-`/`{#-` trims the whitespace
//! at the end of the text before the tag and `-%}`/`-}}`/`-#}` the whitespace at the start of
//! the text after it, and a `{% raw %}` block's content is text as it stands. A template that
//! defines macros is left whole: a macro's body does not see the render's context.

use anyhow::{Result, bail};
use tera::{Context, Value};

/// The context key under which a lifted template finds the texts of its blocks.
pub const TEXTS: &str = "__text";

/// Stands for a text or a printed variable outside blocks: a control character, which no
/// template or value holds.
const SEPARATOR: char = '\u{1}';

/// A template with its text lifted out.
pub struct Lifted {
    /// What Tera parses.
    pub source: String,
    /// The texts inside blocks, by their index in `{{ __text.N }}`.
    pub texts: Vec<String>,
    /// What stands outside blocks, in the order of the separators that stand for it.
    outside: Vec<Outside>,
}

/// A text outside blocks, or a variable printed there.
enum Outside {
    Text(String),
    /// `{{ resource.kind }}`: a variable, with no filter or operator, printed outside blocks.
    /// Tera's parser spends tens of thousands of instructions on such a tag, more than the
    /// lookup costs here, and a template holds dozens.
    Variable(Vec<String>),
}

/// `source` with its text lifted out, or `None` when it must be parsed whole (it defines
/// macros, or a tag does not end).
pub fn lift(source: &str) -> Option<Lifted> {
    let mut lifted = Lifted {
        source: String::with_capacity(source.len() / 4),
        texts: Vec::new(),
        outside: Vec::new(),
    };
    // A variable the template sets itself is Tera's to print, not the context's.
    let assigned = assigned(source);
    let mut rest = source;
    // Whether the tag before the current text ends with `-`.
    let mut trim_start = false;
    // How many blocks the current text is in.
    let mut depth = 0usize;
    while let Some(start) = block_start(rest) {
        let (text, tag_and_after) = rest.split_at(start);
        let bytes = tag_and_after.as_bytes();
        let text = trimmed(text, trim_start, bytes.get(2) == Some(&b'-'));
        lifted.push_text(text, depth);
        let end = tag_end(tag_and_after)?;
        let tag = &tag_and_after[..end];
        rest = &tag_and_after[end..];
        if depth == 0
            && let Some(path) = variable(tag)
            && !assigned.contains(&path[0].as_str())
        {
            lifted.source.push(SEPARATOR);
            lifted.outside.push(Outside::Variable(path));
            trim_start = tag[..tag.len() - 2].ends_with('-');
            continue;
        }
        match tag_name(tag) {
            Some("macro") => return None,
            Some("raw") => {
                // The content, as it stands, up to the closing tag.
                let (content, endraw, after) = endraw(rest)?;
                let content = trimmed(content, tag.ends_with("-%}"), endraw.starts_with("{%-"));
                lifted.push_text(content, depth);
                trim_start = endraw.ends_with("-%}");
                rest = after;
                continue;
            }
            Some("if" | "for" | "filter" | "block") => depth += 1,
            Some("endif" | "endfor" | "endfilter" | "endblock") => depth = depth.checked_sub(1)?,
            _ => {}
        }
        lifted.source.push_str(tag);
        trim_start = tag[..tag.len() - 2].ends_with('-');
    }
    lifted.push_text(trimmed(rest, trim_start, false), depth);
    Some(lifted)
}

impl Lifted {
    /// Adds `text`, in `depth` blocks, and what stands for it.
    fn push_text(&mut self, text: &str, depth: usize) {
        if text.is_empty() {
            return;
        }
        if depth > 0 {
            let reference = format!("{{{{ {TEXTS}.{} }}}}", self.texts.len());
            self.source.push_str(&reference);
            self.texts.push(text.to_owned());
            return;
        }
        match self.outside.last_mut() {
            // Right after another text: one text.
            Some(Outside::Text(last)) if self.source.ends_with(SEPARATOR) => last.push_str(text),
            _ => {
                self.source.push(SEPARATOR);
                self.outside.push(Outside::Text(text.to_owned()));
            }
        }
    }

    /// What the template renders, from what Tera rendered of `source` with `context`: the
    /// texts outside blocks, and the variables printed there, put back in place of their
    /// separators.
    pub fn finish(&self, rendered: &str, context: &Context) -> Result<String> {
        let mut pieces = rendered.split(SEPARATOR);
        let mut text = String::with_capacity(rendered.len() + self.outside_len());
        text.push_str(pieces.next().unwrap_or_default());
        let mut outside = self.outside.iter();
        for piece in pieces {
            match outside.next() {
                Some(Outside::Text(lifted)) => text.push_str(lifted),
                Some(Outside::Variable(path)) => print(&mut text, path, context)?,
                None => bail!("internal error: a value holds the template's separator (U+0001)"),
            }
            text.push_str(piece);
        }
        if outside.next().is_some() {
            bail!("internal error: a separator (U+0001) of the template was not rendered");
        }
        Ok(text)
    }

    fn outside_len(&self) -> usize {
        let len = |o: &Outside| match o {
            Outside::Text(text) => text.len(),
            Outside::Variable(_) => 0,
        };
        self.outside.iter().map(len).sum()
    }
}

/// The variable path of `{{ a.b.c }}` (with or without whitespace control), if the tag is
/// one variable and nothing else.
fn variable(tag: &str) -> Option<Vec<String>> {
    let inner = tag.strip_prefix("{{")?.strip_suffix("}}")?;
    let inner = inner.strip_prefix('-').unwrap_or(inner);
    let inner = inner.strip_suffix('-').unwrap_or(inner).trim();
    let is_name = |part: &&str| {
        part.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let parts: Vec<&str> = inner.split('.').collect();
    // `loop`, `__tera_context` and the like are Tera's own; none is printed outside blocks.
    let own = ["loop", "true", "false", "True", "False", "__tera_context"].contains(&parts[0]);
    (!own && parts.iter().all(is_name)).then(|| parts.into_iter().map(str::to_owned).collect())
}

/// The names that `{% set %}` and `{% set_global %}` tags of `source` assign.
fn assigned(source: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut from = 0;
    while let Some(i) = source[from..].find("{%") {
        let at = from + i;
        let tag = &source[at..];
        if let Some(name @ ("set" | "set_global")) = tag_name(tag) {
            let after = &tag[tag.find(name).unwrap_or(0) + name.len()..];
            let after = after.trim_start();
            let end = after
                .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .unwrap_or(after.len());
            names.push(&after[..end]);
        }
        from = at + 2;
    }
    names
}

/// Writes the value of the variable `path` of `context` to `text` as Tera prints it: a string
/// as it is, a number as Rust displays it (`1.5`, a whole float without its `.0`), a boolean as
/// `true` or `false`, nothing for a null.
fn print(text: &mut String, path: &[String], context: &Context) -> Result<()> {
    let mut value = path.first().and_then(|first| context.get(first));
    for part in &path[1..] {
        value = value.and_then(|v| v.get(part));
    }
    match value {
        Some(Value::String(s)) => text.push_str(s),
        Some(Value::Number(n)) => match (n.is_f64(), n.as_f64()) {
            (true, Some(float)) => text.push_str(&float.to_string()),
            _ => text.push_str(&n.to_string()),
        },
        Some(Value::Bool(b)) => text.push_str(&b.to_string()),
        Some(Value::Null) => {}
        Some(_) => bail!(
            "internal error: the template prints {}, a list or a map",
            path.join(".")
        ),
        None => bail!(
            "internal error: the template prints {}, which is not defined",
            path.join(".")
        ),
    }
    Ok(())
}

/// `text` trimmed at either end, as Tera trims (Unicode whitespace).
fn trimmed(text: &str, start: bool, end: bool) -> &str {
    let text = if start { text.trim_start() } else { text };
    if end { text.trim_end() } else { text }
}

/// Where the next `{{`, `{%` or `{#` starts.
fn block_start(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = text[from..].find('{') {
        let at = from + i;
        if matches!(bytes.get(at + 1), Some(b'{' | b'%' | b'#')) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The length of the tag `text` starts with, up to its `}}`, `%}` or `#}`. A comment ends at
/// the first `#}`; an expression's strings ("", '', ``) may hold anything.
fn tag_end(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let close = match bytes[1] {
        b'{' => b'}',
        b'%' => b'%',
        _ => return text.find("#}").map(|i| i + 2),
    };
    let mut quote = None;
    let mut i = 2;
    while i + 1 < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if matches!(b, b'"' | b'\'' | b'`') => quote = Some(b),
            None if b == close && bytes[i + 1] == b'}' => return Some(i + 2),
            None => {}
        }
        i += 1;
    }
    None
}

/// The name of a `{% name ... %}` tag (with or without whitespace control): `if`, `endfor`...
fn tag_name(tag: &str) -> Option<&str> {
    let inner = tag.strip_prefix("{%")?;
    let inner = inner.strip_prefix('-').unwrap_or(inner).trim_start();
    let end = inner
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(inner.len());
    Some(&inner[..end])
}

/// The raw content before `{% endraw %}`, that tag, and what follows it.
fn endraw(text: &str) -> Option<(&str, &str, &str)> {
    let mut from = 0;
    while let Some(i) = text[from..].find("{%") {
        let at = from + i;
        let end = at + tag_end(&text[at..])?;
        if tag_name(&text[at..end]) == Some("endraw") {
            return Some((&text[..at], &text[at..end], &text[end..]));
        }
        from = at + 2;
    }
    None
}

#[cfg(test)]
mod tests {
    use tera::{Context, Tera};

    use super::*;

    /// Renders `source` whole and lifted, and asserts both give the same text.
    fn same(source: &str, context: &Context) {
        let whole = Tera::one_off(source, context, false).unwrap();
        let lifted = lift(source).expect("lifted");
        let mut with_texts = context.clone();
        with_texts.insert(TEXTS, &lifted.texts);
        let rendered = Tera::one_off(&lifted.source, &with_texts, false).unwrap();
        let rendered = lifted.finish(&rendered, context).unwrap();
        assert_eq!(rendered, whole, "{source:?} lifted as {:?}", lifted.source);
    }

    #[test]
    fn lifted_templates_render_as_tera_renders_them_whole() {
        let mut context = Context::new();
        context.insert("kind", "Guestbook");
        context.insert("items", &["a", "b"]);
        context.insert("on", &true);
        for source in [
            "",
            "plain text, { braces } and {x} of Rust",
            "fn main() {\n    let {{ kind | lower }} = 1;\n}\n",
            "a\n  {{- kind }}  \n b",
            "a  {{ kind -}}\n\n  b",
            "list:\n{%- for item in items %}\n- {{ item }}\n{%- endfor %}\nend\n",
            "{% if on -%}\n  yes\n{%- else -%}\n  no\n{%- endif %}\n",
            "x {# a comment with {{ braces }} #} y {#- trimmed -#}  z",
            "{{ \"}}\" ~ kind ~ '%}' }} after",
            "group: {% raw %}${{ github.workflow }}{% endraw %}\n",
            "a  {%- raw -%}  ${{ x }}  {%- endraw -%}  b",
            "{% set name = kind ~ \"s\" %}{{ name }}: {% filter upper %}text {{ kind }}{% endfilter %}",
            "   {{- kind -}}   ",
            "{% for item in items %}{% if on %}[{{ item }}]{% endif %} and {% endfor %}end",
            "{% raw %}top{% endraw %} then {% if on %}{% raw %}inside{% endraw %}{% endif %}",
        ] {
            same(source, &context);
        }
    }

    #[test]
    fn a_template_with_macros_is_parsed_whole() {
        assert!(lift("{% macro m(x) %}text {{ x }}{% endmacro m %}").is_none());
    }

    #[test]
    fn only_texts_inside_blocks_go_through_the_context() {
        let lifted = lift("a {{ x }} b {% if x %} c {% endif %} d").unwrap();
        assert_eq!(lifted.texts, [" c "]);
        let outside: Vec<String> = lifted
            .outside
            .iter()
            .map(|o| match o {
                Outside::Text(text) => text.clone(),
                Outside::Variable(path) => format!("<{}>", path.join(".")),
            })
            .collect();
        assert_eq!(outside, ["a ", "<x>", " b ", " d"]);
        // Tera parses the blocks alone.
        assert_eq!(
            lifted.source,
            "\u{1}\u{1}\u{1}{% if x %}{{ __text.0 }}{% endif %}\u{1}"
        );
    }

    #[test]
    fn a_value_with_the_separator_is_an_error_not_a_wrong_file() {
        let lifted = lift("a {{ x | lower }} b").unwrap();
        let context = Context::new();
        assert!(lifted.finish("\u{1}\u{1}\u{1}", &context).is_err());
        assert!(lifted.finish("\u{1}", &context).is_err());
    }

    #[test]
    fn a_variable_printed_outside_blocks_is_the_contexts_value() {
        let mut context = Context::new();
        context.insert(
            "resource",
            &serde_json::json!({"kind": "Guestbook", "port": 8080, "ratio": 1.0, "half": 0.5, "on": true, "none": null}),
        );
        for source in [
            "{{ resource.kind }}: {{ resource.port }}{{ resource.none }} {{ resource.ratio }} {{ resource.half }} {{ resource.on }}.",
            "a\n  {{- resource.kind -}}\n  b",
            "{% if resource.port %}{{ resource.kind }}{% endif %} {{ resource.kind }}",
        ] {
            same(source, &context);
        }
        let lifted = lift("{{ resource.missing }}").unwrap();
        assert!(lifted.finish("\u{1}", &context).is_err());
    }

    #[test]
    fn a_tag_that_does_not_end_is_left_to_tera() {
        assert!(lift("text {{ kind ").is_none());
        assert!(lift("{% raw %} no end").is_none());
    }
}
