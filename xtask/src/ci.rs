//! `cargo xtask ci`: every check CI makes, in the order it makes them.
//!
//! The cheap checks come first so that a formatting slip fails in seconds, not
//! after the test suite has compiled.
//!
//! 1. `fmt`: `cargo fmt --all --check`.
//! 2. `clippy`: every target of every crate, all features, warnings denied.
//! 3. `clippy no_std`: each crate of [`NO_STD_CRATES`](crate::nostd::NO_STD_CRATES)
//!    again without its default features, where `std`-only code is cfg'd out.
//! 4. `test`: `cargo test --workspace --all-features`, left out by `--skip-tests`.
//!    It runs the doctests of every library too, so there is no separate `--doc`
//!    run. It also runs the `tidy` test of this package, which holds the house rules.
//! 5. `nostd`: the no_std builds of [`crate::nostd`].
//! 6. `wasm`: the core built for wasm32 for size and run in Node ([`crate::wasm`]).
//! 7. `fuzz`: every cargo-fuzz target for a short smoke run ([`crate::fuzz`]).
//! 8. `msrv`: libraries and binaries checked on the `rust-version` ([`crate::msrv`]).
//! 9. `doc`: rustdoc with warnings and broken intra-doc links denied.
//! 10. `package`: `cargo package --workspace`, which builds every crate from the
//!     tarball crates.io would receive, so a missing file or an internal
//!     dependency without a version fails here and not at release time.
//! 11. `deny`: `cargo deny check licenses bans sources`, against `deny.toml`.
//!
//! `cargo deny check advisories` is not run: it downloads the RustSec advisory
//! database from the internet, and the CI machines reach package registries only.
//! Run it by hand where the network allows.

use crate::nostd;
use crate::step::{Step, workspace_root};
use crate::wasm;
use crate::{fuzz, msrv};

/// What `cargo xtask ci` was asked to do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Options {
    /// Leave out `cargo test`, for a caller that has just run it.
    pub(crate) skip_tests: bool,
}

/// The steps of a CI run, in order; an error if the MSRV cannot be read.
pub(crate) fn steps(options: Options) -> Result<Vec<Step>, String> {
    let mut steps = vec![
        Step::cargo("fmt", ["fmt", "--all", "--check"])
            .hint("run `cargo fmt --all`; if cargo has no `fmt`, `rustup component add rustfmt`"),
        Step::cargo(
            "clippy",
            [
                "clippy",
                "--workspace",
                "--all-targets",
                "--all-features",
                "--",
                "-D",
                "warnings",
            ],
        )
        .hint("if cargo has no `clippy`, `rustup component add clippy`"),
    ];
    steps.extend(nostd::clippy_steps());
    if !options.skip_tests {
        steps.push(Step::cargo(
            "test",
            ["test", "--workspace", "--all-features"],
        ));
    }
    steps.extend(nostd::build_steps());
    steps.extend(wasm::steps());
    steps.extend(fuzz::steps(&fuzz::Options::default()));
    steps.extend(msrv::steps(&workspace_root())?);
    steps.push(
        Step::cargo("doc", ["doc", "--workspace", "--no-deps", "--all-features"]).env(
            "RUSTDOCFLAGS",
            "-D warnings -D rustdoc::broken_intra_doc_links",
        ),
    );
    // --allow-dirty: the check is of what the crates contain, and a developer
    // runs it before committing too
    steps.push(Step::cargo(
        "package",
        ["package", "--workspace", "--allow-dirty"],
    ));
    steps.push(
        Step::cargo("deny", ["deny", "check", "licenses", "bans", "sources"])
            .hint("cargo-deny is required: `cargo install --locked cargo-deny`"),
    );
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::{Options, steps};

    fn names(options: Options) -> Vec<String> {
        steps(options)
            .unwrap_or_default()
            .iter()
            .map(|step| step.name().to_owned())
            .collect()
    }

    #[test]
    fn skip_tests_leaves_out_only_the_test_step() {
        let all = names(Options { skip_tests: false });
        let skipped = names(Options { skip_tests: true });
        let expected: Vec<String> = all.iter().filter(|n| *n != "test").cloned().collect();
        assert_eq!(skipped, expected);
        assert_eq!(all.len(), skipped.len() + 1);
    }

    #[test]
    fn cheap_checks_run_first_and_licences_last() {
        let all = names(Options::default());
        assert_eq!(all.first().map(String::as_str), Some("fmt"));
        assert_eq!(all.get(1).map(String::as_str), Some("clippy"));
        assert_eq!(all.last().map(String::as_str), Some("deny"));
    }

    #[test]
    fn the_msrv_is_read_from_the_workspace_manifest() {
        let all = names(Options::default());
        assert!(all.iter().any(|name| name.starts_with("msrv (rust 1.")));
    }

    #[test]
    fn advisories_are_not_checked() {
        for step in steps(Options::default()).unwrap_or_default() {
            assert!(step.args().iter().all(|arg| arg != "advisories"));
        }
    }
}
