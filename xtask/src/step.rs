//! A step is one cargo command; a run executes steps in order, stops at the first
//! failure, and closes with how long each step took.

use core::fmt;
use core::time::Duration;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// One command of a task, with the name it is reported under.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    name: String,
    /// The program to run; `None` is the cargo that runs this task.
    program: Option<&'static str>,
    args: Vec<OsString>,
    envs: Vec<(&'static str, &'static str)>,
    hint: Option<&'static str>,
    /// Work done in this process instead of a command, such as clearing a
    /// cache a later command would trust.
    action: Option<fn() -> Result<(), String>>,
}

impl Step {
    /// A `cargo` invocation named `name` (the name shows in `==> name`).
    pub(crate) fn cargo<I, S>(name: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Self {
            name: name.into(),
            program: None,
            args: args.into_iter().map(|a| a.as_ref().to_owned()).collect(),
            envs: Vec::new(),
            hint: None,
            action: None,
        }
    }

    /// Work done by this task itself rather than by a command: `action`, with
    /// `description` shown as its command line.
    pub(crate) fn action(
        name: impl Into<String>,
        description: &'static str,
        action: fn() -> Result<(), String>,
    ) -> Self {
        Self {
            program: Some(description),
            action: Some(action),
            ..Self::cargo(name, core::iter::empty::<&str>())
        }
    }

    /// A command other than cargo, such as `node`, run from the workspace root.
    pub(crate) fn program<I, S>(name: impl Into<String>, program: &'static str, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Self {
            program: Some(program),
            ..Self::cargo(name, args)
        }
    }

    /// Sets an environment variable for this step only.
    pub(crate) fn env(mut self, key: &'static str, value: &'static str) -> Self {
        self.envs.push((key, value));
        self
    }

    /// What to tell the reader when the step fails, typically a missing tool.
    pub(crate) fn hint(mut self, hint: &'static str) -> Self {
        self.hint = Some(hint);
        self
    }

    /// The name the step is reported under.
    #[cfg(test)]
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// The arguments given to cargo.
    #[cfg(test)]
    pub(crate) fn args(&self) -> &[OsString] {
        &self.args
    }

    /// The command line as a reader would type it.
    fn command_line(&self) -> String {
        let mut line = String::new();
        for (key, value) in &self.envs {
            line.push_str(&format!("{key}=\"{value}\" "));
        }
        line.push_str(self.program.unwrap_or("cargo"));
        for arg in &self.args {
            line.push(' ');
            line.push_str(&arg.to_string_lossy());
        }
        line
    }
}

/// Why a run stopped.
#[derive(Debug)]
pub(crate) struct Failure {
    step: String,
    reason: String,
    hint: Option<&'static str>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step `{}` failed: {}", self.step, self.reason)?;
        if let Some(hint) = self.hint {
            write!(f, "\nhint: {hint}")?;
        }
        Ok(())
    }
}

/// Runs `steps` in order from the workspace root, failing fast. Whatever the
/// outcome, prints the elapsed time of every step that ran.
pub(crate) fn run(steps: &[Step]) -> Result<(), Failure> {
    let root = workspace_root();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let mut timings: Vec<(&str, Duration, bool)> = Vec::with_capacity(steps.len());

    let mut outcome = Ok(());
    for step in steps {
        println!("==> {}", step.name);
        println!("    $ {}", step.command_line());
        let started = Instant::now();
        let reason = match step.action {
            Some(action) => action().err(),
            None => command_failure(step, &cargo, &root),
        };
        timings.push((&step.name, started.elapsed(), reason.is_none()));
        if let Some(reason) = reason {
            outcome = Err(Failure {
                step: step.name.clone(),
                reason,
                hint: step.hint,
            });
            break;
        }
    }

    print_timings(&timings, steps.len());
    outcome
}

/// Runs `step`'s command from `root`; why it failed, or `None`.
fn command_failure(step: &Step, cargo: &OsStr, root: &Path) -> Option<String> {
    let program = step
        .program
        .map_or_else(|| cargo.to_owned(), OsString::from);
    let status = Command::new(program)
        .args(&step.args)
        .envs(step.envs.iter().copied())
        .current_dir(root)
        .status();
    match status {
        Ok(status) if status.success() => None,
        Ok(status) => Some(match status.code() {
            Some(code) => format!("`{}` exited with code {code}", step.command_line()),
            None => format!("`{}` was stopped ({status})", step.command_line()),
        }),
        Err(err) => Some(format!("could not start `{}`: {err}", step.command_line())),
    }
}

fn print_timings(timings: &[(&str, Duration, bool)], planned: usize) {
    let width = timings
        .iter()
        .map(|(name, ..)| name.len())
        .fold("total".len(), usize::max);
    let total: Duration = timings.iter().map(|(_, elapsed, _)| *elapsed).sum();
    println!();
    println!("==> elapsed");
    for (name, elapsed, ok) in timings {
        let mark = if *ok { "ok" } else { "FAILED" };
        println!(
            "    {name:<width$}  {:>7.1}s  {mark}",
            elapsed.as_secs_f64()
        );
    }
    let not_run = planned - timings.len();
    if not_run > 0 {
        println!("    ({not_run} later step(s) not run)");
    }
    println!("    {:<width$}  {:>7.1}s", "total", total.as_secs_f64());
}

/// The workspace root: the parent of this package's directory.
pub(crate) fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir.parent().unwrap_or(manifest_dir).to_path_buf()
}
