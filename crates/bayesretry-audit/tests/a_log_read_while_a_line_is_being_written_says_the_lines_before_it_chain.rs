//! A log verified while its writer runs (`bayesretry audit verify` from a
//! cron job, say) can end inside the line being written: a write of many
//! lines reaches the file a page at a time, and a reader can see part of it.
//! The verifier refuses the unfinished line, as it must, but its message
//! says that a running writer leaves one too, and that every line before it
//! chains: not a verdict that reads like tampering.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

mod common;

use bayesretry_audit::{Error, Verifier};
use common::file_lines;

#[test]
fn a_line_still_being_written_is_named_with_what_the_lines_before_it_show() {
    let lines = file_lines(4);
    let mut bytes = lines[..3].concat();
    bytes.extend_from_slice(&lines[3][..lines[3].len() / 2]);
    let error = Verifier::new().verify_reader(bytes.as_slice()).unwrap_err();
    assert!(
        matches!(error, Error::IncompleteLine { line: 4 }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "line 4 has no newline: the file ends inside it, as it does while a writer is \
         writing the line or after one stopped in the middle of it; the 3 lines before \
         it chain"
    );
}

#[test]
fn an_unfinished_first_line_has_no_lines_before_it() {
    let lines = file_lines(1);
    let error = Verifier::new().verify_reader(&lines[0][..10]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "line 1 has no newline: the file ends inside it, as it does while a writer is \
         writing the line or after one stopped in the middle of it"
    );
}
