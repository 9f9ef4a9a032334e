//! The templates: files under `templates/`, embedded in the binary so rbuilder needs nothing
//! from disk at run time. A `.tera` file is rendered with Tera; any other file (the runtime's
//! Rust sources, which are the same in every project) is copied as it is.

use anyhow::{Context as _, Result, anyhow};
use include_dir::{Dir, include_dir};
use tera::{Context, Tera};

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");

/// Renders the embedded templates by their path under `templates/`, without `.tera`.
pub struct Templates {
    tera: Tera,
    /// The files copied as they are, by path.
    raw: Vec<(String, &'static str)>,
    names: Vec<String>,
}

impl Templates {
    /// Parses the templates whose names start with one of `prefixes` (and the shared ones
    /// they include): parsing only what a command renders keeps rbuilder fast.
    pub fn load(prefixes: &[&str]) -> Result<Self> {
        let (mut files, mut raw) = (Vec::new(), Vec::new());
        collect(&TEMPLATES, &mut files, &mut raw);
        let wanted = |name: &str| {
            name.starts_with("shared/") || prefixes.iter().any(|p| name.starts_with(p))
        };
        files.retain(|(name, _)| wanted(name));
        raw.retain(|(name, _)| wanted(name));
        let mut names: Vec<String> = files
            .iter()
            .chain(&raw)
            .map(|(name, _)| name.clone())
            .collect();
        names.sort();
        let mut tera = Tera::default();
        // Generated files are code and YAML, never HTML.
        tera.autoescape_on(Vec::new());
        tera.add_raw_templates(files).map_err(|e| {
            anyhow!(
                "internal error: a built-in template does not parse: {}",
                error_chain(&e)
            )
        })?;
        Ok(Self { tera, raw, names })
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
        self.tera
            .render(name, context)
            .map_err(|e| anyhow!("{}", error_chain(&e)))
            .with_context(|| format!("internal error: cannot render template {name}"))
    }
}

/// The files under `dir`: `.tera` templates (named without the suffix) and the others.
fn collect(
    dir: &'static Dir<'static>,
    tera: &mut Vec<(String, &'static str)>,
    raw: &mut Vec<(String, &'static str)>,
) {
    for file in dir.files() {
        let path = file.path().to_string_lossy();
        let Some(text) = file.contents_utf8() else {
            continue;
        };
        match path.strip_suffix(".tera") {
            Some(name) => tera.push((name.to_owned(), text)),
            None => raw.push((path.into_owned(), text)),
        }
    }
    for sub in dir.dirs() {
        collect(sub, tera, raw);
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
