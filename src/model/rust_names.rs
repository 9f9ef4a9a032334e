//! How names become Rust: a kind's module (snake case that keeps acronyms together), and the
//! keywords a module name must avoid or escape.

use serde::Serialize;

/// Rust's keywords (2024 edition, strict and reserved). A module named after one of these
/// needs the raw form `r#name`.
pub const RUST_KEYWORDS: &[&str] = &[
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "static", "struct", "super", "trait", "true", "try", "type", "typeof",
    "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
];

/// Keywords that cannot be raw identifiers either.
const NOT_RAW: &[&str] = &["crate", "self", "super"];

/// A kind's name in snake case, for its module and file: a word starts at an upper-case letter
/// after a lower-case letter or a digit (`DemoMicroService` -> `demo_micro_service`,
/// `Ec2Instance` -> `ec2_instance`), and after a run of two or more capitals when that run
/// ends (`HTTPRoute` -> `http_route`). A single capital before a capitalized word stays with
/// it, as in `OAuth2Client` -> `oauth2_client` and `IPv6Pool` -> `ipv6_pool`, where heck and
/// most converters would write `o_auth2_client` and `i_pv6_pool`.
pub fn snake_case(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    // The capitals right before the current character.
    let mut capitals = 0;
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            let before = chars[i - 1];
            let next_is_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            let starts_word = before.is_ascii_lowercase()
                || before.is_ascii_digit()
                || (before.is_ascii_uppercase() && next_is_lower && capitals >= 2);
            if starts_word {
                out.push('_');
            }
        }
        capitals = if c.is_ascii_uppercase() {
            capitals + 1
        } else {
            0
        };
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// A Rust module name and how it is written in code and on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RustModule {
    /// The identifier as written in code: `demo_micro_service`, `r#type`, `self_`.
    pub ident: String,
    /// The file stem: `demo_micro_service`, `type`, `self_`.
    pub file: String,
}

impl RustModule {
    pub fn new(snake: String) -> Self {
        if NOT_RAW.contains(&snake.as_str()) {
            let name = format!("{snake}_");
            Self {
                ident: name.clone(),
                file: name,
            }
        } else if RUST_KEYWORDS.contains(&snake.as_str()) {
            Self {
                ident: format!("r#{snake}"),
                file: snake,
            }
        } else {
            Self {
                ident: snake.clone(),
                file: snake,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acronyms_stay_together() {
        for (kind, snake) in [
            ("DemoMicroService", "demo_micro_service"),
            ("OAuth2Client", "oauth2_client"),
            ("IPv6Pool", "ipv6_pool"),
            ("HTTPRoute", "http_route"),
            ("APIService", "api_service"),
            ("XMLHttpRequest", "xml_http_request"),
            ("ACMEIssuer", "acme_issuer"),
            ("IOChaos", "io_chaos"),
            ("K8sCluster", "k8s_cluster"),
            ("Ec2Instance", "ec2_instance"),
            ("KubeDNS", "kube_dns"),
            ("ClusterIP", "cluster_ip"),
            ("Type", "type"),
        ] {
            assert_eq!(snake_case(kind), snake, "{kind}");
        }
    }
}
