//! `cargo xtask bench`: the criterion benches of the workspace.
//!
//! Plain `cargo bench --workspace` also runs every library's unit tests in bench
//! mode under libtest, which rejects criterion's options (`-- --quick` fails with
//! "Unrecognized option"). So unless the caller picks targets, this task selects
//! the bench targets alone with `--bench '*'`; unless the caller names packages
//! with `-p`, it covers the whole workspace.

use std::ffi::{OsStr, OsString};

use crate::step::Step;

/// Options with which a caller picks the targets to run.
const TARGET_SELECTION: &[&str] = &[
    "--bench",
    "--benches",
    "--lib",
    "--bin",
    "--bins",
    "--test",
    "--tests",
    "--example",
    "--examples",
    "--all-targets",
];

/// Options with which a caller picks features.
const FEATURE_SELECTION: &[&str] = &[
    "-F",
    "--features",
    "--all-features",
    "--no-default-features",
];

/// Options with which a caller picks the packages to run.
const PACKAGE_SELECTION: &[&str] = &["-p", "--package", "--workspace"];

/// `cargo bench --workspace --bench '*' --all-features ARGS...`, less what `args`
/// already chooses.
/// Arguments for criterion go after `--`: `cargo xtask bench -- --save-baseline main`.
pub(crate) fn step(args: &[OsString]) -> Step {
    let cargo_args: Vec<&OsStr> = args
        .iter()
        .map(OsString::as_os_str)
        .take_while(|arg| *arg != "--")
        .collect();
    let mut full = vec![OsString::from("bench")];
    if !uses_any(&cargo_args, PACKAGE_SELECTION) {
        full.push(OsString::from("--workspace"));
    }
    if !uses_any(&cargo_args, TARGET_SELECTION) {
        full.extend([OsString::from("--bench"), OsString::from("*")]);
    }
    // Benches compare optional parts too (sampling behind `rand`).
    if !uses_any(&cargo_args, FEATURE_SELECTION) {
        full.push(OsString::from("--all-features"));
    }
    full.extend(args.iter().cloned());
    Step::cargo("bench", full)
}

/// Whether any argument is one of `options`, alone or as `--option=value`.
fn uses_any(args: &[&OsStr], options: &[&str]) -> bool {
    args.iter().any(|arg| {
        let arg = arg.to_string_lossy();
        let name = arg.split_once('=').map_or(&*arg, |(name, _)| name);
        options.contains(&name) || (name.starts_with("-p") && options.contains(&"-p"))
    })
}

#[cfg(test)]
mod tests {
    use super::step;
    use std::ffi::OsString;

    fn args_of(args: &[&str]) -> Vec<String> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        step(&args)
            .args()
            .iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn by_default_runs_only_bench_targets_of_the_whole_workspace() {
        assert_eq!(
            args_of(&["--", "--quick"]),
            [
                "bench",
                "--workspace",
                "--bench",
                "*",
                "--all-features",
                "--",
                "--quick"
            ]
        );
    }

    #[test]
    fn a_caller_choice_of_packages_or_targets_is_kept() {
        assert_eq!(
            args_of(&[
                "-p",
                "bayesretry-beta",
                "--bench",
                "beta",
                "--features",
                "rand"
            ]),
            [
                "bench",
                "-p",
                "bayesretry-beta",
                "--bench",
                "beta",
                "--features",
                "rand"
            ]
        );
        assert_eq!(
            args_of(&["--", "--bench"]),
            [
                "bench",
                "--workspace",
                "--bench",
                "*",
                "--all-features",
                "--",
                "--bench"
            ]
        );
    }
}
