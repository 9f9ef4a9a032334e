//! The templates: Tera files under `templates/`, embedded in the binary so rbuilder needs
//! nothing from disk at run time.

use anyhow::{Context as _, Result, anyhow};
use include_dir::{Dir, include_dir};
use tera::{Context, Tera};

static TEMPLATES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/templates");

/// Renders the embedded templates by their path under `templates/`, without `.tera`.
pub struct Templates {
    tera: Tera,
    names: Vec<String>,
}

impl Templates {
    /// Parses the templates whose names start with one of `prefixes` (and the shared ones
    /// they include): parsing only what a command renders keeps rbuilder fast.
    pub fn load(prefixes: &[&str]) -> Result<Self> {
        let mut files = Vec::new();
        collect(&TEMPLATES, &mut files);
        files.retain(|(name, _)| {
            name.starts_with("shared/") || prefixes.iter().any(|p| name.starts_with(p))
        });
        let mut names: Vec<String> = files.iter().map(|(name, _)| name.clone()).collect();
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
        Ok(Self { tera, names })
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
        self.tera
            .render(name, context)
            .map_err(|e| anyhow!("{}", error_chain(&e)))
            .with_context(|| format!("internal error: cannot render template {name}"))
    }
}

fn collect(dir: &'static Dir<'static>, out: &mut Vec<(String, &'static str)>) {
    for file in dir.files() {
        let path = file.path().to_string_lossy();
        if let (Some(name), Some(text)) = (path.strip_suffix(".tera"), file.contents_utf8()) {
            out.push((name.to_owned(), text));
        }
    }
    for sub in dir.dirs() {
        collect(sub, out);
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
