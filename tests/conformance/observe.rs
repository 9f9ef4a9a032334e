//! Runs a sequence with each tool in a folder of its own, and reads what the project would
//! give a cluster (and its user): the rendered kustomizations, PROJECT, the Makefile's targets
//! and the Grafana dashboards.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

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

/// kubebuilder runs the sequence in `dir`, then `make generate manifests` writes the CRDs, roles
/// and webhook configurations from the Go code (rbuilder writes them as it scaffolds).
/// kubebuilder's `init` also gets `--repo`: the Go module path has no counterpart in rbuilder,
/// and outside GOPATH kubebuilder cannot guess it. Its `create` commands get `--make=false`:
/// each would run `make generate` (deepcopy code, not compared) on its own, which the one at
/// the end does for all. The projects share one build of controller-gen, in `tools`, where
/// the first one to need it builds it.
pub fn scaffold_with_kubebuilder(sequence: &Sequence, dir: &Path, tools: &Path) {
    for command in &sequence.commands {
        let mut args = words(command);
        match args.first().map(String::as_str) {
            Some("init") => args.extend([
                "--repo".to_owned(),
                format!("example.com/{}", sequence.name),
            ]),
            Some("create") => args.push("--make=false".to_owned()),
            _ => {}
        }
        checked(dir, kubebuilder(), &args);
    }
    let localbin = format!("LOCALBIN={}", tools.display());
    {
        static BUILDING: Mutex<()> = Mutex::new(());
        let _one_at_a_time = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
        checked(
            dir,
            Path::new("make"),
            &["controller-gen".to_owned(), localbin.clone()],
        );
    }
    let make = ["generate".to_owned(), "manifests".to_owned(), localbin];
    checked(dir, Path::new("make"), &make);
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

/// The samples of the project in `dir`, as `kubectl apply -k config/samples` would send them.
pub fn samples(dir: &Path) -> Vec<serde_json::Value> {
    if !dir.join("config/samples/kustomization.yaml").is_file() {
        return Vec::new();
    }
    let args = ["kustomize".to_owned(), "config/samples".to_owned()];
    let yaml = checked(dir, Path::new("kubectl"), &args);
    let documents: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(&yaml).expect("kustomize writes YAML");
    documents.into_iter().filter(|d| !d.is_null()).collect()
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
        ("hack/boilerplate", boilerplate(dir)),
        ("dist/chart", chart(&dir.join("dist/chart"))),
    ]
}

/// The license header of the files each tool scaffolds (kubebuilder's
/// `hack/boilerplate.go.txt`, a Go comment, rbuilder's `hack/boilerplate.txt`, its text), as
/// text without comment markers, the year as `<year>` (kubebuilder writes the placeholder
/// `YEAR`, which controller-gen fills in).
fn boilerplate(dir: &Path) -> Objects {
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).ok();
    let Some(text) = read("hack/boilerplate.go.txt").or_else(|| read("hack/boilerplate.txt"))
    else {
        return Objects::new();
    };
    let text = text.trim();
    let text = text.strip_prefix("/*").unwrap_or(text);
    let text = text.strip_suffix("*/").unwrap_or(text).trim();
    let text = text.replacen("Copyright YEAR", "Copyright <year>", 1);
    let year = text
        .strip_prefix("Copyright ")
        .and_then(|rest| rest.get(..4))
        .filter(|year| year.chars().all(|c| c.is_ascii_digit()));
    let text = match year {
        Some(year) => text.replacen(&format!("Copyright {year}"), "Copyright <year>", 1),
        None => text.clone(),
    };
    Objects::from([(
        "boilerplate".to_owned(),
        serde_json::json!({ "text": text }),
    )])
}

/// The Helm chart of `edit --plugins helm/v2-alpha`: `Chart.yaml` and `values.yaml` field by
/// field (what a user sets, `helm install --set ...`). The templates kubebuilder writes and those rbuilder's `make helm` makes from `config/default`
/// (which needs the project built) are not compared here: tests/generated.rs renders
/// rbuilder's and compares them with `config/default`, which is compared here.
fn chart(folder: &Path) -> Objects {
    let mut objects = Objects::new();
    for file in ["Chart.yaml", "values.yaml"] {
        if let Ok(text) = std::fs::read_to_string(folder.join(file)) {
            objects.insert(file.to_owned(), normalize::yaml(&text));
        }
    }
    objects
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
