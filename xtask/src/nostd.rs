//! The crates that must build without `std`, and the targets they are built for.
//!
//! A new no_std crate is one line in [`NO_STD_CRATES`]: `cargo xtask nostd` builds it
//! for every target in [`TARGETS`], and `cargo xtask ci` also runs clippy on it.

use crate::step::Step;

/// A workspace crate that must build with `--no-default-features`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NoStdCrate {
    /// The package name, as given to `cargo -p`.
    pub(crate) package: &'static str,
    /// Feature sets to build, each a comma-separated `--features` value (an empty
    /// string builds with no features at all). The first is the smallest set that
    /// builds; clippy checks the crate with it.
    pub(crate) feature_sets: &'static [&'static str],
}

/// Every crate that must build without `std`.
pub(crate) const NO_STD_CRATES: &[NoStdCrate] = &[
    NoStdCrate {
        package: "bayesretry-beta",
        feature_sets: &["libm", "libm,rand"],
    },
    NoStdCrate {
        package: "bayesretry-backoff",
        feature_sets: &["", "rand"],
    },
    NoStdCrate {
        package: "bayesretry-cost",
        feature_sets: &["", "alloc"],
    },
    NoStdCrate {
        package: "bayesretry-budget",
        feature_sets: &[""],
    },
    NoStdCrate {
        package: "bayesretry-breaker",
        feature_sets: &["libm"],
    },
    NoStdCrate {
        package: "bayesretry-decay",
        feature_sets: &["libm"],
    },
    NoStdCrate {
        package: "bayesretry-store",
        feature_sets: &["libm", "libm,alloc", "libm,serde"],
    },
    NoStdCrate {
        package: "bayesretry-decision",
        feature_sets: &["libm", "libm,rand"],
    },
    NoStdCrate {
        package: "bayesretry",
        feature_sets: &["", "alloc,serde,rand"],
    },
];

/// Targets without `std`: a Cortex-M4F microcontroller, and wasm with no host.
pub(crate) const TARGETS: &[&str] = &["thumbv7em-none-eabihf", "wasm32-unknown-unknown"];

const TARGET_HINT: &str =
    "add the targets with `rustup target add thumbv7em-none-eabihf wasm32-unknown-unknown`";

/// One `cargo build` per crate and feature set, for all [`TARGETS`] at once.
pub(crate) fn build_steps() -> Vec<Step> {
    let mut steps = Vec::new();
    for krate in NO_STD_CRATES {
        for features in krate.feature_sets {
            let mut args = vec!["build", "-p", krate.package, "--no-default-features"];
            push_features(&mut args, features);
            for target in TARGETS {
                args.extend(["--target", target]);
            }
            let name = format!("nostd {} [{features}]", krate.package);
            steps.push(Step::cargo(name, args).hint(TARGET_HINT));
        }
    }
    steps
}

/// Clippy on each crate's library with its smallest feature set, so that code
/// compiled only without `std` is linted too.
pub(crate) fn clippy_steps() -> Vec<Step> {
    NO_STD_CRATES
        .iter()
        .map(|krate| {
            let features = krate.feature_sets.first().copied().unwrap_or("");
            let mut args = vec![
                "clippy",
                "-p",
                krate.package,
                "--lib",
                "--no-default-features",
            ];
            push_features(&mut args, features);
            args.extend(["--", "-D", "warnings"]);
            let name = format!("clippy no_std {} [{features}]", krate.package);
            Step::cargo(name, args)
        })
        .collect()
}

fn push_features<'a>(args: &mut Vec<&'a str>, features: &'a str) {
    if !features.is_empty() {
        args.extend(["--features", features]);
    }
}

#[cfg(test)]
mod tests {
    use super::{NO_STD_CRATES, TARGETS, build_steps, clippy_steps};

    #[test]
    fn every_feature_set_is_built_for_every_target() {
        let builds = build_steps();
        let sets: usize = NO_STD_CRATES.iter().map(|k| k.feature_sets.len()).sum();
        assert_eq!(builds.len(), sets);
        for step in &builds {
            for target in TARGETS {
                assert!(step.args().iter().any(|arg| arg == *target));
            }
            assert!(step.args().iter().any(|arg| arg == "--no-default-features"));
        }
        assert_eq!(clippy_steps().len(), NO_STD_CRATES.len());
    }
}
