//! Side by side with kubebuilder: the command sequences of `testdata/kubebuilder/differences.yaml`
//! run with kubebuilder v4.16.0 (built from its Go module by scripts/kubebuilder) and with
//! rbuilder, each in an empty folder of the same name, and what each project would give a
//! cluster compared object by object and field by field (`normalize`), CRD schemas included,
//! and each project's samples created under both projects' CRDs on a real kube-apiserver
//! (`apiserver`). Every difference must be listed in that file with its reason, and every
//! listed one must still occur (`spec`); `docs/kubebuilder.md` is written from it (`doc`).
//!
//! The comparison runs kubebuilder, which downloads Go modules and builds controller-gen
//! (cached by Go per machine), and a control plane (scripts/control-plane), so it is
//! `#[ignore]`d: a plain `cargo test` stays offline, and `make test` runs it. The page's test is fast and always runs;
//! `RBUILDER_DIFFERENCES=overwrite` rewrites the page from the file.

#[path = "../common/mod.rs"]
mod common;

mod apiserver;
mod doc;
mod normalize;
mod observe;
mod spec;

use std::path::Path;

use apiserver::ControlPlane;
use common::{repo, two_at_a_time};
use normalize::{Difference, compare};
use spec::{DOC, FILE, Sequence, Spec};

/// Runs `sequence` with both tools in folders of its name under `tmp`; the differences, the
/// verdicts of `plane` on the samples included.
fn differences(tmp: &Path, plane: &ControlPlane, sequence: &Sequence) -> Vec<Difference> {
    let kb = tmp.join("kubebuilder").join(&sequence.name);
    let rb = tmp.join("rbuilder").join(&sequence.name);
    for dir in [&kb, &rb] {
        std::fs::create_dir_all(dir).expect("create a project folder");
    }
    observe::scaffold_with_rbuilder(sequence, &rb);
    observe::scaffold_with_kubebuilder(sequence, &kb, &tmp.join("kubebuilder-tools"));
    let (kb_verdicts, rb_verdicts) = plane.verdicts(&kb, &rb);
    let (kb, rb) = (observe::outputs(&kb), observe::outputs(&rb));
    let mut found: Vec<Difference> = kb
        .iter()
        .zip(&rb)
        .flat_map(|((source, kb), (_, rb))| compare(&sequence.name, source, kb, rb))
        .collect();
    found.extend(compare(
        &sequence.name,
        apiserver::SOURCE,
        &kb_verdicts,
        &rb_verdicts,
    ));
    found
}

#[test]
#[ignore = "runs kubebuilder, which needs go and the Go module proxy (a few minutes the first \
            time on a machine), and a control plane (scripts/envtest-assets); make test runs it"]
fn kubebuilder_and_rbuilder_scaffold_the_same_objects_but_for_the_listed_differences() {
    let spec = Spec::load();
    let mistakes = spec.mistakes();
    assert!(mistakes.is_empty(), "{FILE}:\n{}", mistakes.join("\n"));
    let tmp = tempfile::tempdir().expect("temp dir");
    // It starts while the first sequences are scaffolded.
    let plane = ControlPlane::start(&tmp.path().join("control-plane"));
    let found: Vec<Difference> = two_at_a_time(&spec.sequences, |sequence| {
        differences(tmp.path(), &plane, sequence)
    })
    .into_iter()
    .flatten()
    .collect();
    let problems = spec.check(&found);
    assert!(
        problems.is_empty(),
        "{} problem(s) with {FILE} (kubebuilder's projects and rbuilder's are in {}, kept):\n\n{}",
        problems.len(),
        tmp.keep().display(),
        problems.join("\n\n")
    );
}

#[test]
fn the_users_page_lists_the_differences_of_the_file() {
    let spec = Spec::load();
    let mistakes = spec.mistakes();
    assert!(mistakes.is_empty(), "{FILE}:\n{}", mistakes.join("\n"));
    let page = doc::render_doc(&spec);
    let path = repo().join(DOC);
    if std::env::var("RBUILDER_DIFFERENCES").is_ok_and(|v| v == "overwrite") {
        std::fs::write(&path, page).expect("write the page");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        current == page,
        "{DOC} is not what {FILE} makes: RBUILDER_DIFFERENCES=overwrite cargo test --test \
         conformance rewrites it"
    );
}
