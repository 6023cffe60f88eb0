//! A log that went through a tool which changed its bytes without changing
//! a value — line endings converted to Windows' `\r\n` (an editor, a copy
//! through `git` with `core.autocrlf`), a UTF-8 byte order mark put before
//! the first line — no longer verifies: only one byte string means a given
//! entry. But the verifier says what it found, at the first line it touches,
//! rather than "not in canonical form" or a JSON parser's "expected value at
//! column 1", which read like tampering.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

mod common;

use bayesretry_audit::{Error, Verifier};
use common::file_lines;

fn refused(bytes: &[u8]) -> String {
    match Verifier::new().verify_reader(bytes) {
        Err(error @ Error::Malformed { .. }) => error.to_string(),
        other => panic!("expected a malformed line, got {other:?}"),
    }
}

#[test]
fn a_log_with_windows_line_endings_is_refused_at_line_1_naming_the_carriage_return() {
    let crlf: Vec<u8> = file_lines(5)
        .iter()
        .flat_map(|line| {
            let mut line = line.clone();
            line.insert(line.len() - 1, b'\r');
            line
        })
        .collect();
    assert_eq!(
        refused(&crlf),
        "line 1 is not an audit entry: it ends in a carriage return, where a line of a \
         log ends in a line feed alone (were its line endings converted to \\r\\n?)"
    );
}

#[test]
fn one_line_with_a_carriage_return_is_named() {
    let mut lines = file_lines(5);
    let line = &mut lines[2];
    line.insert(line.len() - 1, b'\r');
    let said = refused(&lines.concat());
    assert!(
        said.starts_with("line 3 is not an audit entry: it ends in a carriage return"),
        "{said}"
    );
}

#[test]
fn a_log_that_begins_with_a_byte_order_mark_is_refused_naming_it() {
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(file_lines(3).concat());
    assert_eq!(
        refused(&bytes),
        "line 1 is not an audit entry: it begins with a UTF-8 byte order mark, which a \
         writer never writes (an editor may add one when it saves a file)"
    );
}
