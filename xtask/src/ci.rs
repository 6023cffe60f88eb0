//! `cargo xtask ci`: every check CI makes, in the order it makes them.
//!
//! The cheap checks come first so that a formatting slip fails in seconds, not
//! after the test suite has compiled.
//!
//! 1. `fmt`: `cargo fmt --all --check`.
//! 2. `clippy`: every target of every crate, all features, warnings denied.
//! 3. `clippy no_std`: each crate of [`NO_STD_CRATES`](crate::nostd::NO_STD_CRATES)
//!    again without its default features, where `std`-only code is cfg'd out.
//! 4. `spec reference verifier`: the Python test of the audit log's reference
//!    verifier in `docs/SPEC.md` (section 11.4), [`SPEC_VERIFIER_TEST`], run
//!    with `python3`. It is the one test not in Rust, so `cargo test` does not
//!    run it, and `--skip-tests` does not leave it out; a machine without
//!    `python3` fails here.
//! 5. `test`: `cargo test --workspace --all-features`, left out by `--skip-tests`.
//!    It runs the doctests of every library too, so there is no separate `--doc`
//!    run. It also runs the `tidy` test of this package, which holds the house rules.
//! 6. `nostd`: the no_std builds of [`crate::nostd`].
//! 7. `wasm`: the core built for wasm32 for size and run in Node ([`crate::wasm`]).
//! 8. `fuzz`: every cargo-fuzz target for a short smoke run ([`crate::fuzz`]).
//! 9. `msrv`: libraries and binaries checked on the `rust-version` ([`crate::msrv`]).
//! 10. `doc`: rustdoc with warnings and broken intra-doc links denied.
//! 11. `package`: `cargo package --workspace`, which builds every crate from the
//!     tarball crates.io would receive, so a missing file or an internal
//!     dependency without a version fails here and not at release time.
//! 12. `deny`: `cargo deny check licenses bans sources`, against `deny.toml`.
//!
//! `cargo deny check advisories` is not run: it downloads the RustSec advisory
//! database from the internet, and the CI machines reach package registries only.
//! Run it by hand where the network allows.

use crate::nostd;
use crate::step::{Step, workspace_root};
use crate::wasm;
use crate::{fuzz, msrv};

/// The Python test of `docs/SPEC.md`'s reference verifier of audit logs,
/// relative to the workspace root.
pub(crate) const SPEC_VERIFIER_TEST: &str =
    "crates/bayesretry-audit/tests/data/test_spec_reference_verifier.py";

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
    steps.push(
        Step::program(
            "spec reference verifier (python3)",
            "python3",
            [SPEC_VERIFIER_TEST],
        )
        .hint("Python 3 is required: `apt-get install python3`"),
    );
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
    steps.push(Step::action(
        "package: clear stale sources",
        "remove this workspace's crates from CARGO_HOME's local-registry sources",
        clear_packaged_sources,
    ));
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

/// Removes the copies of this workspace's crates that earlier `cargo package`
/// runs unpacked under `$CARGO_HOME/registry/src/`.
///
/// `cargo package --workspace` verifies each crate against the tarballs of the
/// others, served from a local registry in the target directory, and unpacks
/// them under `$CARGO_HOME/registry/src/-<hash of that registry's path>/`. It
/// unpacks a `name-version` only once: a later run from the same checkout path,
/// with the crates changed but their version not (as between releases), builds
/// against the stale copy and fails on code that is not there. Those copies are
/// a cache of this workspace's own tarballs, so removing them loses nothing.
/// Directories of named registries (crates.io's `index.crates.io-…`) are never
/// touched: only the nameless local ones, whose names start with `-`.
fn clear_packaged_sources() -> Result<(), String> {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|home| std::path::Path::new(&home).join(".cargo"))
        });
    let Some(sources) = home.map(|home| home.join("registry").join("src")) else {
        return Ok(());
    };
    let Ok(registries) = std::fs::read_dir(&sources) else {
        return Ok(()); // nothing unpacked yet
    };
    for registry in registries.flatten() {
        if !registry.file_name().to_string_lossy().starts_with('-') {
            continue;
        }
        let Ok(crates) = std::fs::read_dir(registry.path()) else {
            continue;
        };
        for unpacked in crates.flatten() {
            if is_workspace_crate(&unpacked.file_name().to_string_lossy()) {
                std::fs::remove_dir_all(unpacked.path())
                    .map_err(|err| format!("removing {}: {err}", unpacked.path().display()))?;
            }
        }
    }
    Ok(())
}

/// Whether an unpacked directory `name-version` is one of this workspace's
/// crates (all named `bayesretry` or `bayesretry-…`).
fn is_workspace_crate(dir: &str) -> bool {
    dir.rsplit_once('-').is_some_and(|(name, version)| {
        (name == "bayesretry" || name.starts_with("bayesretry-"))
            && version.starts_with(|c: char| c.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::{Options, is_workspace_crate, steps};

    #[test]
    fn only_this_workspace_s_unpacked_crates_are_cleared() {
        assert!(is_workspace_crate("bayesretry-0.1.0"));
        assert!(is_workspace_crate("bayesretry-breaker-0.1.0"));
        assert!(is_workspace_crate("bayesretry-sim-12.3.4"));
        assert!(!is_workspace_crate("serde-1.0.220"));
        assert!(!is_workspace_crate("bayesretryx-0.1.0"));
        assert!(!is_workspace_crate("bayesretry"));
        assert!(!is_workspace_crate("bayesretry-breaker"));
    }

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
    fn the_spec_s_python_reference_verifier_is_tested_even_with_skip_tests() {
        for options in [Options { skip_tests: false }, Options { skip_tests: true }] {
            let runs_it = steps(options).unwrap_or_default().iter().any(|step| {
                step.name().contains("python3")
                    && step
                        .args()
                        .iter()
                        .any(|arg| arg == super::SPEC_VERIFIER_TEST)
            });
            assert!(runs_it, "{options:?}");
        }
        let script = crate::step::workspace_root().join(super::SPEC_VERIFIER_TEST);
        assert!(script.is_file(), "{}", script.display());
    }

    #[test]
    fn advisories_are_not_checked() {
        for step in steps(Options::default()).unwrap_or_default() {
            assert!(step.args().iter().all(|arg| arg != "advisories"));
        }
    }
}
