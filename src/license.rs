//! The license header of generated source files (`hack/boilerplate.txt`), as `init --license`
//! and `--owner` choose it.

use std::path::Path;

use anyhow::{Context as _, Result, bail};

use crate::project::License;

/// The SPDX identifier of `license`, for Cargo.toml; `None` for `--license none`.
pub fn spdx(license: License) -> Option<&'static str> {
    match license {
        License::Apache2 => Some("Apache-2.0"),
        License::Mit => Some("MIT"),
        // A header of the user's own names no license rbuilder could put in Cargo.toml.
        License::None | License::Custom => None,
    }
}

/// hack/boilerplate.txt: the license header of generated source files.
pub fn boilerplate(license: License, owner: &str, year: u32) -> String {
    match license {
        License::Apache2 => format!(
            "Copyright {year} {owner}.\n\n\
             Licensed under the Apache License, Version 2.0 (the \"License\");\n\
             you may not use this file except in compliance with the License.\n\
             You may obtain a copy of the License at\n\n    \
             http://www.apache.org/licenses/LICENSE-2.0\n\n\
             Unless required by applicable law or agreed to in writing, software\n\
             distributed under the License is distributed on an \"AS IS\" BASIS,\n\
             WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.\n\
             See the License for the specific language governing permissions and\n\
             limitations under the License.\n"
        ),
        License::Mit => format!("Copyright {year} {owner}.\n\nSPDX-License-Identifier: MIT\n"),
        // A custom header lives in hack/boilerplate.txt only; PROJECT does not hold its text,
        // so without that file there is nothing to write.
        License::None | License::Custom => String::new(),
    }
}

/// `--owner` with `--license-file`: the owner is a line of rbuilder's own headers only.
pub const OWNER_WITH_FILE: &str = "--owner does not apply with --license-file: the file's text \
     is the whole license header, so put the copyright holder in it and leave --owner out";

/// Refuses an `--owner` that cannot be the copyright line's holder: empty, or more than one
/// line (or holding another control character).
pub fn check_owner(owner: &str) -> Result<()> {
    if owner.trim().is_empty() {
        bail!(
            "--owner is empty: give the copyright holder, e.g. --owner 'Jane Doe', or leave it out"
        );
    }
    if owner.chars().any(char::is_control) {
        bail!(
            "--owner holds a line break or another control character: give the copyright \
             holder on one line, e.g. --owner 'Jane Doe'"
        );
    }
    Ok(())
}

/// The text of `--license-file <path>`, as hack/boilerplate.txt holds it: lines of text that
/// each generated Rust file gets as `//` comments. A kubebuilder header (a Go `/* ... */`
/// block, as its `--license-file` wants) is taken without its delimiters, so that the file a
/// kubebuilder user has works as it is. Refused: a file that cannot be read, is not text, or
/// holds nothing (`--license none` says that).
pub fn read_file(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| {
        format!(
            "cannot read the license file {} given to --license-file",
            path.display()
        )
    })?;
    // Tabs, line ends and form feeds (which old license texts have between sections) are
    // text; any other control character means a binary file.
    let is_text = |text: &str| {
        !text
            .chars()
            .any(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\x0c'))
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) if is_text(&text) => text,
        _ => bail!(
            "the license file {} is not text (it is binary, not UTF-8, or holds control \
             characters): give a text file with the header to put at the top of generated \
             source files",
            path.display()
        ),
    };
    let text = text.replace("\r\n", "\n");
    let mut lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    while lines.first().is_some_and(|l| l.is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    if lines.len() >= 2
        && lines.first().is_some_and(|l| l.trim() == "/*")
        && lines.last().is_some_and(|l| l.trim() == "*/")
    {
        lines.remove(0);
        lines.pop();
    }
    if lines.iter().all(|l| l.trim().is_empty()) {
        bail!(
            "the license file {} is empty: give a file with the header's text, or \
             --license none for no header",
            path.display()
        );
    }
    Ok(format!("{}\n", lines.join("\n")))
}

/// The year for the copyright line. SOURCE_DATE_EPOCH (the reproducible-builds convention)
/// pins it, so a checked-in example regenerates identically in any year.
pub fn copyright_year() -> u32 {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
    year_of(secs)
}

/// The Gregorian year of a Unix timestamp (days-to-civil, Howard Hinnant's algorithm).
fn year_of(unix_secs: u64) -> u32 {
    let days = (unix_secs / 86_400) as i64 + 719_468;
    let era = days.div_euclid(146_097);
    let doe = days.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month_from_march_is_jan_or_feb = mp >= 10;
    (yoe + era * 400 + i64::from(month_from_march_is_jan_or_feb)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn years() {
        assert_eq!(year_of(0), 1970);
        assert_eq!(year_of(1_780_000_000), 2026); // 2026-05-28
        assert_eq!(year_of(1_798_761_599), 2026); // 2026-12-31T23:59:59Z
        assert_eq!(year_of(1_798_761_600), 2027);
        assert_eq!(year_of(951_782_400), 2000); // 2000-02-29
    }

    fn read(content: &[u8]) -> Result<String> {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("header.txt");
        std::fs::write(&path, content).expect("write");
        read_file(&path)
    }

    #[test]
    fn a_license_file_is_its_text_without_blank_edges_or_go_delimiters() {
        let text = read(b"\nCopyright ACME.\r\n\nAll rights reserved.  \n\n").expect("text");
        assert_eq!(text, "Copyright ACME.\n\nAll rights reserved.\n");
        let go = read(b"/*\nCopyright YEAR ACME.\n*/\n").expect("go block");
        assert_eq!(go, "Copyright YEAR ACME.\n");
        let sections = read(b"Copyright ACME.\n\x0c\n\tSection 2.\n").expect("form feed, tab");
        // The form feed is trailing whitespace on its line, which goes.
        assert_eq!(sections, "Copyright ACME.\n\n\tSection 2.\n");
    }

    #[test]
    fn an_owner_is_one_line_of_text() {
        assert!(check_owner("Jane Doe").is_ok());
        for owner in ["", "  ", "Jane\nDoe", "Jane\u{1}"] {
            assert!(check_owner(owner).is_err(), "{owner:?}");
        }
    }

    #[test]
    fn a_license_file_must_hold_text() {
        for (content, needle) in [
            (&b""[..], "is empty"),
            (b" \n\n", "is empty"),
            (b"/*\n*/\n", "is empty"),
            (b"\x7fELF\0\x01", "is not text"),
            (b"\xff\xfe", "is not text"),
            (b"Copyright ACME.\x01\n", "is not text"),
            (b"Copyright ACME.\x1b[0m\n", "is not text"),
        ] {
            let error = read(content).expect_err("refused").to_string();
            assert!(error.contains(needle), "{content:?}: {error}");
        }
        let missing = read_file(Path::new("/nonexistent/header.txt")).expect_err("refused");
        assert!(format!("{missing:#}").contains("cannot read the license file"));
    }
}
