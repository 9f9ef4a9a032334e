//! "a" or "an" before a kind's name in generated comments and messages ("an Issuer", "a
//! DemoMicroService"): English chooses by the sound the word starts with, not its letter.

/// `word` after its indefinite article.
pub fn with_article(word: &str) -> String {
    let article = if starts_with_vowel_sound(word) {
        "an"
    } else {
        "a"
    };
    format!("{article} {word}")
}

fn starts_with_vowel_sound(word: &str) -> bool {
    let mut chars = word.chars();
    let (Some(first), second) = (chars.next(), chars.next()) else {
        return false;
    };
    // An initialism (HTTPRoute, SSLPolicy, URLMap) is read letter by letter: its article is
    // that of its first letter's name ("an aitch", "an ess", "a you").
    if first.is_ascii_uppercase() && second.is_some_and(|c| c.is_ascii_uppercase()) {
        return "AEFHILMNORSX".contains(first);
    }
    let lower = word.to_ascii_lowercase();
    // Words whose first vowel is read as a consonant: "a User", "a Unit", "a OneShot".
    const CONSONANT_SOUNDS: [&str; 6] = ["uni", "use", "usa", "uti", "eu", "one"];
    if CONSONANT_SOUNDS
        .iter()
        .any(|start| lower.starts_with(start))
    {
        return false;
    }
    "aeiou".contains(first.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::with_article;

    #[test]
    fn the_article_follows_the_first_sound() {
        for (word, expected) in [
            ("DemoMicroService", "a DemoMicroService"),
            ("Issuer", "an Issuer"),
            ("Application", "an Application"),
            ("Admiral", "an Admiral"),
            ("Endpoints", "an Endpoints"),
            ("Object", "an Object"),
            ("User", "a User"),
            ("Unit", "a Unit"),
            ("Umbrella", "an Umbrella"),
            ("OneShot", "a OneShot"),
            ("HTTPRoute", "an HTTPRoute"),
            ("SSLPolicy", "an SSLPolicy"),
            ("CRDSet", "a CRDSet"),
            ("URLMap", "a URLMap"),
        ] {
            assert_eq!(with_article(word), expected);
        }
    }
}
