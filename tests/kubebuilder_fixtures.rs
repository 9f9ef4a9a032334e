//! The kubebuilder project `testdata/kubebuilder-projects/shop` is what kubebuilder v4.16.0 and
//! controller-gen make of it: the project is made again with the kubebuilder that
//! scripts/kubebuilder builds, its Go types replaced by the fixture's (the edits a user made),
//! and `make manifests` (controller-gen) must write the fixture's CRDs, byte for byte. So the
//! fast tests, which compare the CRDs of the migrated Rust types with the fixture's
//! (src/external/own/tests.rs, runtime/tests/migrated_crds.rs), compare them with
//! controller-gen's.
//!
//! Slow and online (kubebuilder's and controller-gen's Go modules, from the Go module proxy the
//! first time), so `#[ignore]`d; `make test` runs it.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{project_dir, repo};

/// How the fixture was made: kubebuilder's commands, and (after the command that needs them)
/// which of the fixture's edited Go types replace kubebuilder's. Order's types go in before the
/// deploy-image kind, whose `make manifests` needs Order's storage version marked.
const STEPS: &[(&str, &[&str])] = &[
    ("init --domain example.com --repo example.com/shop", &[]),
    (
        "create api --group shop --version v1 --kind Order --resource --controller",
        &[],
    ),
    (
        "create api --group shop --version v2 --kind Order --resource --controller=false",
        &["api/v1/order_types.go", "api/v2/order_types.go"],
    ),
    (
        "create api --group shop --version v1alpha1 --kind Memcached --image \
         memcached:1.6.26-alpine3.19 --image-container-port 11211 --run-as-user 1001 --plugins \
         deploy-image/v1-alpha",
        &[],
    ),
    (
        "create api --group shop --version v1 --kind Inventory --resource --controller \
         --namespaced=false",
        &["api/v1/inventory_types.go"],
    ),
    (
        "create webhook --group shop --version v1 --kind Inventory --defaulting \
         --programmatic-validation",
        &[],
    ),
];

/// The kubebuilder binary scripts/kubebuilder builds.
fn kubebuilder() -> PathBuf {
    let script = repo().join("scripts/kubebuilder");
    let out = Command::new(&script)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "scripts/kubebuilder failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// Runs `program args` in `dir`; panics with its output if it fails.
fn checked(dir: &Path, program: &Path, args: &[&str]) {
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
}

#[test]
#[ignore = "runs kubebuilder and controller-gen, which need go and the Go module proxy"]
fn the_shop_fixture_is_what_kubebuilder_and_controller_gen_make() {
    let fixture = repo().join("testdata/kubebuilder-projects/shop");
    let kubebuilder = kubebuilder();
    let (_tmp, dir) = project_dir("shop");
    for (command, types) in STEPS {
        let args: Vec<&str> = command.split_whitespace().collect();
        checked(&dir, &kubebuilder, &args);
        for file in *types {
            std::fs::copy(fixture.join(file), dir.join(file))
                .unwrap_or_else(|e| panic!("copy {file}: {e}"));
        }
    }
    checked(&dir, Path::new("make"), &["manifests"]);

    let bases = "config/crd/bases";
    let mut files: Vec<String> = std::fs::read_dir(dir.join(bases))
        .expect("the CRDs controller-gen wrote")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut expected: Vec<String> = std::fs::read_dir(fixture.join(bases))
        .expect("the fixture's CRDs")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    expected.sort();
    assert_eq!(files, expected, "the CRD files");
    // What else of the project the migration reads, but the samples (the user's edits).
    for file in files
        .iter()
        .map(|f| format!("{bases}/{f}"))
        .chain(["PROJECT".into(), "config/manager/manager.yaml".into()])
    {
        let made = std::fs::read_to_string(dir.join(&file)).expect("a file kubebuilder made");
        let kept = std::fs::read_to_string(fixture.join(&file)).expect("the fixture's");
        assert_eq!(made, kept, "{file} differs from the fixture's");
    }
}
