//! `make helm`'s conversion of rendered manifests into the chart's templates, on what
//! config/default renders for two golden trees (`rendered.yaml` beside the expected templates
//! under tests/helm/<tree>/, with the objects of the tree's config/prometheus and
//! config/network-policy). `RBUILDER_GOLDEN=overwrite` rewrites the expected templates after a
//! change of the conversion; review the diff. The trees' `rendered.yaml` is `kubectl kustomize
//! config/default` of the tree.

// The conversion is a build-time tool of the feature `manifests`.
#![cfg(feature = "manifests")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rbuilder_runtime::WatchScope;
use rbuilder_runtime::helm::{Settings, convert, optional_objects};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn check(case: &str, tree: &str, scope: WatchScope) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/helm")
        .join(case);
    let rendered = std::fs::read_to_string(dir.join("rendered.yaml")).expect("rendered.yaml");
    let optional = optional_objects(&repo().join(tree)).expect("optional objects");
    let settings = Settings {
        chart: case.to_owned(),
        scope,
    };
    let chart = convert(&rendered, &optional, &settings).expect("converts");
    let expected_dir = dir.join("templates");
    if std::env::var("RBUILDER_GOLDEN").as_deref() == Ok("overwrite") {
        let _ = std::fs::remove_dir_all(&expected_dir);
        for (path, text) in &chart.files {
            let path = expected_dir.join(path);
            std::fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        }
        std::fs::write(dir.join("notes.txt"), chart.notes.join("\n") + "\n").expect("write");
        return;
    }
    let mut expected = BTreeMap::new();
    for folder in std::fs::read_dir(&expected_dir).expect("expected templates") {
        let folder = folder.expect("entry").path();
        for file in std::fs::read_dir(&folder).expect("folder") {
            let file = file.expect("entry").path();
            let name = format!(
                "{}/{}",
                folder.file_name().and_then(|n| n.to_str()).expect("name"),
                file.file_name().and_then(|n| n.to_str()).expect("name")
            );
            expected.insert(name, std::fs::read_to_string(file).expect("read"));
        }
    }
    let got: BTreeMap<String, String> = chart.files.clone().into_iter().collect();
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "the chart's files (RBUILDER_GOLDEN=overwrite rewrites the expected ones)"
    );
    for (path, text) in &got {
        assert_eq!(
            text, &expected[path],
            "{case}: templates/{path} (RBUILDER_GOLDEN=overwrite rewrites the expected ones)"
        );
    }
    let notes = std::fs::read_to_string(dir.join("notes.txt")).expect("notes.txt");
    assert_eq!(chart.notes.join("\n") + "\n", notes);
}

#[test]
fn demo_microservice() {
    check(
        "demo-microservice",
        "examples/demo-microservice",
        WatchScope::Cluster,
    );
}

#[test]
fn namespaced() {
    check("namespaced", "testdata/namespaced", WatchScope::Namespace);
}

/// CRDs converted by a webhook: the conversion's Service and CA injection are the release's.
#[test]
fn multiversion() {
    check("multiversion", "testdata/multiversion", WatchScope::Cluster);
}
