//! The custom path of an admission webhook (`create webhook --defaulting-path` and
//! `--validation-path`, kubebuilder's `defaultingPath`/`validationPath` in PROJECT).

use anyhow::{Result, bail};

/// Checks `path`, given as `flag`: the path part of a URL the API server calls, so it starts
/// with `/`, and it becomes a Rust string literal and an axum route, so it holds the
/// characters of a URL path that need no escaping. `.`/`..` segments and `//` are refused
/// too: an HTTP client may normalize them away, and the API server would call another path
/// than the one served.
pub fn check(flag: &str, path: &str) -> Result<()> {
    let fix = if flag.contains("alidat") {
        "give a URL path such as /my-custom-validate-path"
    } else {
        "give a URL path such as /my-custom-mutate-path"
    };
    if !path.starts_with('/') {
        bail!("{flag} '{path}' does not start with '/': {fix}");
    }
    if path == "/" {
        bail!("{flag} '/' is the server's root, not a webhook's path: {fix}");
    }
    if let Some(c) = path
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "/-._~".contains(*c)))
    {
        bail!(
            "{flag} '{path}' has the character '{c}', which a URL path would need escaped: use \
             letters, digits, '/', '-', '.', '_' and '~'"
        );
    }
    if path.contains("//")
        || path
            .split('/')
            .any(|segment| segment == "." || segment == "..")
    {
        bail!("{flag} '{path}' has an empty, '.' or '..' segment, which clients rewrite: {fix}");
    }
    // The conversion webhook's path, which the server routes to every conversion.
    if path == "/convert" {
        bail!("{flag} '/convert' is the path of the conversion webhook: {fix}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn paths() {
        for ok in ["/my-custom-mutate-path", "/a/b_c.d~e", "/v1/Ship"] {
            check("--defaulting-path", ok).expect(ok);
        }
        for (bad, needle) in [
            ("custom", "does not start with '/'"),
            ("/", "root"),
            ("/a b", "character ' '"),
            ("/a?x=1", "character '?'"),
            ("/a\"b", "character '\"'"),
            ("/a//b", "segment"),
            ("/a/../b", "segment"),
            ("/convert", "conversion"),
        ] {
            let error = check("--validation-path", bad).expect_err(bad).to_string();
            assert!(error.contains(needle), "{bad}: {error}");
        }
    }
}
