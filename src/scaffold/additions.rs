//! What a command adds to a project, declared as data: the files it writes, each with its
//! path, its body (a template, a text, or a template merged into what the file holds), what
//! happens if it exists, the template variables of its own, and the lines it inserts before
//! markers of other files to register itself. A command lists these [`Entry`]s in an
//! [`Additions`]; planning them is the same for every command.

use std::borrow::Cow;

use anyhow::Result;
use serde::Serialize;

use super::{Plan, Templates, markers};

/// What to do when a file a command writes already exists.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum IfExists {
    /// Refuse (it is the command's own file), unless --force rewrites it.
    Refuse,
    /// Keep it (a module file that the kinds of a version or group share).
    Keep,
    /// Write it again (a file generated from the project, such as a dashboard).
    Rewrite,
}

/// The lines a fragment template renders, inserted before a marker comment of a file: the
/// three named together, so that one place says where a registration goes and what it says.
#[derive(Clone, Debug)]
pub struct Insert {
    pub file: Cow<'static, str>,
    pub marker: &'static str,
    /// A template's name under `templates/` (`inserts/...`).
    pub fragment: &'static str,
}

impl Insert {
    /// An insert into a file whose path depends on the resource.
    pub fn into_file(file: String, marker: &'static str, fragment: &'static str) -> Self {
        Self {
            file: Cow::Owned(file),
            marker,
            fragment,
        }
    }
}

/// How a merged file combines what it holds (if it exists) with the new text, `path` naming it
/// in errors: a CRD gains a version.
pub type Merge = fn(existing: Option<&str>, rendered: &str, path: &str) -> Result<String>;

enum Body {
    Template(String),
    /// Not from a template: an external resource's types, translated from its CRD.
    Text(String),
    /// Made by the command, merged into what the file holds.
    Merged {
        text: String,
        merge: Merge,
    },
}

/// One file a command writes and the inserts that register it.
pub struct Entry {
    path: String,
    body: Body,
    if_exists: IfExists,
    /// Variables of this file only, overlaid on the command's: a spoke's conversion is
    /// rendered with that spoke as `version`.
    context: Option<tera::Context>,
    inserts: Vec<Insert>,
}

impl Entry {
    /// `path`, rendered from `template`.
    pub fn template(
        path: impl Into<String>,
        template: impl Into<String>,
        if_exists: IfExists,
    ) -> Self {
        Self::new(path.into(), Body::Template(template.into()), if_exists)
    }

    /// `path`, holding `text`.
    pub fn text(path: impl Into<String>, text: String, if_exists: IfExists) -> Self {
        Self::new(path.into(), Body::Text(text), if_exists)
    }

    /// `path`, `text` merged by `merge` into what it holds.
    pub fn merged(path: impl Into<String>, text: String, merge: Merge) -> Self {
        Self::new(path.into(), Body::Merged { text, merge }, IfExists::Refuse)
    }

    fn new(path: String, body: Body, if_exists: IfExists) -> Self {
        Self {
            path,
            body,
            if_exists,
            context: None,
            inserts: Vec::new(),
        }
    }

    /// Renders this file and its inserts with `key` set to `value` as well.
    pub fn with(mut self, key: &str, value: &impl Serialize) -> Self {
        self.context
            .get_or_insert_with(tera::Context::new)
            .insert(key, value);
        self
    }

    /// Adds `insert` to what this file registers.
    pub fn inserting(mut self, insert: Insert) -> Self {
        self.inserts.push(insert);
        self
    }

    /// Inserts `fragment` before `marker` in `file`.
    pub fn insert(
        self,
        file: impl Into<String>,
        marker: &'static str,
        fragment: &'static str,
    ) -> Self {
        self.inserting(Insert::into_file(file.into(), marker, fragment))
    }

    /// The command's variables with this file's own overlaid.
    fn context<'a>(&self, base: &'a tera::Context) -> Cow<'a, tera::Context> {
        // Most files have none: no copy of the command's variables for them.
        let Some(own) = &self.context else {
            return Cow::Borrowed(base);
        };
        let mut ctx = base.clone();
        ctx.extend(own.clone());
        Cow::Owned(ctx)
    }
}

/// In which order the plan gets the entries' operations, which is the order `--dry-run` lists
/// them in (and each command keeps the order it has always had).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    /// Every file (templates, then texts, then merged files), then every insert.
    #[default]
    FilesFirst,
    /// Each file, then its inserts.
    EachFileWithItsInserts,
}

/// Everything a command adds, in the order it is declared. A file must come before an entry
/// that inserts into it, so that an insert can go into a file the same command creates.
#[derive(Default)]
pub struct Additions {
    entries: Vec<Entry>,
    order: Order,
}

impl Additions {
    pub fn new(order: Order) -> Self {
        Self {
            entries: Vec::new(),
            order,
        }
    }

    pub fn add(&mut self, entry: Entry) {
        self.entries.push(entry);
    }

    /// Adds all of it to `plan`, rendering with `ctx` (and each entry's own variables);
    /// `force` rewrites the command's own files.
    pub fn plan(
        &self,
        plan: &mut Plan,
        templates: &Templates,
        ctx: &tera::Context,
        force: bool,
    ) -> Result<()> {
        match self.order {
            Order::FilesFirst => {
                let is_template = |e: &&Entry| matches!(e.body, Body::Template(_));
                let is_text = |e: &&Entry| matches!(e.body, Body::Text(_));
                let is_merged = |e: &&Entry| matches!(e.body, Body::Merged { .. });
                for entry in self.entries.iter().filter(is_template) {
                    entry.plan_file(plan, templates, ctx, force)?;
                }
                for entry in self.entries.iter().filter(is_text) {
                    entry.plan_file(plan, templates, ctx, force)?;
                }
                for entry in self.entries.iter().filter(is_merged) {
                    entry.plan_file(plan, templates, ctx, force)?;
                }
                for entry in &self.entries {
                    entry.plan_inserts(plan, templates, ctx)?;
                }
            }
            Order::EachFileWithItsInserts => {
                for entry in &self.entries {
                    entry.plan_file(plan, templates, ctx, force)?;
                    entry.plan_inserts(plan, templates, ctx)?;
                }
            }
        }
        Ok(())
    }
}

impl Entry {
    fn plan_file(
        &self,
        plan: &mut Plan,
        templates: &Templates,
        ctx: &tera::Context,
        force: bool,
    ) -> Result<()> {
        let path = &self.path;
        let exists = plan.exists(path);
        if self.if_exists == IfExists::Keep && exists {
            return Ok(());
        }
        let ctx = self.context(ctx);
        let text = match &self.body {
            Body::Template(template) => templates.render(template, &ctx)?,
            Body::Text(text) => text.clone(),
            Body::Merged { text, merge } => {
                let existing = plan.read(path)?;
                let merged = merge(existing.as_deref(), text, path)?;
                return match existing {
                    Some(_) => plan.update(path.clone(), |_| Ok(merged)),
                    None => plan.create(path.clone(), merged),
                };
            }
        };
        match self.if_exists {
            IfExists::Refuse if force => plan.overwrite(path.clone(), text),
            IfExists::Rewrite if exists => plan.update(path.clone(), |_| Ok(text)),
            _ => plan.create(path.clone(), text),
        }
    }

    fn plan_inserts(
        &self,
        plan: &mut Plan,
        templates: &Templates,
        ctx: &tera::Context,
    ) -> Result<()> {
        if self.inserts.is_empty() {
            return Ok(());
        }
        let ctx = self.context(ctx);
        for insert in &self.inserts {
            let text = templates.render(insert.fragment, &ctx)?;
            let lines: Vec<String> = text.lines().map(str::to_owned).collect();
            let file = &insert.file;
            plan.update(file.to_string(), |content| {
                markers::insert(content, file, insert.marker, &lines)
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two version modules from one template, each with its own `version`, each listed in
    /// the file the first creates: the overlay, and an insert into a file planned just before.
    #[test]
    fn entries_render_with_their_own_variables_and_insert_into_files_made_before() {
        let dir = tempfile::tempdir().unwrap();
        let templates = Templates::load(&["webhook/", "inserts/"]).unwrap();
        let mut ctx = tera::Context::new();
        ctx.insert("header", "");
        let mut add = Additions::new(Order::EachFileWithItsInserts);
        add.add(Entry::text(
            "mod.rs",
            "// +rbuilder:scaffold:webhook-modules\n".into(),
            IfExists::Keep,
        ));
        for version in ["v1", "v2"] {
            add.add(
                Entry::template(
                    format!("{version}/mod.rs"),
                    "webhook/version_mod.rs",
                    IfExists::Keep,
                )
                .with("version", &version)
                .insert(
                    "mod.rs",
                    "webhook-modules",
                    "inserts/webhook_mod_version.rs",
                ),
            );
        }
        let mut plan = Plan::new(dir.path());
        add.plan(&mut plan, &templates, &ctx, false).unwrap();
        let v2 = plan.read("v2/mod.rs").unwrap().unwrap();
        assert!(
            v2.starts_with("//! The webhooks of the kinds of version v2."),
            "{v2}"
        );
        let listed = plan.read("mod.rs").unwrap().unwrap();
        assert_eq!(
            listed,
            "pub mod v1;\npub mod v2;\n// +rbuilder:scaffold:webhook-modules\n"
        );
        assert!(
            ctx.get("version").is_none(),
            "the command's variables are left as they were"
        );
    }

    /// What each rule does with a file that exists: Keep leaves it, Rewrite writes it again,
    /// Refuse fails unless forced.
    #[test]
    fn if_exists_rules() {
        let dir = tempfile::tempdir().unwrap();
        for file in ["keep", "rewrite", "refuse"] {
            std::fs::write(dir.path().join(file), "old").unwrap();
        }
        let templates = Templates::load(&["inserts/"]).unwrap();
        let ctx = tera::Context::new();
        let additions = |rule: IfExists, file: &str| {
            let mut add = Additions::new(Order::FilesFirst);
            add.add(Entry::text(file, "new".into(), rule));
            add
        };
        let mut plan = Plan::new(dir.path());
        additions(IfExists::Keep, "keep")
            .plan(&mut plan, &templates, &ctx, false)
            .unwrap();
        additions(IfExists::Rewrite, "rewrite")
            .plan(&mut plan, &templates, &ctx, false)
            .unwrap();
        assert_eq!(plan.describe(), "   update rewrite\n");
        let refuse = additions(IfExists::Refuse, "refuse");
        refuse.plan(&mut plan, &templates, &ctx, true).unwrap();
        assert_eq!(plan.overwritten(), ["refuse"]);
        let mut plan = Plan::new(dir.path());
        refuse.plan(&mut plan, &templates, &ctx, false).unwrap();
        assert!(
            plan.check().is_err(),
            "creating a file that exists fails when applied"
        );
    }
}
