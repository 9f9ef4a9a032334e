//! The templates: files under `templates/`, embedded in the binary so rbuilder needs nothing
//! from disk at run time. A `.tera` file is rendered with Tera; any other file is copied as it
//! is. The operator runtime, crates of rbuilder's workspace (`runtime/` and the three under it), is
//! embedded too, as if it were under `templates/owned/runtime/`: every project gets its files
//! byte for byte. It is read through `embedded/`, links to each crate's `src` and `Cargo.toml`:
//! cargo leaves a folder with a Cargo.toml of its own (another crate) out of rbuilder's
//! package, the links' targets go in (see Cargo.toml), so the packaged rbuilder embeds the
//! runtime too.

use std::cell::RefCell;
use std::collections::HashMap;

use anyhow::{Context as _, Result, anyhow};
use include_dir::{Dir, include_dir};
use tera::{Context, Tera, Value};

use super::{lifted, rust_layout};
use crate::model::with_article;

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");
/// The runtime's crates, each with its folder under `runtime/`, its manifest and its sources;
/// not the runtime's own tests (runtime/tests), which run here only.
static RUNTIME_CRATES: [(&str, &str, Dir<'static>); 4] = [
    (
        "",
        include_str!("../../embedded/runtime-Cargo.toml"),
        include_dir!("$CARGO_MANIFEST_DIR/embedded/runtime-src"),
    ),
    (
        "core/",
        include_str!("../../embedded/runtime-core-Cargo.toml"),
        include_dir!("$CARGO_MANIFEST_DIR/embedded/runtime-core-src"),
    ),
    (
        "manifests/",
        include_str!("../../embedded/runtime-manifests-Cargo.toml"),
        include_dir!("$CARGO_MANIFEST_DIR/embedded/runtime-manifests-src"),
    ),
    (
        "testing/",
        include_str!("../../embedded/runtime-testing-Cargo.toml"),
        include_dir!("$CARGO_MANIFEST_DIR/embedded/runtime-testing-src"),
    ),
];

/// Where the runtime's files are found among the templates.
const RUNTIME_PREFIX: &str = "owned/runtime/";

/// Renders the embedded templates by their path under `templates/`, without `.tera`.
pub struct Templates {
    /// Each template once it has been rendered: Tera's parser is slow (see `lifted`), and a
    /// command renders a fraction of what it could (create api one controller template of
    /// three), so templates are parsed when needed.
    tera: RefCell<Tera>,
    /// Each parsed template's plain text, lifted out before Tera parsed it (see `lifted`); none
    /// for a template parsed whole.
    texts: RefCell<HashMap<String, lifted::Lifted>>,
    /// The `.tera` sources, by name without the suffix.
    sources: Vec<(String, &'static str)>,
    /// The files copied as they are, by path.
    raw: Vec<(String, &'static str)>,
    names: Vec<String>,
}

impl Templates {
    /// The templates whose names start with one of `prefixes`.
    pub fn load(prefixes: &[&str]) -> Result<Self> {
        let (mut sources, mut raw) = (Vec::new(), Vec::new());
        collect_all(&mut sources, &mut raw);
        let wanted = |name: &str| prefixes.iter().any(|p| name.starts_with(p));
        sources.retain(|(name, _)| wanted(name));
        raw.retain(|(name, _)| wanted(name));
        let mut names: Vec<String> = sources
            .iter()
            .chain(&raw)
            .map(|(name, _)| name.clone())
            .collect();
        names.sort();
        let mut tera = Tera::default();
        // Generated files are code and YAML, never HTML.
        tera.autoescape_on(Vec::new());
        tera.register_filter("a", article_filter);
        rust_layout::register(&mut tera);
        Ok(Self {
            tera: RefCell::new(tera),
            texts: RefCell::default(),
            sources,
            raw,
            names,
        })
    }

    /// The names of the templates under `prefix`, sorted.
    pub fn names(&self, prefix: &str) -> Vec<String> {
        self.names
            .iter()
            .filter(|n| n.starts_with(prefix))
            .cloned()
            .collect()
    }

    pub fn render(&self, name: &str, context: &Context) -> Result<String> {
        if let Some((_, text)) = self.raw.iter().find(|(raw, _)| raw == name) {
            return Ok((*text).to_owned());
        }
        let mut tera = self.tera.borrow_mut();
        let mut texts = self.texts.borrow_mut();
        if !tera.get_template_names().any(|loaded| loaded == name) {
            let Some((_, source)) = self.sources.iter().find(|(n, _)| n == name) else {
                return Err(anyhow!("internal error: no template {name} is loaded"));
            };
            match lifted::lift(source) {
                Some(lifted) => {
                    tera.add_raw_template(name, &lifted.source)
                        .map_err(internal)?;
                    texts.insert(name.to_owned(), lifted);
                }
                None => tera.add_raw_template(name, source).map_err(internal)?,
            }
        }
        let rendered = match texts.get(name) {
            Some(lifted) if !lifted.texts.is_empty() => {
                let mut context = context.clone();
                context.insert(lifted::TEXTS, &lifted.texts);
                tera.render(name, &context)
            }
            _ => tera.render(name, context),
        };
        let rendered = rendered
            .map_err(|e| anyhow!("{}", error_chain(&e)))
            .with_context(|| format!("internal error: cannot render template {name}"))?;
        match texts.get(name) {
            Some(lifted) => lifted
                .finish(&rendered, context)
                .with_context(|| format!("internal error: cannot render template {name}")),
            None => Ok(rendered),
        }
    }
}

/// `{{ resource.kind | a }}` is "an Issuer" or "a DemoMicroService"; `| a(start=true)` begins a
/// sentence: "An Issuer".
fn article_filter(value: &Value, args: &HashMap<String, Value>) -> tera::Result<Value> {
    let word = value
        .as_str()
        .ok_or_else(|| tera::Error::msg("the filter `a` takes a string"))?;
    let mut text = with_article(word);
    if args.get("start").and_then(Value::as_bool) == Some(true) {
        text.replace_range(..1, &text[..1].to_ascii_uppercase());
    }
    Ok(Value::String(text))
}

fn internal(e: tera::Error) -> anyhow::Error {
    anyhow!(
        "internal error: a built-in template does not parse: {}",
        error_chain(&e)
    )
}

/// Every template: those of `templates/`, and the runtime's files as raw ones.
fn collect_all(tera: &mut Vec<(String, &'static str)>, raw: &mut Vec<(String, &'static str)>) {
    collect(&TEMPLATES, "", tera, raw);
    let mut runtime = Vec::new();
    for (folder, manifest, sources) in &RUNTIME_CRATES {
        raw.push((format!("{RUNTIME_PREFIX}{folder}Cargo.toml"), manifest));
        let prefix = format!("{RUNTIME_PREFIX}{folder}src/");
        collect(sources, &prefix, &mut runtime, raw);
    }
    // A `.tera` file there would be written without being rendered.
    debug_assert!(runtime.is_empty(), "runtime/ holds no templates");
}

/// The files under `dir`, named `prefix` + their path: `.tera` templates (named without the
/// suffix) and the others.
fn collect(
    dir: &'static Dir<'static>,
    prefix: &str,
    tera: &mut Vec<(String, &'static str)>,
    raw: &mut Vec<(String, &'static str)>,
) {
    for file in dir.files() {
        let path = format!("{prefix}{}", file.path().to_string_lossy());
        let Some(text) = file.contents_utf8() else {
            continue;
        };
        match path.strip_suffix(".tera") {
            Some(name) => tera.push((name.to_owned(), text)),
            None => raw.push((path, text)),
        }
    }
    for sub in dir.dirs() {
        collect(sub, prefix, tera, raw);
    }
}

/// Tera nests the useful part of an error in its sources.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut msg = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        msg.push_str(": ");
        msg.push_str(&s.to_string());
        source = s.source();
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Templates are parsed when first rendered; this parses every one of them, so that a
    /// syntax error fails here rather than in the command that happens to render it.
    #[test]
    fn every_template_parses() {
        let (mut sources, mut raw) = (Vec::new(), Vec::new());
        collect_all(&mut sources, &mut raw);
        let mut tera = Tera::default();
        if let Err(e) = tera.add_raw_templates(sources.clone()) {
            panic!("{}", error_chain(&e));
        }
        // And as `render` parses them: with their text lifted out.
        let lifted: Vec<(String, String)> = sources
            .into_iter()
            .map(|(name, source)| {
                let source = lifted::lift(source).map_or(source.to_owned(), |l| l.source);
                (name, source)
            })
            .collect();
        if let Err(e) = Tera::default().add_raw_templates(lifted) {
            panic!("lifted: {}", error_chain(&e));
        }
    }
}
