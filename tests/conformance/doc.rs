//! `docs/kubebuilder.md`, written from the differences file so that the users' list is the
//! test's list.

use std::fmt::Write;

use serde_json::Value;

use crate::normalize::render;
use crate::spec::{Entry, FILE, Place, Spec};

const INTRO: &str = "\
rbuilder promises a kubebuilder user the same commands, flags, `PROJECT` file, Makefile
targets and `config/` tree. `make test` checks the promise with kubebuilder itself: it runs
each sequence of commands below with kubebuilder v4.16.0 (built from its Go module by
`scripts/kubebuilder`) and with rbuilder, each in an empty folder of the same name, and
compares what they scaffold (`tests/conformance/`):

- `config/default`: what `make deploy` applies, `kubectl kustomize config/default` (after
  kubebuilder's `make generate manifests`), object by object (kind and name) and field by field:
  names, namespaces, labels, selectors, ports, probes, security contexts, the manager's
  arguments (flag by flag), RBAC rules (by resource, with the verbs granted on it, however the
  rules group them), webhook configurations and their paths, the Services and cert-manager's
  certificates and how they are wired, and each CRD whole: group, names, scope, short names,
  versions, served and storage, printer columns, subresources, and each version's OpenAPI
  schema, property by property (types, formats, required fields, bounds, patterns, enums,
  list and map types, nullable, defaults), all but its descriptions, which each tool writes
  from its language's doc comments (Go's by controller-gen, Rust's by kube-derive and
  schemars).
- `kube-apiserver`: whether the CRDs accept the same objects. On a real kube-apiserver
  (`scripts/control-plane`), each project's samples are created (a server-side dry run) under
  kubebuilder's CRDs, then under rbuilder's: a sample that one set accepts and the other
  refuses is a difference.
- `config/samples`: `kubectl kustomize config/samples`, each sample field by field.
- `PROJECT`: every field, resources by kind and version, plugins by name and version (the
  domain of their key a field of its own) with each of their settings.
- `Makefile`: the names of its targets.
- `grafana`: the files under `grafana/`; a dashboard by the metrics its queries read.
- `hack/boilerplate`: the license header every scaffolded file starts with, as text.
- `dist/chart`: the Helm chart's `Chart.yaml` and `values.yaml`, field by field (the chart's
  templates, which rbuilder's `make helm` makes from `config/default`, are checked against
  `config/default` by `tests/generated.rs`).

Lists are compared as sets (verbs, DNS names, required fields) or by what names their items
(containers, ports, environment variables, webhooks, versions, a program's flags). Every
difference that remains is listed below with its reason. The test fails on a difference this
list lacks, and on one it lists that no longer occurs, so the list is always what rbuilder does
today.
";

/// The page, from the file.
pub fn render_doc(spec: &Spec) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# rbuilder and kubebuilder, side by side\n");
    let _ = writeln!(
        out,
        "<!-- Written from {FILE} by tests/conformance: edit that file, then run\n     \
         RBUILDER_DIFFERENCES=overwrite cargo test --test conformance -->\n"
    );
    let _ = writeln!(out, "{INTRO}");
    let _ = writeln!(out, "## The sequences\n");
    let _ = writeln!(
        out,
        "kubebuilder's `init` also gets `--repo example.com/<name>` (the Go module path, which \
         rbuilder has no use for), and its `create` commands `--make=false` (each would run `make \
         generate`, which runs once at the end).\n"
    );
    for sequence in &spec.sequences {
        let _ = writeln!(out, "**{}**: {}\n", sequence.name, sequence.about.trim());
        for command in &sequence.commands {
            let _ = writeln!(out, "    {command}");
        }
        out.push('\n');
    }
    let _ = writeln!(out, "## The differences\n");
    for entry in &spec.differences {
        entry_section(&mut out, entry);
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

fn entry_section(out: &mut String, entry: &Entry) {
    let _ = writeln!(out, "### {}\n", entry.what.trim());
    let _ = writeln!(out, "{}\n", entry.why.trim());
    let sequences = if entry.sequences.is_empty() {
        "any of the sequences".to_owned()
    } else {
        entry.sequences.join(", ")
    };
    let _ = writeln!(out, "In: {sequences}.\n");
    let _ = writeln!(out, "| Where | Object | Field | kubebuilder | rbuilder |");
    let _ = writeln!(out, "|---|---|---|---|---|");
    for place in &entry.places {
        row(out, place);
    }
    out.push('\n');
}

fn row(out: &mut String, place: &Place) {
    let path = if place.path.is_empty() {
        "(the object)".to_owned()
    } else {
        code(&place.path)
    };
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} | {} |",
        place.source,
        code(&place.object),
        path,
        value(place.kubebuilder.as_ref()),
        value(place.rbuilder.as_ref()),
    );
}

fn value(v: Option<&Value>) -> String {
    match v {
        None => "(any)".to_owned(),
        Some(Value::String(s)) if s == "absent" => "—".to_owned(),
        // An empty string would make an empty code span.
        Some(Value::String(s)) if s.is_empty() => "`\"\"`".to_owned(),
        Some(v) => code(&render(v)),
    }
}

/// Inline code in a table cell: `|` would end the cell.
fn code(text: &str) -> String {
    format!("`{}`", text.replace('|', "\\|"))
}
