//! Bad input — an outcome token, a file that is missing or cannot be read —
//! ends with the sysexits status for it and one line on stderr naming the file,
//! line and token — never a panic. (A wrong command line gets clap's whole
//! message: see `a_wrong_command_line_shows_what_clap_says_and_exits_64.rs`.)

mod common;

use common::{arg, bayesretry, scratch};

#[test]
fn a_bad_outcome_token_is_a_data_error_naming_its_line_and_column() {
    let run = bayesretry(&["replay"], b"1 1 0\n1 0 maybe 1\n");
    run.fails_with(65, &["<stdin>:2:5:", "\"maybe\""]);
}

#[test]
fn a_bad_token_in_a_file_names_the_file() {
    let path = scratch("bad-token.txt");
    std::fs::write(&path, "ok\nfail\n\n  2\n").unwrap_or_default();
    let run = bayesretry(&["replay", arg(&path)], b"");
    run.fails_with(65, &[&format!("{}:4:3:", path.display()), "\"2\""]);
}

#[test]
fn binary_garbage_is_a_data_error_not_a_crash() {
    let run = bayesretry(&["replay"], &[0xff, 0xfe, 0x00, b' ', b'1']);
    run.fails_with(65, &["<stdin>:1:1:", "bad outcome token"]);
}

#[test]
fn a_missing_file_is_missing_input() {
    let run = bayesretry(&["replay", "no/such/outcomes.txt"], b"");
    run.fails_with(66, &["no/such/outcomes.txt", "cannot open", "no such file"]);
    let run = bayesretry(&["inspect", "no/such/store.json"], b"");
    run.fails_with(66, &["no/such/store.json", "no such file"]);
}

#[test]
fn a_directory_is_missing_input() {
    let dir = std::env::temp_dir();
    let run = bayesretry(&["replay", arg(&dir)], b"");
    run.fails_with(66, &["is a directory"]);
}

/// A file that opens but whose first read fails (Linux's `/proc/self/mem`:
/// the first page of a process is never mapped) is an I/O error: the message
/// says what failed, and the operating system's reason follows once, in
/// lowercase words.
#[cfg(target_os = "linux")]
#[test]
fn a_file_that_cannot_be_read_is_an_io_error_giving_its_cause_once() {
    let audit = bayesretry(&["audit", "verify", "/proc/self/mem"], b"");
    audit.fails_with(
        74,
        &["error: /proc/self/mem: cannot read the audit log: input/output error\n"],
    );
    let store = bayesretry(&["inspect", "/proc/self/mem"], b"");
    store.fails_with(
        74,
        &["error: cannot read /proc/self/mem: input/output error\n"],
    );
    for run in [audit, store] {
        let said = run.stderr.to_lowercase();
        assert_eq!(said.matches("input/output error").count(), 1, "{run:#?}");
    }
}

#[test]
fn a_closed_stdout_ends_the_run_quietly() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_bayesretry"))
        .args(["replay", "--json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("the binary starts: {e}"));
    drop(child.stdout.take());
    let output = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("the binary runs: {e}"));
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(output.stderr.is_empty(), "{output:?}");
}
