//! Running the built `bayesretry` binary, and scratch files for it to read.

#![allow(dead_code, reason = "each test file uses only some of these helpers")]
#![allow(
    clippy::expect_used,
    reason = "test helpers: a run that cannot even start must fail the test"
)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread;

/// What one run of the binary did.
#[derive(Debug)]
pub(crate) struct Run {
    /// The exit status; -1 if it was killed by a signal.
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// Asserts the run failed with `code` and one line on stderr containing
    /// every one of `needles`, and nothing on stdout.
    pub(crate) fn fails_with(&self, code: i32, needles: &[&str]) {
        assert_eq!(self.code, code, "{self:#?}");
        assert_eq!(self.stderr.lines().count(), 1, "{self:#?}");
        assert!(self.stderr.starts_with("error: "), "{self:#?}");
        for needle in needles {
            assert!(self.stderr.contains(needle), "no {needle:?} in {self:#?}");
        }
        assert!(!self.stderr.contains("panicked"), "{self:#?}");
        assert!(!self.stderr.contains("backtrace"), "{self:#?}");
    }
}

impl Run {
    /// Asserts the command line was refused: status 64, clap's whole message on
    /// stderr containing every one of `needles`, and nothing on stdout.
    pub(crate) fn is_refused_with(&self, needles: &[&str]) {
        assert_eq!(self.code, 64, "{self:#?}");
        assert!(self.stderr.starts_with("error: "), "{self:#?}");
        assert!(
            self.stderr
                .ends_with("\nFor more information, try '--help'.\n"),
            "{self:#?}"
        );
        for needle in needles {
            assert!(self.stderr.contains(needle), "no {needle:?} in {self:#?}");
        }
        assert!(self.stdout.is_empty(), "{self:#?}");
        assert!(!self.stderr.contains("panicked"), "{self:#?}");
    }
}

/// Runs `bayesretry args...` with `stdin` as its standard input.
pub(crate) fn bayesretry(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bayesretry"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut pipe = child.stdin.take().expect("stdin is piped");
    let input = stdin.to_vec();
    // Fed from a thread so that a large input cannot deadlock against output.
    let feeder = thread::spawn(move || {
        // The binary may exit before reading everything (a bad token): ignore
        // the broken pipe that follows.
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().expect("the binary runs");
    feeder.join().expect("the feeder thread ends");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// A fresh path for a scratch file called `name`, in the test's own temporary
/// directory; any file left there by an earlier run is removed.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("bayesretry-cli");
    std::fs::create_dir_all(&dir).expect("the scratch directory can be made");
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// `path` as a `&str` argument.
pub(crate) fn arg(path: &std::path::Path) -> &str {
    path.to_str().expect("scratch paths are UTF-8")
}
