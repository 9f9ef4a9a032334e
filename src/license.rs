//! The license header of generated source files (`hack/boilerplate.txt`), as `init --license`
//! and `--owner` choose it.

use crate::project::License;

/// The SPDX identifier of `license`, for Cargo.toml; `None` for `--license none`.
pub fn spdx(license: License) -> Option<&'static str> {
    match license {
        License::Apache2 => Some("Apache-2.0"),
        License::Mit => Some("MIT"),
        License::None => None,
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
        License::None => String::new(),
    }
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
}
