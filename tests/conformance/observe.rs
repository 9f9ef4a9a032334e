//! Runs a sequence with each tool in a folder of its own, and reads what the project would
//! give a cluster (and its user): the rendered kustomizations, PROJECT, the Makefile's targets
//! and the Grafana dashboards.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::common::{repo, run, words};
use crate::normalize::{self, Objects};
use crate::spec::Sequence;

/// The kubebuilder binary of the version tools/kubebuilder/go.mod pins, which
/// scripts/kubebuilder builds from its Go module the first time and caches.
fn kubebuilder() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let out = Command::new(repo().join("scripts/kubebuilder"))
            .output()
            .expect("run scripts/kubebuilder");
        assert!(
            out.status.success(),
            "scripts/kubebuilder failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
    })
}

/// Runs `program args` in `dir`; panics with its output if it fails.
fn checked(dir: &Path, program: &Path, args: &[String]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    assert!(
        out.status.success(),
        "`{} {}` failed in {}:\n{}\n{}",
        program.display(),
        args.join(" "),
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// kubebuilder runs the sequence in `dir`, then `make manifests` writes the CRDs, roles and
/// webhook configurations from the Go code (rbuilder writes them as it scaffolds). kubebuilder's
/// `init` also gets `--repo`: the Go module path has no counterpart in rbuilder, and outside
/// GOPATH kubebuilder cannot guess it.
pub fn scaffold_with_kubebuilder(sequence: &Sequence, dir: &Path) {
    for command in &sequence.commands {
        let mut args = words(command);
        if args.first().is_some_and(|a| a == "init") {
            args.extend([
                "--repo".to_owned(),
                format!("example.com/{}", sequence.name),
            ]);
        }
        checked(dir, kubebuilder(), &args);
    }
    checked(dir, Path::new("make"), &["manifests".to_owned()]);
}

pub fn scaffold_with_rbuilder(sequence: &Sequence, dir: &Path) {
    for command in &sequence.commands {
        let out = run(dir, command).get_output().clone();
        assert!(
            out.status.success(),
            "`rbuilder {command}` failed for the sequence {}:\n{}",
            sequence.name,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// What the project in `dir` gives, by source (see `spec::SOURCES`).
pub fn outputs(dir: &Path) -> Vec<(&'static str, Objects)> {
    let kustomize = |folder: &str| {
        if !dir.join(folder).join("kustomization.yaml").is_file() {
            return Objects::new();
        }
        let yaml = checked(
            dir,
            Path::new("kubectl"),
            &["kustomize".to_owned(), folder.to_owned()],
        );
        normalize::manifests(&yaml)
    };
    let read = |file: &str| {
        std::fs::read_to_string(dir.join(file))
            .unwrap_or_else(|e| panic!("{}: {e}", dir.join(file).display()))
    };
    vec![
        ("config/default", kustomize("config/default")),
        ("config/samples", kustomize("config/samples")),
        ("PROJECT", normalize::project(&read("PROJECT"))),
        ("Makefile", normalize::makefile(&read("Makefile"))),
        ("grafana", grafana(&dir.join("grafana"))),
    ]
}

/// The files under grafana/, by path: a dashboard by the metrics it reads, any other file
/// by its presence alone (its contents are each tool's own).
fn grafana(folder: &Path) -> Objects {
    let mut objects = Objects::new();
    let mut stack = vec![folder.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path
                .strip_prefix(folder)
                .expect("inside grafana/")
                .display()
                .to_string();
            let value = if name.ends_with(".json") {
                normalize::dashboard(&std::fs::read_to_string(&path).expect("a dashboard"))
            } else {
                serde_json::Value::Object(Default::default())
            };
            objects.insert(name, value);
        }
    }
    objects
}
