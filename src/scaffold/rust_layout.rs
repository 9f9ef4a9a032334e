//! Lines of generated Rust whose layout under rustfmt (edition 2024, default settings) depends
//! on the names the user chose. Templates lay out everything else as rustfmt does; where a
//! kind, version or group name can push a line past 100 columns they call one of these
//! functions (`{{ rust_assign(indent="    ", lhs="let api", rhs="env.api()") }}`), which picks
//! rustfmt's layout for that length, so that what rbuilder writes passes `cargo fmt --check`
//! without running rustfmt. They are Tera functions rather than Tera macros because a macros
//! file costs every command that imports it a parse of its own (Tera's parser is slow, see
//! `lifted`). `indent`, where a function takes one, is the line's indentation. The tests run rustfmt on
//! each layout for names of every length up to past the widest line.

use std::collections::HashMap;

use tera::{Tera, Value};

/// The widest line rustfmt leaves (its default `max_width`, which generated projects keep).
pub const MAX_WIDTH: usize = 100;
/// The widest a call's arguments, or an array's items, may be on one line before rustfmt puts
/// them one a line (its default `fn_call_width` and `array_width`).
pub const ONE_LINE_WIDTH: usize = 60;
/// The same for the arguments of an item of an attribute (its default `attr_fn_like_width`).
const ATTRIBUTE_ITEM_WIDTH: usize = 70;

/// Makes the functions below callable from templates, each as `rust_<name>`.
pub fn register(tera: &mut Tera) {
    tera.register_function("rust_fn", |args: &HashMap<String, Value>| {
        let params = list(args, "params")?;
        Ok(signature(
            str(args, "indent")?,
            str(args, "head")?,
            &params,
            str(args, "tail")?,
        )
        .into())
    });
    tera.register_function("rust_assign", |args: &HashMap<String, Value>| {
        Ok(assign(str(args, "indent")?, str(args, "lhs")?, str(args, "rhs")?).into())
    });
    tera.register_function("rust_assign_call", |args: &HashMap<String, Value>| {
        let (callee, arg) = (str(args, "callee")?, str(args, "arg")?);
        Ok(assign_call(str(args, "indent")?, str(args, "lhs")?, callee, arg).into())
    });
    tera.register_function("rust_some_str", |args: &HashMap<String, Value>| {
        Ok(some_str(str(args, "indent")?, str(args, "lhs")?, str(args, "value")?).into())
    });
    tera.register_function("rust_str_array", |args: &HashMap<String, Value>| {
        Ok(str_array(str(args, "lhs")?, &list(args, "items")?).into())
    });
    tera.register_function("rust_attr_str", |args: &HashMap<String, Value>| {
        Ok(attr_str(
            str(args, "indent")?,
            str(args, "name")?,
            str(args, "value")?,
        )
        .into())
    });
    tera.register_function("rust_print_column", |args: &HashMap<String, Value>| {
        let last = args.get("last").and_then(Value::as_bool).unwrap_or(false);
        let column = [
            str(args, "name")?,
            str(args, "type_")?,
            str(args, "json_path")?,
        ];
        Ok(print_column(column, last).into())
    });
}

fn str<'a>(args: &'a HashMap<String, Value>, name: &str) -> tera::Result<&'a str> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| tera::Error::msg(format!("the argument `{name}` must be a string")))
}

fn list(args: &HashMap<String, Value>, name: &str) -> tera::Result<Vec<String>> {
    let items = args.get(name).and_then(Value::as_array);
    let items = items.ok_or_else(|| tera::Error::msg(format!("`{name}` must be a list")))?;
    items
        .iter()
        .map(|item| item.as_str().map(str::to_owned))
        .collect::<Option<_>>()
        .ok_or_else(|| tera::Error::msg(format!("`{name}` must be a list of strings")))
}

/// Columns, as rustfmt counts them.
fn width(line: &str) -> usize {
    line.chars().count()
}

/// A function signature up to its `{`: on one line if it fits, else one parameter a line.
pub fn signature(indent: &str, head: &str, params: &[String], tail: &str) -> String {
    let one_line = format!("{indent}{head}({}){tail}", params.join(", "));
    if width(&one_line) <= MAX_WIDTH {
        return one_line;
    }
    let mut out = format!("{indent}{head}(\n");
    for param in params {
        out.push_str(&format!("{indent}    {param},\n"));
    }
    out.push_str(&format!("{indent}){tail}"));
    out
}

/// `lhs = rhs;` for a right-hand side that rustfmt cannot break (a string literal, a path, a
/// call whose arguments are short): on one line if it fits, else the right-hand side on the
/// next line if it fits there, else on one line all the same.
pub fn assign(indent: &str, lhs: &str, rhs: &str) -> String {
    let one_line = format!("{indent}{lhs} = {rhs};");
    let next_line = format!("{indent}    {rhs};");
    if width(&one_line) > MAX_WIDTH && width(&next_line) <= MAX_WIDTH {
        format!("{indent}{lhs} =\n{next_line}")
    } else {
        one_line
    }
}

/// `lhs = callee(arg);` for a call of one argument that cannot break (a string literal): on one
/// line if it fits, else the call on the next line if it fits there, else the argument alone
/// on a line inside the call's parentheses. When not even `lhs = callee(` fits (a webhook of a
/// kind of 37 characters or more at a path of the user's), rustfmt breaks after `=` or inside
/// the turbofish by widths not modelled here: this writes the first, which the golden trees'
/// long kind with a long path gets; with a short path rustfmt would write the second.
pub fn assign_call(indent: &str, lhs: &str, callee: &str, arg: &str) -> String {
    let one_line = format!("{indent}{lhs} = {callee}({arg});");
    let next_line = format!("{indent}    {callee}({arg});");
    let opening = format!("{indent}{lhs} = {callee}(");
    if width(&one_line) <= MAX_WIDTH {
        one_line
    } else if width(&next_line) <= MAX_WIDTH {
        format!("{indent}{lhs} =\n{next_line}")
    } else if width(&opening) > MAX_WIDTH + 2 {
        // Not even `lhs = callee(` fits (a long turbofish): then rustfmt breaks after `=` as
        // well, or inside the turbofish (see above). It lets the opening run two columns past
        // the limit first (measured with rustfmt 1.8, edition 2024).
        format!("{indent}{lhs} =\n{indent}    {callee}(\n{indent}        {arg},\n{indent}    );")
    } else {
        // rustfmt ends a function's lone argument with a comma once it is on a line of its
        // own, but not a macro's (the comma could change what the macro reads).
        let comma = if callee.ends_with('!') { "" } else { "," };
        format!("{opening}\n{indent}    {arg}{comma}\n{indent});")
    }
}

/// `lhs = Some("value");`: `Some` is a call of one argument that cannot break, laid out as
/// [`assign_call`] lays one out.
pub fn some_str(indent: &str, lhs: &str, value: &str) -> String {
    assign_call(indent, lhs, "Some", &format!("\"{value}\""))
}

/// `lhs = &["item", ...];` at the top level: on one line if the items take at most 60 columns,
/// else as many a line as fit when every item is short (10 columns at most), else one item a
/// line.
pub fn str_array(lhs: &str, items: &[String]) -> String {
    let literals: Vec<String> = items.iter().map(|item| rust_str(item)).collect();
    let joined = literals.join(", ");
    if width(&joined) <= ONE_LINE_WIDTH {
        return format!("{lhs} = &[{joined}];");
    }
    let mut out = format!("{lhs} = &[");
    if literals.iter().all(|literal| width(literal) <= 10) {
        let mut line = "   ".to_owned();
        for literal in &literals {
            if width(&line) + 1 + width(literal) + 1 > MAX_WIDTH {
                out.push('\n');
                out.push_str(&line);
                line = "   ".to_owned();
            }
            line.push_str(&format!(" {literal},"));
        }
        out.push('\n');
        out.push_str(&line);
    } else {
        for literal in &literals {
            out.push_str(&format!("\n    {literal},"));
        }
    }
    out.push_str("\n];");
    out
}

/// `#[name("value")]`: on one line if it fits, else the string alone on a line.
pub fn attr_str(indent: &str, name: &str, value: &str) -> String {
    let one_line = format!("{indent}#[{name}(\"{value}\")]");
    if width(&one_line) <= MAX_WIDTH {
        one_line
    } else {
        format!("{indent}#[{name}(\n{indent}    \"{value}\"\n{indent})]")
    }
}

/// `printcolumn(name = "..", type_ = "..", json_path = "..")` in `#[kube(...)]`, followed by a
/// comma unless it is the `last` item: on one line if its arguments fit rustfmt's width for
/// them, else one argument a line (without a trailing comma: rustfmt adds none in attributes).
pub fn print_column([name, type_, json_path]: [&str; 3], last: bool) -> String {
    let arguments = [
        format!("name = \"{name}\""),
        format!("type_ = \"{type_}\""),
        format!("json_path = \"{json_path}\""),
    ];
    let comma = if last { "" } else { "," };
    let one_line = arguments.join(", ");
    if width(&one_line) <= ATTRIBUTE_ITEM_WIDTH {
        format!("    printcolumn({one_line}){comma}")
    } else {
        format!(
            "    printcolumn(\n        {}\n    ){comma}",
            arguments.join(",\n        ")
        )
    }
}

/// `item` as a string literal, escaped as JSON escapes it (which Rust reads the same for the
/// characters a container command holds).
fn rust_str(item: &str) -> String {
    serde_json::to_string(item).unwrap_or_else(|_| format!("{item:?}"))
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::process::{Command, Stdio};

    use super::*;

    /// Runs rustfmt on `source` and returns what it makes of it.
    fn rustfmt(source: &str) -> String {
        let mut child = Command::new("rustfmt")
            .args(["--edition", "2024", "--emit", "stdout", "--quiet"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("rustfmt runs (rustup component add rustfmt)");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(source.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "rustfmt failed on:\n{source}");
        String::from_utf8(out.stdout).unwrap()
    }

    /// Checks that rustfmt leaves `source` as it is, showing where it differs.
    fn assert_rustfmt_leaves(source: &str) {
        let formatted = rustfmt(source);
        let (ours, theirs): (Vec<&str>, Vec<&str>) =
            (source.lines().collect(), formatted.lines().collect());
        if let Some(at) = (0..ours.len().max(theirs.len())).find(|&i| ours.get(i) != theirs.get(i))
        {
            let around =
                |lines: &[&str]| lines[at.saturating_sub(2)..(at + 4).min(lines.len())].join("\n");
            panic!(
                "rustfmt changes\n{}\ninto\n{}",
                around(&ours),
                around(&theirs)
            );
        }
    }

    /// Kinds of every length rbuilder accepts (1 to 59 characters).
    fn kinds() -> impl Iterator<Item = String> {
        (1..=59).map(|n| format!("K{}", "a".repeat(n - 1)))
    }

    /// Each function where the templates call it, with the kind in its names.
    #[test]
    fn rustfmt_keeps_every_layout_for_kinds_of_every_length() {
        let mut source = String::new();
        for (i, kind) in kinds().enumerate() {
            let lower = kind.to_lowercase();
            let obj = format!("v1alpha1::{kind}");
            let params = [format!("obj: Arc<{obj}>"), "ctx: Arc<Context>".to_owned()];
            let head = signature(
                "    ",
                "async fn apply",
                &params,
                " -> Result<Action, Error> {",
            );
            let api = assign("        ", &format!("let api: Api<{obj}>"), "env.api()");
            let sample = format!("\"../../config/samples/devops_v1alpha1_{lower}.yaml\"");
            source.push_str(&assign_call(
                "",
                "const SAMPLE: &str",
                "include_str!",
                &sample,
            ));
            // A webhook at a path of the user's (`--defaulting-path`), for the kinds short
            // enough that `lhs = callee(` fits (see `assign_call` on longer ones).
            let callee = format!("webhook::defaulting_at::<{kind}Webhook>");
            let lhs = "pub const DEFAULTING: Webhook";
            let hook = match kind.len() <= 36 {
                true => assign_call("", lhs, &callee, "\"/mutate-devops-my-domain-v1alpha1-x\""),
                false => String::new(),
            };
            let lhs = "const FINALIZER: Option<&'static str>";
            let finalizer = some_str("    ", lhs, &format!("{lower}.my.domain/finalizer"));
            let why = format!(
                "Deployment {{name}} {{whose}}: rename the {kind} or delete that Deployment"
            );
            let error = attr_str("    ", "error", &why);
            source.push_str(&format!(
                "\n{hook}\nimpl T{i} {{\n{finalizer}\n\n{head}\n{api}\n        todo!()\n    }}\n}}\n\
                 enum E{i} {{\n{error}\n    Taken,\n}}\n"
            ));
        }
        assert_rustfmt_leaves(&source);
    }

    #[test]
    fn rustfmt_keeps_the_layout_of_print_columns() {
        let columns = [
            ["Image", "string", ".spec.image"],
            ["Ready", "integer", ".status.readyReplicas"],
            ["Age", "date", ".metadata.creationTimestamp"],
            ["Endpoint", "string", ".status.endpoint"],
        ];
        for last in 0..columns.len() {
            let items: Vec<String> = columns[..=last]
                .iter()
                .enumerate()
                .map(|(i, column)| print_column(*column, i == last))
                .collect();
            let attribute = format!(
                "#[kube(\n    group = \"x\",\n{}\n)]\nstruct S;\n",
                items.join("\n")
            );
            assert_rustfmt_leaves(&attribute);
        }
    }

    #[test]
    fn rustfmt_keeps_every_layout_of_a_string_array() {
        let mut source = String::new();
        for n in 1..=40 {
            let short: Vec<String> = (0..n).map(|i| format!("-{i}")).collect();
            let long: Vec<String> = (0..n).map(|i| format!("--option-{i}")).collect();
            source.push_str(&str_array(&format!("const S{n}: &[&str]"), &short));
            source.push('\n');
            source.push_str(&str_array(&format!("const L{n}: &[&str]"), &long));
            source.push('\n');
        }
        assert_rustfmt_leaves(&source);
    }
}
