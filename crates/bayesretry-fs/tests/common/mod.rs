//! What the multi-process tests share: a minimal test harness whose binary is
//! also the child process, and the way to start such a child.
//!
//! A test that needs other processes runs its own binary again with
//! [`ROLE`] set in the environment; `main` sees the variable and plays the
//! child instead of the test.

use core::error::Error;
use std::env;
use std::path::Path;
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::Instant;

/// The environment variable that makes the binary a child, and says which.
pub(crate) const ROLE: &str = "BAYESRETRY_FS_TEST_ROLE";
/// The environment variable holding the snapshot file's path, for a child.
pub(crate) const FILE: &str = "BAYESRETRY_FS_TEST_FILE";

pub(crate) type TestResult = Result<(), Box<dyn Error>>;

/// Runs the test `name` (or, in a child, `child` with its role and file) and
/// reports like libtest, honouring a name filter and `--list`.
pub(crate) fn main(
    name: &str,
    test: fn() -> TestResult,
    child: fn(&str, &Path) -> TestResult,
) -> ExitCode {
    if let (Ok(role), Ok(file)) = (env::var(ROLE), env::var(FILE)) {
        return match child(&role, Path::new(&file)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("child {role}: {error}");
                ExitCode::FAILURE
            }
        };
    }
    let args: Vec<String> = env::args().skip(1).collect();
    if args.iter().any(|arg| arg == "--list") {
        println!("{name}: test");
        return ExitCode::SUCCESS;
    }
    let filters: Vec<&String> = args.iter().filter(|arg| !arg.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|filter| name.contains(filter.as_str())) {
        println!(
            "\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 1 filtered out\n"
        );
        return ExitCode::SUCCESS;
    }
    println!("\nrunning 1 test");
    let started = Instant::now();
    let result = test();
    let seconds = started.elapsed().as_secs_f64();
    match result {
        Ok(()) => {
            println!("test {name} ... ok\n");
            println!(
                "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in {seconds:.2}s\n"
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            println!("test {name} ... FAILED\n\n{error}\n");
            println!(
                "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in {seconds:.2}s\n"
            );
            ExitCode::FAILURE
        }
    }
}

/// Starts this binary again as the child `role` on `file`, with pipes for its
/// standard input and output.
pub(crate) fn spawn(role: &str, file: &Path) -> Result<Child, Box<dyn Error>> {
    Ok(Command::new(env::current_exe()?)
        .env(ROLE, role)
        .env(FILE, file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?)
}
