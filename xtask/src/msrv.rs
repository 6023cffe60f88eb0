//! The MSRV build: the libraries and binaries of the workspace checked with the
//! oldest Rust the workspace promises to support, the `rust-version` of the root
//! `Cargo.toml`.
//!
//! Dev-dependencies (criterion, statrs and the other bench peers) are left out: they
//! are free to need a newer compiler, since a user of our crates never builds them.
//! The toolchain is run through `rustup run`, so it must be installed
//! (`rustup toolchain install 1.85.0 --profile minimal`); `.ci/run` installs it.

use std::path::Path;

use crate::step::Step;

/// `cargo check` of every library and binary with all features, on the MSRV.
pub(crate) fn steps(root: &Path) -> Result<Vec<Step>, String> {
    let manifest = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest)
        .map_err(|err| format!("cannot read {}: {err}", manifest.display()))?;
    let version = rust_version(&text)
        .ok_or_else(|| format!("{} sets no `rust-version`", manifest.display()))?;
    let toolchain = toolchain(version);
    let hint =
        "install the MSRV toolchain: `rustup toolchain install <rust-version>.0 --profile minimal`";
    Ok(vec![
        Step::program(
            format!("msrv (rust {toolchain})"),
            "rustup",
            [
                "run",
                &toolchain,
                "cargo",
                "check",
                "--workspace",
                "--lib",
                "--bins",
                "--all-features",
            ],
        )
        .hint(hint),
    ])
}

/// The value of the first `rust-version = "..."` line.
fn rust_version(manifest: &str) -> Option<&str> {
    manifest.lines().find_map(|line| {
        let (key, value) = line.split_once('=')?;
        (key.trim() == "rust-version").then(|| value.trim().trim_matches('"'))
    })
}

/// A rustup toolchain name for a `rust-version`: `1.85` is `1.85.0`.
fn toolchain(version: &str) -> String {
    if version.split('.').count() == 2 {
        format!("{version}.0")
    } else {
        version.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::{rust_version, toolchain};

    #[test]
    fn reads_the_rust_version_and_names_its_toolchain() {
        let manifest = "[workspace.package]\nedition = \"2024\"\nrust-version = \"1.85\"\n";
        assert_eq!(rust_version(manifest), Some("1.85"));
        assert_eq!(toolchain("1.85"), "1.85.0");
        assert_eq!(toolchain("1.85.1"), "1.85.1");
        assert_eq!(rust_version("[package]\nname = \"x\"\n"), None);
    }
}
