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

/// `line` (which ends in its newline) as an editor converting it to `\r\n`
/// leaves it.
fn add_carriage_return(line: &mut Vec<u8>) {
    line.insert(line.len() - 1, b'\r');
}

/// Every line of `lines` converted to `\r\n`.
fn with_carriage_returns(mut lines: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    lines.iter_mut().for_each(add_carriage_return);
    lines
}

fn refused(bytes: &[u8]) -> String {
    match Verifier::new().verify_reader(bytes) {
        Err(error @ Error::Malformed { .. }) => error.to_string(),
        other => panic!("expected a malformed line, got {other:?}"),
    }
}

#[test]
fn a_log_with_windows_line_endings_is_refused_at_line_1_naming_the_carriage_return() {
    let crlf = with_carriage_returns(file_lines(5)).concat();
    assert_eq!(
        refused(&crlf),
        "line 1 is not an audit entry: it ends in a carriage return, where a line of a \
         log ends in a line feed alone (were its line endings converted to \\r\\n?)"
    );
}

#[test]
fn one_line_with_a_carriage_return_is_named() {
    let mut lines = file_lines(5);
    add_carriage_return(&mut lines[2]);
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

/// Line `index` of a log of 5 with its time stamp changed by one: an entry
/// rewritten without its hash recomputed.
fn with_a_changed_entry(index: usize) -> Vec<Vec<u8>> {
    let mut lines = file_lines(5);
    let line = &mut lines[index];
    let at = line
        .windows(9)
        .position(|w| w == b"\"time_ms\"")
        .expect("every entry has a time stamp")
        + 10;
    line[at] = if line[at] == b'9' { b'8' } else { line[at] + 1 };
    lines
}

fn refused_as_changed(bytes: &[u8], line: u64) {
    match Verifier::new().verify_reader(bytes) {
        Err(Error::Broken { line: at, .. }) if at == line => {}
        other => panic!("expected line {line} to be named as changed, got {other:?}"),
    }
}

#[test]
fn a_changed_entry_with_a_carriage_return_added_is_named_as_changed() {
    // the carriage return must not stand in for the change: fixing the line
    // endings would be all a reader of the message thinks there is to do
    let mut lines = with_a_changed_entry(2);
    refused_as_changed(&lines.concat(), 3);
    add_carriage_return(&mut lines[2]);
    refused_as_changed(&lines.concat(), 3);
}

#[test]
fn a_changed_first_entry_of_a_log_converted_to_crlf_is_named_as_changed() {
    let crlf = with_carriage_returns(with_a_changed_entry(0)).concat();
    refused_as_changed(&crlf, 1);
}

#[test]
fn a_changed_first_entry_after_a_byte_order_mark_is_named_as_changed() {
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(with_a_changed_entry(0).concat());
    refused_as_changed(&bytes, 1);
}

#[test]
fn a_byte_order_mark_and_a_carriage_return_on_an_intact_line_name_the_mark() {
    let lines = with_carriage_returns(file_lines(3));
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(lines.concat());
    assert!(
        refused(&bytes)
            .starts_with("line 1 is not an audit entry: it begins with a UTF-8 byte order mark"),
        "{}",
        refused(&bytes)
    );
}

#[test]
fn a_line_of_nothing_but_a_byte_order_mark_names_the_mark() {
    let mut bytes = file_lines(2).concat();
    bytes.extend_from_slice(b"\xEF\xBB\xBF\r\n");
    assert!(
        refused(&bytes)
            .starts_with("line 3 is not an audit entry: it begins with a UTF-8 byte order mark"),
        "{}",
        refused(&bytes)
    );
}

#[test]
fn carriage_returns_by_the_thousand_are_refused_without_exhausting_the_stack() {
    // a line of the longest length the verifier reads, nearly all of it
    // carriage returns: named at once, however many there are
    let mut bytes = file_lines(1).concat();
    bytes.push(b'{');
    bytes.extend(core::iter::repeat_n(b'\r', 60_000));
    bytes.push(b'\n');
    let said = refused(&bytes);
    assert!(said.starts_with("line 2 is not an audit entry"), "{said}");
}
