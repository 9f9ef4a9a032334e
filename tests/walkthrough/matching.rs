//! What the document shows against what a command printed, or a file holds.
//!
//! Output: both sides are compared line by line after `normalize`: spaces (runs of them are
//! one, as kubectl's and cargo's columns widen with their values), durations (`20s`, `2m30s`,
//! `0.52s`: a test's or an object's age), ports after an address (`127.0.0.1:43817`: a port
//! the machine chose) and the walk's folder (shown as `~`). A line `...` stands for any lines,
//! none included, and `...` inside a line for any text; without a leading (or trailing) `...`
//! the output must start (or end) as shown. A kubectl table's columns named in `ignore` are
//! left out of the comparison.
//!
//! Excerpts: the lines of the block must be lines of the file, in order and together, but
//! where a line `...` (or `// ...`, `# ...`) stands for lines left out; spaces are compared as
//! they are (rustfmt's layout is part of what the document shows), but those at a line's end.

/// Normalizes the machine's parts of `text` (see the module's doc), `root` being the walk's
/// folder.
pub fn normalize(text: &str, root: &str) -> Vec<String> {
    text.lines()
        .map(|line| {
            let line = if root.is_empty() {
                line.to_owned()
            } else {
                line.replace(root, "~")
            };
            line.split_whitespace()
                .map(normalize_word)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// A duration as `<time>`, a port after an address as `<port>`; other words as they are.
fn normalize_word(word: &str) -> String {
    let end = word.trim_end_matches([',', ';', ')', '.']);
    let tail = &word[end.len()..];
    let start = end.trim_start_matches('(');
    let head = &end[..end.len() - start.len()];
    if is_duration(start) || is_timestamp(start) {
        return format!("{head}<time>{tail}");
    }
    if let Some(name) = without_generated_suffix(start) {
        return format!("{head}{name}{tail}");
    }
    for address in ["127.0.0.1:", "localhost:", "[::1]:", "0.0.0.0:"] {
        if let Some(at) = start.find(address) {
            let port_start = at + address.len();
            let digits = start[port_start..]
                .chars()
                .take_while(char::is_ascii_digit)
                .count();
            if digits > 0 {
                let rest = &start[port_start + digits..];
                return format!("{head}{}<port>{rest}{tail}", &start[..port_start]);
            }
        }
    }
    word.to_owned()
}

/// A Pod's name as a ReplicaSet makes it, `<deployment>-<template hash>-<random>`, with both
/// generated parts as `<hash>`: `web-7d9c6b8f5-x2k9p` is `web-<hash>-<hash>`.
fn without_generated_suffix(word: &str) -> Option<String> {
    // Kubernetes' generated names use these letters and digits (no vowels, no 0, 1, 3).
    let generated = |part: &str| {
        (5..=10).contains(&part.len())
            && part
                .chars()
                .all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c))
    };
    let (rest, random) = word.rsplit_once('-')?;
    let (name, hash) = rest.rsplit_once('-')?;
    (random.len() == 5 && generated(random) && generated(hash) && !name.is_empty())
        .then(|| format!("{name}-<hash>-<hash>"))
}

/// `2026-12-02T10:08:38.296291Z`, as a log line starts (RFC 3339, UTC).
fn is_timestamp(word: &str) -> bool {
    let bytes = word.as_bytes();
    bytes.len() >= 20
        && bytes[..4].iter().all(u8::is_ascii_digit)
        && bytes[4] == b'-'
        && bytes[7] == b'-'
        && bytes[10] == b'T'
        && word.ends_with('Z')
}

/// `20s`, `2m30s`, `0.52s`, `150ms`, `3h`, `5d`: numbers, each followed by a unit.
fn is_duration(word: &str) -> bool {
    const UNITS: [&str; 7] = ["ms", "µs", "ns", "s", "m", "h", "d"];
    let mut rest = word;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let number = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .count();
        if number == 0 || rest[..number].starts_with('.') || rest[..number].ends_with('.') {
            return false;
        }
        rest = &rest[number..];
        let Some(unit) = UNITS.iter().find(|unit| rest.starts_with(**unit)) else {
            return false;
        };
        rest = &rest[unit.len()..];
    }
    true
}

/// In kubectl's tables (a header line starting with `NAME` or `NAMESPACE`, then its rows up
/// to a blank line), the values of those of `columns` it has replaced by `*`. Works on
/// normalized lines (one space between words), so a value is one word.
pub fn without_columns(lines: &[String], columns: &[String]) -> Vec<String> {
    if columns.is_empty() {
        return lines.to_vec();
    }
    let mut out = Vec::new();
    let mut positions: Vec<usize> = Vec::new();
    for line in lines {
        let words: Vec<&str> = line.split(' ').collect();
        if matches!(words.first(), Some(&"NAME" | &"NAMESPACE")) {
            positions = columns
                .iter()
                .filter_map(|column| words.iter().position(|word| word == column))
                .collect();
            out.push(line.clone());
            continue;
        }
        if line.is_empty() {
            positions.clear();
        }
        let mut words: Vec<String> = words.into_iter().map(str::to_owned).collect();
        for &at in &positions {
            if let Some(word) = words.get_mut(at) {
                *word = "*".into();
            }
        }
        out.push(words.join(" "));
    }
    out
}

/// Whether `actual` is what `expected` shows, `...` lines and `...` in a line as wildcards.
pub fn matches(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => match actual.split_first() {
            Some((line, actual)) => line_matches(first, line) && matches(rest, actual),
            None => false,
        },
    }
}

/// Whether `line` is `pattern`, each `...` in it standing for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split("...").collect();
    if parts.len() == 1 {
        return pattern == line;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !line.starts_with(first) || line.len() < first.len() + last.len() || !line.ends_with(last) {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Whether the lines of `excerpt` are lines of `file` (see the module's doc).
pub fn is_excerpt(excerpt: &str, file: &str) -> bool {
    let gap = |line: &str| matches!(line.trim(), "..." | "// ..." | "# ...");
    let mut pattern: Vec<String> = Vec::new();
    for line in excerpt.lines() {
        if gap(line) {
            pattern.push("...".into());
        } else {
            // `...` inside a code line is code, not a wildcard: mark it so.
            pattern.push(line.trim_end().replace("...", "\u{0}"));
        }
    }
    let file: Vec<String> = file
        .lines()
        .map(|line| line.trim_end().replace("...", "\u{0}"))
        .collect();
    // Anywhere in the file.
    pattern.insert(0, "...".into());
    pattern.push("...".into());
    matches(&pattern, &file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        normalize(text, "/tmp/walk")
    }

    #[test]
    fn machine_parts_are_normalized() {
        assert_eq!(
            lines("demomicroservice-sample   stefanprodan/podinfo:6.7.1   1       20s\n"),
            ["demomicroservice-sample stefanprodan/podinfo:6.7.1 1 <time>"]
        );
        assert_eq!(
            lines("test result: ok. 17 passed; 0 failed; finished in 3.52s\n"),
            ["test result: ok. 17 passed; 0 failed; finished in <time>"]
        );
        assert_eq!(
            lines("Kubernetes control plane is running at https://127.0.0.1:43817\n"),
            ["Kubernetes control plane is running at https://127.0.0.1:<port>"]
        );
        assert_eq!(lines("age 2m30s, (5d)."), ["age <time>, (<time>)."]);
        assert_eq!(
            lines("wrote /tmp/walk/demo/config"),
            ["wrote ~/demo/config"]
        );
        assert_eq!(
            lines("2026-12-02T10:08:38.296291Z  INFO rbuilder_runtime::serve: serving"),
            ["<time> INFO rbuilder_runtime::serve: serving"]
        );
        assert_eq!(
            lines("pod/demomicroservice-sample-74f4bd74b6-n5kmn   0/1   Pending"),
            ["pod/demomicroservice-sample-<hash>-<hash> 0/1 Pending"]
        );
        assert_eq!(
            lines("demomicroservice-sample"),
            ["demomicroservice-sample"]
        );
        // Versions and numbers without a unit are not durations.
        assert_eq!(
            lines("kube 5.0 1.37 v1 9898 6.7.1"),
            ["kube 5.0 1.37 v1 9898 6.7.1"]
        );
    }

    #[test]
    fn wildcards_stand_for_lines_and_text() {
        let expected = lines("...\ntest result: ok. 17 passed; ...\n...\n");
        let actual =
            lines("Compiling x\ntest result: ok. 17 passed; 0 failed; finished in 1s\nDoc-tests\n");
        assert!(matches(&expected, &actual));
        let wrong = lines("test result: ok. 13 passed; 0 failed\n");
        assert!(!matches(&expected, &wrong));
        // Without a leading `...`, the output starts as shown.
        let expected = lines("test result: ok. 17 passed; ...\n...\n");
        assert!(!matches(&expected, &actual));
    }

    #[test]
    fn ignored_columns_of_a_table_are_left_out() {
        let table = lines(
            "NAME   READY   UP-TO-DATE   AVAILABLE   AGE\nweb    0/1     1            0           3s\n\nNAME  READY  STATUS\nx     0/1    Pending\n",
        );
        let columns = ["READY", "AVAILABLE", "STATUS"].map(str::to_owned);
        assert_eq!(
            without_columns(&table, &columns),
            [
                "NAME READY UP-TO-DATE AVAILABLE AGE",
                "web * 1 * <time>",
                "",
                "NAME READY STATUS",
                "x * *"
            ]
        );
    }

    #[test]
    fn an_excerpt_is_found_with_its_gaps() {
        let file = "fn a() {\n    let x = 1;\n    let y = 2;\n    x + y\n}\n";
        assert!(is_excerpt("    let x = 1;\n    // ...\n    x + y\n", file));
        assert!(!is_excerpt("    let x = 1;\n    x + y\n", file));
        // Indentation counts.
        assert!(!is_excerpt("let x = 1;\n", file));
    }
}
