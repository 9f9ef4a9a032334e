//! Rust names for a schema's property names: fields in snake case (raw identifiers for
//! keywords), struct names in upper camel case.

use crate::model::rust_names::{RUST_KEYWORDS, snake_case};

/// The field for property `wire`: `secretName` -> `secret_name`, `type` -> `r#type`,
/// `x-foo` -> `x_foo`, `3d` -> `field_3d`.
pub fn field_ident(wire: &str) -> String {
    let snake: String = snake_case(wire)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let snake = snake.trim_matches('_').to_owned();
    if snake.is_empty() || snake.starts_with(|c: char| c.is_ascii_digit()) {
        format!("field_{snake}")
    } else if ["crate", "self", "super"].contains(&snake.as_str()) {
        format!("{snake}_")
    } else if RUST_KEYWORDS.contains(&snake.as_str()) {
        format!("r#{snake}")
    } else {
        snake
    }
}

/// The field as serde names it without a rename.
pub fn unraw(ident: &str) -> &str {
    ident.strip_prefix("r#").unwrap_or(ident)
}

/// A property name as part of a struct name: `tlsConfig` -> `TlsConfig`, `x-foo` -> `XFoo`.
pub fn pascal_case(wire: &str) -> String {
    wire.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            let first = chars.next().map(|c| c.to_ascii_uppercase());
            first.into_iter().chain(chars).collect::<String>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_snake_case_identifiers() {
        assert_eq!(field_ident("secretName"), "secret_name");
        assert_eq!(field_ident("ipAddresses"), "ip_addresses");
        assert_eq!(field_ident("IPAddresses"), "ip_addresses");
        assert_eq!(field_ident("type"), "r#type");
        assert_eq!(field_ident("self"), "self_");
        assert_eq!(field_ident("x-kubernetes-foo"), "x_kubernetes_foo");
        assert_eq!(field_ident("3d"), "field_3d");
        assert_eq!(field_ident("$ref"), "r#ref");
        assert_eq!(field_ident("_"), "field_");
    }

    #[test]
    fn struct_name_parts_are_upper_camel_case() {
        assert_eq!(pascal_case("tlsConfig"), "TlsConfig");
        assert_eq!(pascal_case("x-foo.bar"), "XFooBar");
        assert_eq!(pascal_case("IPAddresses"), "IPAddresses");
    }
}
