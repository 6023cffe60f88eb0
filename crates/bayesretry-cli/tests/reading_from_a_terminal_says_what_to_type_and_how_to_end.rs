//! `bayesretry replay` with no FILE, and `bayesretry inspect -`, read
//! standard input. When that is a terminal (a person typed the command and
//! nothing is piped in), they say on standard error what they are waiting for
//! and how to end it, instead of waiting without a word; from a pipe or a
//! file they say nothing.
//!
//! The terminal is made by util-linux's `script`, which runs the command on a
//! pseudo-terminal and, its own input being empty, ends that terminal's input
//! at once.

#![cfg(target_os = "linux")]
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use std::process::{Command, Stdio};

use common::bayesretry;

/// Everything the terminal showed while `bayesretry args` ran on it, which
/// must end with status `code`.
fn on_a_terminal(args: &str, code: i32) -> String {
    let output = Command::new("script")
        .args(["-q", "-e", "-c"])
        .arg(format!("{} {args}", env!("CARGO_BIN_EXE_bayesretry")))
        .arg("/dev/null")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run `script` (util-linux; Debian's bsdutils) for a pseudo-terminal: {e}")
        });
    // `-e`: the command's status, or `script`'s own failure (no
    // pseudo-terminal to be had), which fails the test saying so
    assert_eq!(
        output.status.code(),
        Some(code),
        "bayesretry {args} on a terminal: {output:?}"
    );
    String::from_utf8_lossy(&output.stdout).replace('\r', "")
}

#[test]
fn replay_on_a_terminal_says_what_to_type_and_how_to_end() {
    let shown = on_a_terminal("replay", 0);
    assert!(
        shown.contains(
            "replay: reading outcomes (1, ok or true for a success; 0, fail or false \
             for a failure) from the terminal: end with Ctrl-D, or give a FILE\n"
        ),
        "{shown}"
    );
    assert!(
        shown.contains("outcomes      0 (0 successes, 0 failures)"),
        "{shown}"
    );
}

#[test]
fn inspect_on_a_terminal_says_what_to_paste_and_how_to_end() {
    let shown = on_a_terminal("inspect -", 65);
    assert!(
        shown.contains(
            "inspect: reading a snapshot from the terminal: end with Ctrl-D, or give STORE.json\n"
        ),
        "{shown}"
    );
    assert!(shown.contains("snapshot file <stdin> is empty"), "{shown}");
}

#[test]
fn piped_input_gets_no_such_word() {
    let run = bayesretry(&["replay"], b"1 0\n");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stderr.is_empty(), "{run:#?}");
    let run = bayesretry(
        &["inspect", "-"],
        br#"{"version":1,"taken_at_ms":0,"entries":[]}"#,
    );
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stderr.is_empty(), "{run:#?}");
}
