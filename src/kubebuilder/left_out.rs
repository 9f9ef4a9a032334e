//! What a migration could not carry over, each with why and what the user can do instead.

use std::fmt::Write as _;

/// One thing of the kubebuilder project that the Rust project lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// What: `crew/v1 Captain: its second controller, captain-backup`.
    pub what: String,
    /// Why rbuilder does not carry it over.
    pub why: String,
    /// What the user can run or do instead.
    pub instead: String,
}

impl LeftOut {
    pub fn new(
        what: impl Into<String>,
        why: impl Into<String>,
        instead: impl Into<String>,
    ) -> Self {
        Self {
            what: what.into(),
            why: why.into(),
            instead: instead.into(),
        }
    }
}

/// The list printed at the end of a migration; empty when nothing was left out.
pub fn report(left_out: &[LeftOut]) -> String {
    if left_out.is_empty() {
        return "Nothing was left out.\n".to_owned();
    }
    let mut text = format!(
        "Left out ({}), each with why and what to do instead:\n",
        left_out.len()
    );
    for item in left_out {
        let _ = writeln!(text, "  - {}", item.what);
        let _ = writeln!(text, "    why: {}", item.why);
        let _ = writeln!(text, "    instead: {}", item.instead);
    }
    text
}
