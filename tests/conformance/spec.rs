//! `testdata/kubebuilder/differences.yaml`: the command sequences both tools run, and every
//! difference that remains between what they scaffold, each with its reason. The test fails on
//! a difference the file does not list and on a listed one that no longer occurs; the users'
//! page, `docs/kubebuilder.md`, is written from the same file.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;
use serde_json::Value;

use crate::common::repo;
use crate::normalize::{Difference, render};

pub const FILE: &str = "testdata/kubebuilder/differences.yaml";
pub const DOC: &str = "docs/kubebuilder.md";

/// What each project is compared on, in the order the report and the page use.
pub const SOURCES: &[&str] = &[
    "config/default",
    "config/samples",
    "PROJECT",
    "Makefile",
    "grafana",
    "hack/boilerplate",
    "dist/chart",
    crate::apiserver::SOURCE,
];

/// A value of a `where` that stands for a side without the field (or object).
const ABSENT: &str = "absent";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub sequences: Vec<Sequence>,
    pub differences: Vec<Entry>,
}

/// Commands run by both tools, in order, in an empty folder named after the sequence.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sequence {
    pub name: String,
    pub about: String,
    pub commands: Vec<String>,
}

/// A difference, or a family of them with one reason.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// What a user sees differ, in one line.
    pub what: String,
    /// Why: a deliberate choice, or `not yet: ...` for one rbuilder means to remove.
    pub why: String,
    /// The sequences it occurs in; each must show it. Empty: any (and at least one).
    #[serde(default)]
    pub sequences: Vec<String>,
    /// The fields it covers; each must match at least one difference.
    #[serde(rename = "where")]
    pub places: Vec<Place>,
}

/// Globs (`*` for any text) over a difference's source, object, field path and values.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Place {
    #[serde(rename = "in")]
    pub source: String,
    pub object: String,
    /// The field; empty for a whole object on one side only.
    pub path: String,
    /// Kubebuilder's value (`absent`: it has none); omitted, any.
    pub kubebuilder: Option<Value>,
    pub rbuilder: Option<Value>,
}

impl Spec {
    pub fn load() -> Spec {
        let text = std::fs::read_to_string(repo().join(FILE)).expect(FILE);
        serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{FILE}: {e}"))
    }

    /// Mistakes in the file itself: unknown sequences or sources, empty reasons.
    pub fn mistakes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let names: BTreeSet<&str> = self.sequences.iter().map(|s| s.name.as_str()).collect();
        if names.len() != self.sequences.len() {
            out.push("two sequences have the same name".to_owned());
        }
        for entry in &self.differences {
            if entry.what.trim().is_empty() || entry.why.trim().is_empty() {
                out.push(format!("'{}' needs both what and why", entry.what));
            }
            if entry.places.is_empty() {
                out.push(format!("'{}' has no where", entry.what));
            }
            for sequence in &entry.sequences {
                if !names.contains(sequence.as_str()) {
                    out.push(format!("'{}' names no sequence '{sequence}'", entry.what));
                }
            }
            for place in &entry.places {
                if !SOURCES.contains(&place.source.as_str()) {
                    out.push(format!(
                        "'{}': in: {} is not one of {SOURCES:?}",
                        entry.what, place.source
                    ));
                }
            }
        }
        out
    }

    /// What is wrong with the file against the differences found: each one it does not
    /// explain, and each of its places (or sequences) that explains nothing.
    pub fn check(&self, differences: &[Difference]) -> Vec<String> {
        let mut used: BTreeSet<(usize, usize)> = BTreeSet::new();
        let mut seen: BTreeMap<usize, BTreeSet<&str>> = BTreeMap::new();
        let mut problems = Vec::new();
        for difference in differences {
            let mut explained = false;
            for (e, entry) in self.differences.iter().enumerate() {
                let in_sequence =
                    entry.sequences.is_empty() || entry.sequences.contains(&difference.sequence);
                if !in_sequence {
                    continue;
                }
                for (p, place) in entry.places.iter().enumerate() {
                    if place.matches(difference) {
                        explained = true;
                        used.insert((e, p));
                        seen.entry(e).or_default().insert(&difference.sequence);
                    }
                }
            }
            if !explained {
                problems.push(format!("not in {FILE}:\n{}", as_place(difference)));
            }
        }
        for (e, entry) in self.differences.iter().enumerate() {
            for (p, place) in entry.places.iter().enumerate() {
                if !used.contains(&(e, p)) {
                    problems.push(format!(
                        "'{}' lists a difference that no longer occurs: in {}, {}, path {:?}",
                        entry.what, place.source, place.object, place.path
                    ));
                }
            }
            let seen = seen.get(&e).cloned().unwrap_or_default();
            for sequence in &entry.sequences {
                if !seen.contains(sequence.as_str()) {
                    problems.push(format!(
                        "'{}' no longer occurs in the sequence {sequence}",
                        entry.what
                    ));
                }
            }
        }
        problems
    }
}

impl Place {
    fn matches(&self, d: &Difference) -> bool {
        glob(&self.source, &d.source)
            && glob(&self.object, &d.object)
            && glob(&self.path, &d.path)
            && value_matches(self.kubebuilder.as_ref(), d.kubebuilder.as_deref())
            && value_matches(self.rbuilder.as_ref(), d.rbuilder.as_deref())
    }
}

fn value_matches(expected: Option<&Value>, actual: Option<&str>) -> bool {
    match (expected, actual) {
        (None, _) => true,
        (Some(Value::String(s)), None) => s == ABSENT,
        (Some(_), None) => false,
        (Some(expected), Some(actual)) => glob(&render(expected), actual),
    }
}

/// A difference written as the `where` item that would explain it, to paste into the file.
fn as_place(d: &Difference) -> String {
    let value = |v: &Option<String>| {
        serde_json::to_string(v.as_deref().unwrap_or(ABSENT)).unwrap_or_default()
    };
    format!(
        "  # sequence {}\n  - in: {}\n    object: {}\n    path: {}\n    kubebuilder: {}\n    \
         rbuilder: {}",
        d.sequence,
        d.source,
        serde_json::to_string(&d.object).unwrap_or_default(),
        serde_json::to_string(&d.path).unwrap_or_default(),
        value(&d.kubebuilder),
        value(&d.rbuilder),
    )
}

/// Whether `text` matches `pattern`, where `*` stands for any text (none included).
pub fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    // The classic two-pointer match, backtracking to the last `*`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if i < p.len() && p[i] == t[j] {
            i += 1;
            j += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs() {
        assert!(glob("Namespace *", "Namespace plain-system"));
        assert!(glob("*", ""));
        assert!(glob("a*b*c", "aXbYbc"));
        assert!(!glob("a*b", "aXbY"));
        assert!(glob("", ""));
        assert!(!glob("", "x"));
    }
}
