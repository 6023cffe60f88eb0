//! Workspace automation for BayesRetry, run as `cargo xtask <task>` (the alias lives
//! in `.cargo/config.toml`).
//!
//! `cargo xtask ci` is the one script that CI and developers both run, so a green
//! run here means a green run there. Each task is a list of cargo commands run from
//! the workspace root; the first failure stops the task with a non-zero exit.
//!
//! This package has no dependencies, so it builds in seconds on a fresh machine.

mod bench;
mod ci;
mod fuzz;
mod msrv;
mod nostd;
mod step;
mod wasm;

use std::ffi::OsString;
use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <task> [options]

tasks:
  ci [--skip-tests]  every check CI makes: fmt, clippy, tests (and the
                     spec's Python reference verifier, with python3),
                     no_std builds, docs, licences and sources; --skip-tests
                     leaves out `cargo test` for a caller that has just run it
  nostd              build every no_std crate for the embedded and wasm targets
  msrv               check libraries and binaries with the workspace's
                     rust-version (the toolchain must be installed)
  wasm               build the no_std core for wasm32 for size (at most 64
                     KiB) and check its decisions in Node
  fuzz [--seconds N] [TARGET]...
                     run the cargo-fuzz targets of fuzz/ (nightly), each
                     for N seconds (default 30)
  bench [ARGS]...    the criterion benches: `cargo bench --workspace
                     --bench '*' ARGS...`; criterion's own arguments go
                     after `--`, e.g. `cargo xtask bench -- --quick`
  help               print this text";

/// A task named on the command line.
#[derive(Debug, PartialEq, Eq)]
enum Task {
    Ci(ci::Options),
    NoStd,
    Msrv,
    Wasm,
    Fuzz(fuzz::Options),
    Bench(Vec<OsString>),
    Help,
}

impl Task {
    /// Reads the arguments that follow `cargo xtask`.
    fn parse(args: &[OsString]) -> Result<Self, String> {
        let Some((task, rest)) = args.split_first() else {
            return Err("no task given".to_owned());
        };
        let rest_str = || -> Result<Vec<&str>, String> {
            rest.iter()
                .map(|arg| {
                    arg.to_str()
                        .ok_or_else(|| format!("argument {arg:?} is not valid UTF-8"))
                })
                .collect()
        };
        match task.to_str() {
            Some("ci") => {
                let mut options = ci::Options::default();
                for arg in rest_str()? {
                    match arg {
                        "--skip-tests" => options.skip_tests = true,
                        other => return Err(format!("`ci` takes no argument `{other}`")),
                    }
                }
                Ok(Self::Ci(options))
            }
            Some("nostd") => match rest_str()?.first() {
                None => Ok(Self::NoStd),
                Some(other) => Err(format!("`nostd` takes no argument `{other}`")),
            },
            Some("msrv") => match rest_str()?.first() {
                None => Ok(Self::Msrv),
                Some(other) => Err(format!("`msrv` takes no argument `{other}`")),
            },
            Some("wasm") => match rest_str()?.first() {
                None => Ok(Self::Wasm),
                Some(other) => Err(format!("`wasm` takes no argument `{other}`")),
            },
            Some("fuzz") => fuzz::Options::parse(&rest_str()?).map(Self::Fuzz),
            Some("bench") => Ok(Self::Bench(rest.to_vec())),
            Some("help" | "-h" | "--help") => Ok(Self::Help),
            _ => Err(format!("unknown task `{}`", task.to_string_lossy())),
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let task = match Task::parse(&args) {
        Ok(task) => task,
        Err(message) => {
            eprintln!("error: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let steps = match task {
        Task::Ci(options) => ci::steps(options),
        Task::Msrv => msrv::steps(&step::workspace_root()),
        Task::NoStd => Ok(nostd::build_steps()),
        Task::Wasm => Ok(wasm::steps()),
        Task::Fuzz(options) => Ok(fuzz::steps(&options)),
        Task::Bench(args) => Ok(vec![bench::step(&args)]),
        Task::Help => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
    };
    let steps = match steps {
        Ok(steps) => steps,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    match step::run(&steps) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("\nerror: {failure}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Task;
    use crate::ci;
    use std::ffi::OsString;

    fn parse(args: &[&str]) -> Result<Task, String> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        Task::parse(&args)
    }

    #[test]
    fn ci_reads_skip_tests_and_rejects_anything_else() {
        assert_eq!(
            parse(&["ci"]),
            Ok(Task::Ci(ci::Options { skip_tests: false }))
        );
        assert_eq!(
            parse(&["ci", "--skip-tests"]),
            Ok(Task::Ci(ci::Options { skip_tests: true }))
        );
        assert!(parse(&["ci", "--skip-test"]).is_err());
    }

    #[test]
    fn wasm_is_a_task_of_its_own() {
        assert_eq!(parse(&["wasm"]), Ok(Task::Wasm));
    }

    #[test]
    fn bench_passes_every_argument_through() {
        assert_eq!(
            parse(&["bench", "-p", "bayesretry-beta", "--", "--quick"]),
            Ok(Task::Bench(
                ["-p", "bayesretry-beta", "--", "--quick"]
                    .iter()
                    .map(OsString::from)
                    .collect()
            ))
        );
    }

    #[test]
    fn no_task_or_an_unknown_one_is_an_error() {
        assert!(parse(&[]).is_err());
        assert!(parse(&["deploy"]).is_err());
        assert!(parse(&["nostd", "--all"]).is_err());
        assert!(parse(&["wasm", "--release"]).is_err());
    }
}
