//! Formatting generated Rust with rustfmt, the way `cargo fmt` would.

use std::io;
use std::path::Path;
use std::process::Command;

/// Formats `files` (Rust sources, by path in the project) in place with one rustfmt process:
/// they are written to a temporary folder under the same relative paths, formatted there and
/// read back. rustfmt follows out-of-line modules (`mod tests;`), so those must be among the
/// files. Uses the project's rustfmt.toml if it has one.
pub fn format(root: &Path, files: &mut [(&str, &mut String)]) -> Result<(), String> {
    if files.is_empty() {
        return Ok(());
    }
    match format_in_temp_dir(root, files) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err("rustfmt was not found, so the \
            generated Rust code is not formatted; install it (rustup component add rustfmt) and \
            run `cargo fmt`"
            .into()),
        Err(e) => Err(format!(
            "rustfmt could not format the new files ({e}); run `cargo fmt` to see why"
        )),
    }
}

fn format_in_temp_dir(root: &Path, files: &mut [(&str, &mut String)]) -> io::Result<()> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let dir = std::env::temp_dir().join(format!("rbuilder-fmt-{}-{nanos}", std::process::id()));
    std::fs::create_dir(&dir)?;
    let result = (|| {
        let paths: Vec<_> = files.iter().map(|(path, _)| dir.join(path)).collect();
        for (path, (_, text)) in paths.iter().zip(files.iter()) {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(path, text.as_bytes())?;
        }
        let mut rustfmt = Command::new("rustfmt");
        rustfmt.args(["--edition", "2024", "--quiet"]).args(&paths);
        // In the project, so that rustup picks the toolchain it pins (rust-toolchain.toml), but
        // never installs one: scaffolding stays offline.
        rustfmt.current_dir(root).env("RUSTUP_AUTO_INSTALL", "0");
        if let Some(config) = ["rustfmt.toml", ".rustfmt.toml"]
            .iter()
            .map(|name| root.join(name))
            .find(|p| p.is_file())
        {
            rustfmt.arg("--config-path").arg(config);
        }
        let out = rustfmt.output()?;
        if !out.status.success() {
            let why = String::from_utf8_lossy(&out.stderr);
            return Err(io::Error::other(
                why.lines().next().unwrap_or("failed").to_owned(),
            ));
        }
        for (path, (_, text)) in paths.iter().zip(files.iter_mut()) {
            **text = std::fs::read_to_string(path)?;
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}
