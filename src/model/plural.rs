//! The plural of a kind, as kubebuilder computes it (gobuffalo/flect's `Pluralize` of the
//! kind in lower case), for the words kinds are made of. `--plural` covers the rest.
//!
//! Rules rather than a crate: the maintained inflection crates (pluralizer 0.6, cruet 1.0)
//! compile about a hundred regular expressions on first use, 40 to 80 ms measured here, which
//! is several times rbuilder's whole run. These rules take microseconds.

/// Plurals that follow no rule.
const IRREGULAR: &[(&str, &str)] = &[
    ("alias", "aliases"),
    ("appendix", "appendices"),
    ("axis", "axes"),
    ("cactus", "cacti"),
    ("child", "children"),
    ("criterion", "criteria"),
    ("datum", "data"),
    ("focus", "foci"),
    ("foot", "feet"),
    ("goose", "geese"),
    ("index", "indices"),
    ("man", "men"),
    ("medium", "media"),
    ("mouse", "mice"),
    ("nucleus", "nuclei"),
    ("ox", "oxen"),
    ("person", "people"),
    ("phenomenon", "phenomena"),
    ("quota", "quotas"),
    ("radius", "radii"),
    ("syllabus", "syllabi"),
    ("tooth", "teeth"),
    ("vertex", "vertices"),
    ("woman", "women"),
];

/// Words whose plural is the word itself (including plurals already).
const UNCHANGED: &[&str] = &[
    "aircraft",
    "chassis",
    "data",
    "deer",
    "equipment",
    "fish",
    "information",
    "media",
    "metadata",
    "moose",
    "news",
    "people",
    "series",
    "sheep",
    "species",
];

/// Words in -o that take -oes; the others take -s (photos, videos, demos).
const O_ES: &[&str] = &[
    "buffalo", "echo", "embargo", "hero", "potato", "tomato", "torpedo", "veto", "volcano",
];

/// Suffix rules, tried in order: the first that matches replaces the suffix.
const SUFFIXES: &[(&str, &str)] = &[
    ("tive", "tives"),
    ("eaf", "eaves"),
    ("lf", "lves"),
    ("rf", "rves"),
    ("ife", "ives"),
    ("trix", "trices"),
    ("sis", "ses"),
    ("ouse", "ouses"),
    ("us", "uses"),
    ("ss", "sses"),
    ("ch", "ches"),
    ("sh", "shes"),
    ("x", "xes"),
    ("zz", "zzes"),
    ("iz", "izzes"),
    ("ez", "ezzes"),
    ("z", "zes"),
];

/// The plural of a lower-case English word.
pub fn of_word(word: &str) -> String {
    if let Some((_, plural)) = IRREGULAR.iter().find(|(singular, _)| *singular == word) {
        return (*plural).to_owned();
    }
    if UNCHANGED.contains(&word) {
        return word.to_owned();
    }
    for (suffix, replacement) in SUFFIXES {
        if let Some(stem) = word.strip_suffix(suffix) {
            return format!("{stem}{replacement}");
        }
    }
    let vowel = |c: char| "aeiou".contains(c);
    if let Some(stem) = word.strip_suffix('y')
        && !stem.is_empty()
        && (!stem.ends_with(vowel) || stem.ends_with("qu"))
    {
        return format!("{stem}ies");
    }
    if O_ES.contains(&word) {
        return format!("{word}es");
    }
    // A word in -s that no rule knows reads as a plural already (Redis, Endpoints), as
    // flect reads it.
    if word.ends_with('s') {
        return word.to_owned();
    }
    format!("{word}s")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What kubebuilder (flect) makes of common kind words.
    #[test]
    fn plurals_are_kubebuilders() {
        for (word, plural) in [
            ("guestbook", "guestbooks"),
            ("busybox", "busyboxes"),
            ("policy", "policies"),
            ("gateway", "gateways"),
            ("registry", "registries"),
            ("proxy", "proxies"),
            ("person", "people"),
            ("analysis", "analyses"),
            ("basis", "bases"),
            ("crisis", "crises"),
            ("diagnosis", "diagnoses"),
            ("leaf", "leaves"),
            ("shelf", "shelves"),
            ("wolf", "wolves"),
            ("knife", "knives"),
            ("life", "lives"),
            ("hero", "heroes"),
            ("echo", "echoes"),
            ("video", "videos"),
            ("photo", "photos"),
            ("redis", "redis"),
            ("endpoints", "endpoints"),
            ("status", "statuses"),
            ("bus", "buses"),
            ("ingress", "ingresses"),
            ("class", "classes"),
            ("match", "matches"),
            ("mesh", "meshes"),
            ("box", "boxes"),
            ("quiz", "quizzes"),
            ("index", "indices"),
            ("matrix", "matrices"),
            ("vertex", "vertices"),
            ("child", "children"),
            ("datum", "data"),
            ("cactus", "cacti"),
            ("alias", "aliases"),
            ("axis", "axes"),
            ("series", "series"),
            ("species", "species"),
            ("sheep", "sheep"),
            ("chassis", "chassis"),
            ("memcached", "memcacheds"),
            ("database", "databases"),
            ("cluster", "clusters"),
            ("backup", "backups"),
            ("secret", "secrets"),
            ("directive", "directives"),
            ("human", "humans"),
            ("cafe", "cafes"),
            ("chef", "chefs"),
            ("roof", "roofs"),
            ("belief", "beliefs"),
            ("key", "keys"),
            ("soliloquy", "soliloquies"),
            ("quota", "quotas"),
        ] {
            assert_eq!(of_word(word), plural, "{word}");
        }
    }
}
