//! The Plan: every file a command will create or change, computed before anything is
//! written. Applying it is the only place rbuilder writes to disk, so path checks, conflict
//! detection, --dry-run and rollback each live here once.

use std::collections::{BTreeSet, HashSet};
use std::fs;
use std::io::{self, Write as _};
use std::path::{Component, Path, PathBuf};

use anyhow::{Context as _, Result, bail};

use super::record::{self, Record};

/// The longest file name (one path component) common file systems accept, in bytes.
const MAX_FILE_NAME: usize = 255;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A new file; it must not exist.
    Create,
    /// A change to an existing file (marker insertion, PROJECT update).
    Update,
    /// A scaffolded file written again because the user passed --force.
    Overwrite,
    /// A file rbuilder wrote that is no longer part of what it writes (`update`).
    Delete,
}

#[derive(Debug, Clone)]
struct FileOp {
    /// Relative to the project root, with '/' separators.
    path: String,
    action: Action,
    contents: String,
    /// What the file held when the plan read it (Update, Overwrite of an existing file):
    /// applying checks it is unchanged, and rollback restores it.
    original: Option<String>,
}

#[derive(Debug)]
pub struct Plan {
    root: PathBuf,
    ops: Vec<FileOp>,
    /// Files whose template base the record (PROJECT.sum) is told outright: `update`'s, for
    /// the user's files that are as its templates make them.
    bases: Vec<(String, String)>,
    /// The crates of the Cargo.lock this plan writes, for the record.
    crates: Option<BTreeSet<(String, String)>>,
    /// Whether the record's change is planned already.
    recorded: bool,
}

impl Plan {
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.to_owned(),
            ops: Vec::new(),
            bases: Vec::new(),
            crates: None,
            recorded: false,
        }
    }

    /// Tells the record that rbuilder's templates make `path` as `content` (which the plan
    /// does not write: the file on disk is already so).
    pub fn record_base(&mut self, path: impl Into<String>, content: &str) {
        self.bases.push((path.into(), record::digest(content)));
    }

    /// Tells the record the crate versions of the Cargo.lock this plan writes (rbuilder's
    /// tested resolution).
    pub fn record_crates(&mut self, crates: BTreeSet<(String, String)>) {
        self.crates = Some(crates);
    }

    /// Plans the record's change (PROJECT.sum) from what the plan writes, once: a file created
    /// from a template is recorded as written; one inserted into keeps its line only if it was
    /// as rbuilder last left it. Only a project's plan keeps a record (one with a PROJECT).
    fn plan_record(&mut self) -> Result<()> {
        if std::mem::replace(&mut self.recorded, true) {
            return Ok(());
        }
        if !self.exists(crate::project::FILE) {
            return Ok(());
        }
        let before = self.read(record::FILE)?;
        let mut record = match &before {
            Some(text) => Record::parse(text)?,
            None => Record::default(),
        };
        for op in self.ops.iter().filter(|op| op.path != record::FILE) {
            let path = op.path.clone();
            match op.action {
                Action::Delete => {
                    record.files.remove(&path);
                }
                _ if !record::follows(&op.path, &op.contents) => {}
                Action::Create | Action::Overwrite => {
                    record.files.insert(path, record::digest(&op.contents));
                }
                Action::Update => {
                    let base = record.files.get(&path);
                    let as_left = op.original.as_deref().map(record::digest);
                    if base.is_some() && base == as_left.as_ref() {
                        record.files.insert(path, record::digest(&op.contents));
                    } else {
                        record.files.remove(&path);
                    }
                }
            }
        }
        record.files.extend(self.bases.iter().cloned());
        if let Some(crates) = &self.crates {
            record.crates.clone_from(crates);
        }
        let text = record.render();
        match before {
            Some(before) if before == text => Ok(()),
            Some(_) => self.update(record::FILE, |_| Ok(text)),
            None => self.create(record::FILE, text),
        }
    }

    /// Plans a new file. Planning the same path twice is a bug in a command.
    pub fn create(&mut self, path: impl Into<String>, contents: String) -> Result<()> {
        let path = path.into();
        if self.ops.iter().any(|op| op.path == path) {
            bail!("internal error: {path} is planned twice");
        }
        self.ops.push(FileOp {
            path,
            action: Action::Create,
            contents,
            original: None,
        });
        Ok(())
    }

    /// Plans a scaffolded file that --force may write over.
    pub fn overwrite(&mut self, path: impl Into<String>, contents: String) -> Result<()> {
        let path = path.into();
        match self.read(&path)? {
            Some(original) => {
                self.ops.retain(|op| op.path != path);
                self.ops.push(FileOp {
                    path,
                    action: Action::Overwrite,
                    contents,
                    original: Some(original),
                });
                Ok(())
            }
            None => self.create(path, contents),
        }
    }

    /// Plans a change to an existing file (or to one this plan already creates): `edit`
    /// gets its current contents and returns the new ones.
    pub fn update(
        &mut self,
        path: impl Into<String>,
        edit: impl FnOnce(&str) -> Result<String>,
    ) -> Result<()> {
        let path = path.into();
        if let Some(op) = self.ops.iter_mut().find(|op| op.path == path) {
            op.contents = edit(&op.contents)?;
            return Ok(());
        }
        let Some(original) = self.read(&path)? else {
            bail!(
                "{path} is missing: rbuilder needs it to register the new code; restore it \
                 (e.g. from version control) and run the command again"
            );
        };
        let contents = edit(&original)?;
        if contents != original {
            self.ops.push(FileOp {
                path,
                action: Action::Update,
                contents,
                original: Some(original),
            });
        }
        Ok(())
    }

    /// Plans the removal of the existing file `path`.
    pub fn delete(&mut self, path: impl Into<String>) -> Result<()> {
        let path = path.into();
        let Some(original) = self.read(&path)? else {
            bail!("internal error: {path} is to be deleted but does not exist");
        };
        self.ops.retain(|op| op.path != path);
        self.ops.push(FileOp {
            path,
            action: Action::Delete,
            contents: String::new(),
            original: Some(original),
        });
        Ok(())
    }

    /// The current text of `path`: as planned, else as on disk, else None.
    pub fn read(&self, path: &str) -> Result<Option<String>> {
        if let Some(op) = self.ops.iter().find(|op| op.path == path) {
            return Ok(Some(op.contents.clone()));
        }
        match fs::read_to_string(self.root.join(path)) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {path}")),
        }
    }

    /// Whether `path` exists, on disk or in this plan.
    pub fn exists(&self, path: &str) -> bool {
        self.ops.iter().any(|op| op.path == path) || self.root.join(path).exists()
    }

    /// One line per file: `create src/main.rs`.
    pub fn describe(&self) -> String {
        self.ops
            .iter()
            .map(|op| {
                let verb = match op.action {
                    Action::Create => "create",
                    Action::Update => "update",
                    Action::Overwrite => "overwrite",
                    Action::Delete => "delete",
                };
                format!("{verb:>9} {}\n", op.path)
            })
            .collect()
    }

    /// The files --force writes over, for the command to report.
    pub fn overwritten(&self) -> Vec<&str> {
        self.ops
            .iter()
            .filter(|op| op.action == Action::Overwrite)
            .map(|op| op.path.as_str())
            .collect()
    }

    /// Checks every path and conflict first, then writes each file (a replaced one atomically,
    /// see `write_atomically`); if any write
    /// fails, undoes the ones before it so the tree is left as it was.
    pub fn apply(&mut self) -> Result<()> {
        self.check()?;
        let mut done = Undo::default();
        // Folders known to exist: each is looked up once, not once a file.
        let mut dirs = HashSet::new();
        for op in &self.ops {
            if let Err(e) = self.write(op, &mut done, &mut dirs) {
                done.roll_back();
                return Err(e.context("nothing was changed"));
            }
        }
        Ok(())
    }

    /// Everything `apply` checks before it writes: paths, and conflicts with the disk.
    pub fn check(&mut self) -> Result<()> {
        self.plan_record()?;
        // Folders already checked: each is looked up once, not once a file in it.
        let mut dirs = HashSet::new();
        self.ops
            .iter()
            .try_for_each(|op| self.check_op(op, &mut dirs))
    }

    fn check_op(&self, op: &FileOp, dirs: &mut HashSet<PathBuf>) -> Result<()> {
        let rel = Path::new(&op.path);
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            bail!(
                "internal error: {} is not a path inside the project",
                op.path
            );
        }
        // File systems refuse longer names (e.g. a CRD file named after a very long group).
        if let Some(long) = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .find(|c| c.len() > MAX_FILE_NAME)
        {
            bail!(
                "the file name '{long}' would be longer than {MAX_FILE_NAME} bytes; choose \
                 shorter names"
            );
        }
        // An ancestor that is a symlink or a file would send the write elsewhere, or fail.
        let mut dir = self.root.clone();
        for c in rel.parent().into_iter().flat_map(Path::components) {
            dir.push(c);
            if !dirs.insert(dir.clone()) {
                continue;
            }
            match fs::symlink_metadata(&dir) {
                Ok(m) if m.file_type().is_symlink() => bail!(
                    "{} is a symbolic link; rbuilder only writes inside the project folder",
                    dir.display()
                ),
                Ok(m) if !m.is_dir() => bail!(
                    "{} is a file, but rbuilder needs a folder there for {}",
                    dir.display(),
                    op.path
                ),
                _ => {}
            }
        }
        let target = self.root.join(&op.path);
        let metadata = fs::symlink_metadata(&target);
        if let Ok(m) = &metadata {
            if m.file_type().is_symlink() {
                bail!(
                    "{} is a symbolic link; rbuilder writes only regular files, so replace the \
                     link with the file it points to",
                    op.path
                );
            }
            if op.action != Action::Create && m.permissions().readonly() {
                bail!(
                    "{} is read-only; make it writable (chmod u+w {}) so that rbuilder can \
                     update it",
                    op.path,
                    op.path
                );
            }
        }
        let current = match metadata {
            // Most files a command writes are new: no read for them.
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            _ => match fs::read_to_string(&target) {
                Ok(text) => Some(text),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => return Err(e).with_context(|| format!("cannot read {}", op.path)),
            },
        };
        match (op.action, current) {
            (Action::Create, Some(_)) => bail!(
                "{} already exists; rbuilder never overwrites it silently: move it away first",
                op.path
            ),
            (Action::Update | Action::Overwrite | Action::Delete, current)
                if current != op.original =>
            {
                bail!(
                    "{} changed while rbuilder was running; run the command again",
                    op.path
                )
            }
            _ => Ok(()),
        }
    }

    fn write(&self, op: &FileOp, done: &mut Undo, dirs: &mut HashSet<PathBuf>) -> Result<()> {
        let target = self.root.join(&op.path);
        if op.action == Action::Delete {
            fs::remove_file(&target).with_context(|| format!("cannot delete {}", op.path))?;
            done.files.push((target, op.original.clone()));
            return Ok(());
        }
        if let Some(parent) = target.parent() {
            create_dirs(parent, done, dirs)
                .with_context(|| format!("cannot create the folder for {}", op.path))?;
        }
        let written = match op.action {
            Action::Create => write_new(&target, &op.contents),
            _ => write_atomically(&target, &op.contents),
        };
        written.with_context(|| format!("cannot write {}", op.path))?;
        done.files.push((target, op.original.clone()));
        Ok(())
    }
}

/// Writes a new file, refusing to replace one that appeared since the plan was checked. It is
/// neither written through a temporary file nor synced: nothing of the user's is at stake (a
/// failure removes it, a crash at worst leaves it short), and scaffolding stays in
/// milliseconds: a sync costs about as much as rendering a template, a rename a file creation.
fn write_new(target: &Path, contents: &str) -> io::Result<()> {
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(target)?;
    let written = f.write_all(contents.as_bytes());
    if written.is_err() {
        // Created but not written (a full disk): the rollback only knows the files written.
        let _ = fs::remove_file(target);
    }
    written
}

/// Writes a sibling temporary file, then renames it over the target, so a file is never
/// seen half-written. A replaced file keeps its permissions, and its new contents reach the
/// disk before the rename, so that a crash cannot leave the user's file empty.
fn write_atomically(target: &Path, contents: &str) -> io::Result<()> {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = target.with_file_name(format!(".{name}.rbuilder-tmp"));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(contents.as_bytes())?;
        if let Ok(m) = fs::metadata(target) {
            f.sync_all()?;
            fs::set_permissions(&tmp, m.permissions())?;
        }
        fs::rename(&tmp, target)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Creates `dir` and its missing ancestors, recording each one created for rollback; `known`
/// holds the folders known to exist.
fn create_dirs(dir: &Path, done: &mut Undo, known: &mut HashSet<PathBuf>) -> io::Result<()> {
    if known.contains(dir) {
        return Ok(());
    }
    if !dir.is_dir() {
        if let Some(parent) = dir.parent() {
            create_dirs(parent, done, known)?;
        }
        fs::create_dir(dir)?;
        done.dirs.push(dir.to_owned());
    }
    known.insert(dir.to_owned());
    Ok(())
}

/// What a partly applied plan did, so it can be undone.
#[derive(Default)]
struct Undo {
    /// Each written file with what it held before (None: it did not exist).
    files: Vec<(PathBuf, Option<String>)>,
    dirs: Vec<PathBuf>,
}

impl Undo {
    /// Best effort: a rollback that itself fails cannot be reported more usefully than the
    /// error that caused it, which the caller returns.
    fn roll_back(self) {
        for (path, original) in self.files.into_iter().rev() {
            let _ = match original {
                Some(text) => fs::write(&path, text),
                None => fs::remove_file(&path),
            };
        }
        for dir in self.dirs.into_iter().rev() {
            let _ = fs::remove_dir(&dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_never_replaces_one_that_appeared_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.rs");
        write_new(&target, "ours").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "ours");
        // Someone else's file, created after the plan was checked.
        fs::write(&target, "theirs").unwrap();
        assert!(write_new(&target, "ours again").is_err());
        assert_eq!(fs::read_to_string(&target).unwrap(), "theirs");
    }

    fn tree(root: &Path) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![root.to_owned()];
        while let Some(dir) = stack.pop() {
            for entry in fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                out.push(path.strip_prefix(root).unwrap().display().to_string());
                if path.is_dir() {
                    stack.push(path);
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn applies_creates_and_updates() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("list.txt"), "a\n").unwrap();
        let mut plan = Plan::new(dir.path());
        plan.create("src/x/new.rs", "new\n".into()).unwrap();
        plan.update("list.txt", |s| Ok(format!("{s}b\n"))).unwrap();
        assert_eq!(
            plan.describe(),
            "   create src/x/new.rs\n   update list.txt\n"
        );
        plan.apply().unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("list.txt")).unwrap(),
            "a\nb\n"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("src/x/new.rs")).unwrap(),
            "new\n"
        );
    }

    #[test]
    fn refuses_to_create_over_an_existing_file_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("taken.rs"), "mine\n").unwrap();
        let mut plan = Plan::new(dir.path());
        plan.create("a/first.rs", "x".into()).unwrap();
        plan.create("taken.rs", "theirs".into()).unwrap();
        let err = plan.apply().unwrap_err().to_string();
        assert!(err.contains("taken.rs already exists"), "{err}");
        assert_eq!(tree(dir.path()), ["taken.rs"]);
        assert_eq!(
            fs::read_to_string(dir.path().join("taken.rs")).unwrap(),
            "mine\n"
        );
    }

    #[test]
    fn a_failure_midway_rolls_back_everything() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("list.txt"), "a\n").unwrap();
        let mut plan = Plan::new(dir.path());
        plan.update("list.txt", |s| Ok(format!("{s}b\n"))).unwrap();
        plan.create("d/one.txt", "1".into()).unwrap();
        // Passes the checks (nothing exists yet) but cannot be written: its parent will be
        // the file written just before it.
        plan.create("d/one.txt/two.txt", "2".into()).unwrap();
        let err = format!("{:#}", plan.apply().unwrap_err());
        assert!(err.starts_with("nothing was changed"), "{err}");
        assert_eq!(tree(dir.path()), ["list.txt"]);
        assert_eq!(
            fs::read_to_string(dir.path().join("list.txt")).unwrap(),
            "a\n"
        );
    }

    #[test]
    fn paths_must_stay_inside_the_project() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["../escape.rs", "/etc/passwd", "a/../../b"] {
            let mut plan = Plan::new(dir.path());
            plan.create(bad, String::new()).unwrap();
            assert!(plan.apply().is_err(), "{bad}");
        }
        assert!(tree(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn does_not_write_through_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("src")).unwrap();
        let mut plan = Plan::new(dir.path());
        plan.create("src/main.rs", String::new()).unwrap();
        assert!(plan.apply().is_err());
        assert!(tree(outside.path()).is_empty());
    }
}
