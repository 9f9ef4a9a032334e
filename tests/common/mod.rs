//! Helpers shared by the integration tests: run rbuilder in a folder, and snapshot a tree so
//! a test can assert that a rejected command left it exactly as it was.

#![allow(dead_code)] // each test binary uses its own subset

pub mod control_plane;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// `rbuilder <args>` run in `dir`.
pub fn rbuilder(dir: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    Command::cargo_bin("rbuilder")
        .expect("the rbuilder binary is built")
        .current_dir(dir)
        .env("SOURCE_DATE_EPOCH", "1780000000")
        .args(args)
        .assert()
}

/// Every file under `dir` with its bytes, and every folder (as an empty entry).
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("readable folder") {
            let path = entry.expect("entry").path();
            let rel = path.strip_prefix(dir).expect("inside").to_owned();
            if path.is_dir() {
                out.insert(rel, None);
                stack.push(path);
            } else {
                out.insert(rel, Some(std::fs::read(&path).expect("readable file")));
            }
        }
    }
    out
}

/// A new folder named `name` (the project name comes from it) inside a temporary folder,
/// beside `crds`, a link to `testdata/crds`: commands give CRDs as `../crds/...`, the path
/// that also works from a golden tree (`testdata/<tree>`); and beside `kubebuilder-projects`,
/// a link to kubebuilder's projects that `alpha generate` migrates; and beside `headers`, the
/// license headers of `--license-file`.
pub fn project_dir(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path().join(name);
    std::fs::create_dir(&dir).expect("create project folder");
    for linked in ["crds", "kubebuilder-projects", "headers"] {
        std::os::unix::fs::symlink(
            repo().join("testdata").join(linked),
            tmp.path().join(linked),
        )
        .expect("link a folder of testdata");
    }
    (tmp, dir)
}

/// A folder with `rbuilder init --domain my.domain` done.
pub fn initialized(name: &str) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = project_dir(name);
    rbuilder(&dir, &["init", "--domain", "my.domain"]).success();
    (tmp, dir)
}

/// Asserts the command failed with one `error:` line containing each of `needles`, and
/// that the folder is exactly as before.
pub fn assert_rejected(dir: &Path, args: &[&str], needles: &[&str]) {
    let before = snapshot(dir);
    let out = rbuilder(dir, args).failure().get_output().clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(
        lines.len(),
        1,
        "one error line expected for {args:?}, got:\n{stderr}"
    );
    assert!(lines[0].starts_with("error:"), "{stderr}");
    for needle in needles {
        assert!(
            stderr.contains(needle),
            "the error for {args:?} should mention {needle:?}:\n{stderr}"
        );
    }
    assert_eq!(before, snapshot(dir), "{args:?} changed the folder");
}

/// Asserts that the trees `expected` and `actual` (snapshots) hold the same files with the same
/// bytes, naming the first path that differs.
pub fn assert_same_tree(
    expected: &BTreeMap<PathBuf, Option<Vec<u8>>>,
    actual: &BTreeMap<PathBuf, Option<Vec<u8>>>,
    what: &str,
) {
    for path in expected.keys().chain(actual.keys()) {
        let (a, b) = (expected.get(path), actual.get(path));
        assert!(
            a == b,
            "{what}: {} differs (or is missing on one side)",
            path.display()
        );
    }
}

/// The repository's root.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `command` set up to build a generated project as a user's shell would, its intermediate
/// files in the shared folder ([`shared_target_dir`], as cargo's build folder), one-shot (no
/// incremental data, no debug info: they would cost gigabytes per project and slower links, and
/// change nothing a test looks at).
///
/// The binaries go to the project's own `target/`, as a user's do: in a shared target folder,
/// `target/debug/manifests` (every project has one) and the example's binaries (the recipes of
/// docs/extending.md build copies of it) were one file for every tree built side by side, and a
/// tree could run another's `manifests --check` between its build and its run.
///
/// Without the variables cargo sets for a running test (`CARGO_MANIFEST_DIR`, `CARGO_PKG_NAME`
/// and the like): build scripts such as ring's ask to run again when those change
/// (`rerun-if-env-changed`), so a build from a test, after one from a shell (rbuilder's own,
/// scripts/e2e.sh), would rebuild ring and everything above it (rustls, kube, the runtime) in
/// the shared folder, and the next build from a shell would rebuild them back.
pub fn as_a_users_build(command: &mut std::process::Command) -> &mut std::process::Command {
    const SET_FOR_TESTS: &[&str] = &[
        "CARGO_MANIFEST_DIR",
        "CARGO_MANIFEST_PATH",
        "CARGO_MANIFEST_LINKS",
        "CARGO_CRATE_NAME",
        "CARGO_BIN_NAME",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_TARGET_TMPDIR",
        "CARGO_RUSTC_CURRENT_DIR",
        "OUT_DIR",
    ];
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if SET_FOR_TESTS.contains(&name)
            || name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_BIN_EXE_")
        {
            command.env_remove(name);
        }
    }
    command
        .env_remove("CARGO_TARGET_DIR")
        .env("CARGO_BUILD_BUILD_DIR", shared_target_dir())
        .env("CARGO_INCREMENTAL", "0")
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
}

/// The target folder of every generated project's build: rbuilder's own (CARGO_TARGET_DIR if
/// set, else `target/`). The projects and this workspace resolve most dependencies alike and
/// build them with the same dev profile (`[profile.dev]` in both Cargo.toml files), so kube,
/// tokio, rustls and the rest compile once for all of them, not once here and once more there.
pub fn shared_target_dir() -> std::path::PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => repo().join(dir),
        _ => repo().join("target"),
    }
}

/// A command line's words: separated by spaces, with "double quotes" around a word that holds
/// spaces (or is empty).
pub fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut rest = line.trim_start();
    while !rest.is_empty() {
        let (word, after) = match rest.strip_prefix('"') {
            Some(quoted) => {
                let end = quoted
                    .find('"')
                    .unwrap_or_else(|| panic!("unclosed quote in {line}"));
                (&quoted[..end], &quoted[end + 1..])
            }
            None => rest.split_at(rest.find(' ').unwrap_or(rest.len())),
        };
        words.push(word.to_owned());
        rest = after.trim_start();
    }
    words
}

/// `rbuilder <line>` run in `dir`, the line split into words as [`words`] does.
pub fn run(dir: &Path, line: &str) -> assert_cmd::assert::Assert {
    let words = words(line);
    let args: Vec<&str> = words.iter().map(String::as_str).collect();
    rbuilder(dir, &args)
}

/// A command line of `testdata/variants.txt` and the exit status it must end with: 0, or the
/// status written before it in brackets (`[3] alpha generate ...`: a migration that leaves
/// something out).
pub fn expected_status(line: &str) -> (i32, &str) {
    if let Some(rest) = line.strip_prefix('[')
        && let Some((status, command)) = rest.split_once("] ")
        && let Ok(status) = status.parse()
    {
        return (status, command);
    }
    (0, line)
}

/// A golden tree of `testdata/variants.txt`: a folder of the repository, and the commands that
/// make it.
pub struct Variant {
    /// From the repository's root: `testdata/plain`.
    pub path: String,
    /// Each an rbuilder command line, without `rbuilder`.
    pub commands: Vec<String>,
}

impl Variant {
    /// The folder's name, which is the project's.
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// Whether the tree keeps its copy of the runtime: only the example does, as a project a
    /// user can browse whole. The others are compared without it (see [`runtime_files`]).
    pub fn holds_runtime(&self) -> bool {
        self.path.starts_with("examples/")
    }

    /// The runtime's files as the variant's commands write them, by path: scaffolded afresh
    /// in a temporary folder (milliseconds), for a golden tree that holds no copy of them.
    pub fn scaffolded_runtime(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let (_tmp, dir) = project_dir(self.name());
        self.scaffold(&dir);
        let mut files = project_files(&dir);
        files.retain(|path, _| is_runtime_file(path));
        files
    }

    /// Runs the variant's commands in `dir`, a new folder named [`Self::name`].
    pub fn scaffold(&self, dir: &Path) {
        for line in &self.commands {
            let (status, command) = expected_status(line);
            let out = run(dir, command).get_output().clone();
            assert!(
                out.status.code() == Some(status),
                "`rbuilder {command}` ended with {} for {}, not {status}:\n{}",
                out.status,
                self.path,
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// The golden trees listed in `testdata/variants.txt`.
pub fn variants() -> Vec<Variant> {
    let file = repo().join("testdata/variants.txt");
    let text = std::fs::read_to_string(&file).expect("testdata/variants.txt");
    let mut variants: Vec<Variant> = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with(' ') {
            let variant = variants.last_mut().expect("a folder before its commands");
            variant.commands.push(line.trim().to_owned());
        } else {
            variants.push(Variant {
                path: line.trim().to_owned(),
                commands: Vec::new(),
            });
        }
    }
    variants
}

/// Every file of the project at `dir` with its bytes, by path: what rbuilder writes (its
/// Cargo.lock too), not build outputs (`target/`).
pub fn project_files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    snapshot(dir)
        .into_iter()
        .filter(|(path, _)| !path.starts_with("target"))
        .filter_map(|(path, contents)| contents.map(|bytes| (path, bytes)))
        .map(|(path, bytes)| {
            let bytes = match path == Path::new("PROJECT") {
                true => without_commit(bytes),
                false => bytes,
            };
            (path, bytes)
        })
        .collect()
}

/// PROJECT's cliVersion without the commit rbuilder was built from (`0.1.0+0123456789ab` is
/// `0.1.0`): the golden trees are checked in before their commit exists.
fn without_commit(bytes: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8_lossy(&bytes);
    let release = format!("cliVersion: \"{}\"", env!("CARGO_PKG_VERSION"));
    text.lines()
        .map(|line| match line.starts_with("cliVersion: ") {
            true => format!("{release}\n"),
            false => format!("{line}\n"),
        })
        .collect::<String>()
        .into_bytes()
}

/// Whether `path`, in a project, is one of the runtime's files (`runtime/...`).
pub fn is_runtime_file(path: &Path) -> bool {
    path.starts_with("runtime")
}

/// The workspace's runtime files, by their path in a project: the `Cargo.toml` and `src/...` of
/// `runtime/` and of its crates `core/`, `manifests/` and `testing/`, each of which rbuilder writes into every project byte for byte, under a
/// header of comments (the project's license, rbuilder's ownership stamp). Golden trees other
/// than the example hold no copy of them (one copy of the runtime in the repository: a change to
/// it is one diff); tests that build a tree write in what a fresh scaffold writes.
pub fn runtime_files() -> BTreeMap<PathBuf, PathBuf> {
    let runtime = repo().join("runtime");
    let mut files = BTreeMap::new();
    // The runtime's crates: runtime/ itself and those under it.
    for folder in ["", "core", "manifests", "testing"] {
        let source = runtime.join(folder);
        let project = Path::new("runtime").join(folder);
        for (path, contents) in snapshot(&source.join("src")) {
            if contents.is_some() {
                files.insert(
                    project.join("src").join(&path),
                    source.join("src").join(path),
                );
            }
        }
        files.insert(project.join("Cargo.toml"), source.join("Cargo.toml"));
    }
    files
}

/// Gives each runtime file of the project at `dir` the modification time of the workspace's
/// file it was written from. Cargo names a path dependency's build by its name, version and
/// path inside the project (`runtime/`, the same in every tree), and takes that build for up to
/// date when the sources are older than it: so every tree built into one target folder reuses
/// the runtime compiled for the first, instead of compiling it again (the trees' copies differ
/// only in their header comments). A change to the runtime is newer than its last build and
/// rebuilds it, once.
pub fn share_runtime_build(dir: &Path) {
    for (path, source) in runtime_files() {
        let modified = std::fs::metadata(&source)
            .and_then(|meta| meta.modified())
            .expect("the runtime file's time");
        std::fs::File::options()
            .write(true)
            .open(dir.join(&path))
            .and_then(|file| file.set_modified(modified))
            .unwrap_or_else(|e| panic!("cannot set the time of {}: {e}", path.display()));
    }
}

/// The lines of the `heading` section (`Options:`, `Commands:`) of `rbuilder <command> --help`,
/// without their indentation.
fn help_section(command: &[&str], heading: &str) -> Vec<String> {
    let tmp = tempfile::tempdir().expect("temp dir");
    let args: Vec<&str> = command.iter().copied().chain(["--help"]).collect();
    let out = rbuilder(tmp.path(), &args).success().get_output().clone();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .skip_while(|line| *line != heading)
        .skip(1)
        .take_while(|line| !line.is_empty())
        .map(|line| line.trim_start().to_owned())
        .collect()
}

/// The flags of `rbuilder <command>`, from its `--help` (`--group`, `--help`, ...).
pub fn flags_of(command: &[&str]) -> std::collections::BTreeSet<String> {
    help_section(command, "Options:")
        .iter()
        .filter_map(|line| {
            // `--group <GROUP>`, `-h, --help`; the lines below each are its description.
            let line = line.strip_prefix("-h, ").unwrap_or(line);
            line.starts_with("--").then(|| {
                line.split([' ', '[', '='])
                    .next()
                    .unwrap_or(line)
                    .to_owned()
            })
        })
        .collect()
}

/// Every command of rbuilder that runs something (`init`, `create api`, `alpha generate`...),
/// from the `Commands:` sections of `--help`, as its words.
pub fn commands() -> Vec<Vec<String>> {
    fn under(prefix: &[String], out: &mut Vec<Vec<String>>) {
        let args: Vec<&str> = prefix.iter().map(String::as_str).collect();
        let subcommands: Vec<String> = help_section(&args, "Commands:")
            .iter()
            .filter_map(|line| line.split(' ').next().map(str::to_owned))
            .filter(|name| name != "help")
            .collect();
        if subcommands.is_empty() {
            out.push(prefix.to_vec());
        }
        for name in subcommands {
            let mut command = prefix.to_vec();
            command.push(name);
            under(&command, out);
        }
    }
    let mut out = Vec::new();
    under(&[], &mut out);
    out
}

/// `f` of each of `items`, in order, computed on two threads: the machine has two cores, and
/// each item runs rbuilder a few times. Each thread takes the next item when it is done with
/// one, so that items of uneven cost keep both busy.
pub fn two_at_a_time<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return done;
            };
            done.push((i, f(item)));
        }
    };
    let mut results: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles = [scope.spawn(work), scope.spawn(work)];
        handles
            .into_iter()
            .flat_map(|handle| handle.join().expect("no panic"))
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}
