//! The license header of a kubebuilder project, `hack/boilerplate.go.txt`: a Go block comment
//! whose `YEAR` controller-gen replaces with the current year. The Rust project gets the same
//! text as its `hack/boilerplate.txt`, and the license and owner PROJECT records.

use crate::project::License;

/// Where kubebuilder keeps the header.
pub const FILE: &str = "hack/boilerplate.go.txt";

/// The header of the Rust project, as read from a kubebuilder project's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// `hack/boilerplate.txt`: the text without the comment's delimiters.
    pub text: String,
    pub license: License,
    /// The copyright holder of the `Copyright <year> <owner>.` line, if it has one.
    pub owner: Option<String>,
}

/// The header `go_text` (the content of `hack/boilerplate.go.txt`) stands for, with `YEAR` as
/// controller-gen fills it in: `year`.
pub fn convert(go_text: &str, year: u32) -> Header {
    let mut lines: Vec<&str> = go_text.lines().collect();
    while lines.first().is_some_and(|l| l.trim().is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    if lines.first().is_some_and(|l| l.trim() == "/*")
        && lines.last().is_some_and(|l| l.trim() == "*/")
    {
        lines.remove(0);
        lines.pop();
    }
    let body = lines.join("\n").replace("YEAR", &year.to_string());
    let text = if body.trim().is_empty() {
        String::new()
    } else {
        format!("{}\n", body.trim_matches('\n'))
    };
    let license = if text.is_empty() {
        License::None
    } else if text.contains("Apache License, Version 2.0") {
        License::Apache2
    } else if text.contains("SPDX-License-Identifier: MIT") || text.contains("MIT License") {
        License::Mit
    } else {
        // A header of the user's own: kept as it is, with no license named in Cargo.toml.
        License::None
    };
    let owner = text.lines().next().and_then(|first| {
        let rest = first.strip_prefix("Copyright ")?;
        let (year, owner) = rest.split_once(' ')?;
        year.chars().all(|c| c.is_ascii_digit()).then_some(())?;
        let owner = owner.trim().trim_end_matches('.');
        (!owner.is_empty()).then(|| owner.to_owned())
    });
    Header {
        text,
        license,
        owner,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::license;

    const KUBEBUILDER: &str = "/*\nCopyright YEAR The Kubernetes authors.\n\nLicensed under \
        the Apache License, Version 2.0 (the \"License\");\nyou may not use this file except in \
        compliance with the License.\nYou may obtain a copy of the License at\n\n    \
        http://www.apache.org/licenses/LICENSE-2.0\n\nUnless required by applicable law or \
        agreed to in writing, software\ndistributed under the License is distributed on an \"AS \
        IS\" BASIS,\nWITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.\n\
        See the License for the specific language governing permissions and\nlimitations under \
        the License.\n*/";

    #[test]
    fn kubebuilders_apache_header_is_rbuilders() {
        let header = convert(KUBEBUILDER, 2026);
        assert_eq!(header.license, License::Apache2);
        assert_eq!(header.owner.as_deref(), Some("The Kubernetes authors"));
        assert!(
            header
                .text
                .starts_with("Copyright 2026 The Kubernetes authors.\n\n")
        );
        let rbuilders = license::boilerplate(License::Apache2, "The Kubernetes authors", 2026);
        assert_eq!(header.text, rbuilders);
    }

    #[test]
    fn other_headers() {
        let mit = convert(
            "/*\nCopyright 2024 Jane Doe.\n\nSPDX-License-Identifier: MIT\n*/\n",
            2026,
        );
        assert_eq!(mit.license, License::Mit);
        assert_eq!(mit.owner.as_deref(), Some("Jane Doe"));
        assert_eq!(
            mit.text,
            license::boilerplate(License::Mit, "Jane Doe", 2024)
        );
        let empty = convert("", 2026);
        assert_eq!(empty.license, License::None);
        assert_eq!(empty.text, "");
        let own = convert("/*\nProprietary. Do not copy.\n*/\n", 2026);
        assert_eq!(own.license, License::None);
        assert_eq!(own.owner, None);
        assert_eq!(own.text, "Proprietary. Do not copy.\n");
    }
}
