//! A line that is not an entry in canonical form is a typed error naming its
//! line; lines are read with a bound, so a file without newlines cannot make the
//! verifier allocate without limit.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod common;

use std::io::{self, Read};

use bayesretry_audit::{Error, Verifier};
use common::file_lines;

/// Five good lines with line 4 replaced by `bad` (which brings its own newline,
/// or not).
fn with_line_4(bad: &[u8]) -> Vec<u8> {
    let mut lines = file_lines(5);
    lines[3] = bad.to_vec();
    lines.concat()
}

/// Line 4 of a good file as text, without its newline: a decision whose class
/// holds a quote and a newline.
fn line_4() -> String {
    String::from_utf8(file_lines(5)[3].clone())
        .unwrap()
        .trim_end()
        .to_owned()
}

fn verify(bytes: &[u8]) -> Error {
    Verifier::new()
        .verify_reader(bytes)
        .expect_err("a bad line was accepted")
}

#[test]
fn lines_that_are_not_entries_are_malformed() {
    let good = line_4();
    let cases = [
        "hello".to_owned(),
        String::new(),
        "{}".to_owned(),
        "[1,2]".to_owned(),
        good.replacen("{", "{\"extra\":1,", 1),
        good.replacen("\"v\":1,", "", 1),
        good.replacen(",\"hash\":", ",\"hsh\":", 1),
        good.replacen("\"attempt\":4", "\"attempt\":4.0", 1),
        good.replacen("\"attempt\":4", "\"attempt\":-4", 1),
        good.replacen("\"attempt\":4", "\"attempt\":\"4\"", 1),
        good.replacen("\"event\":\"decision\"", "\"event\":\"verdict\"", 1),
        good.replacen(",\"reason\":\"negative_expected_value\"", "", 1),
        good.replacen("\"retry\":false", "\"retry\":false,\"success\":true", 1),
        good.replacen("\"p\":\"3f", "\"p\":\"3F", 1),
        good.replacen("\"p\":\"3f", "\"p\":\"3", 1),
        good.replacen("\"p\":\"", "\"p\":0.5,\"q\":\"", 1),
        // out of range, or of another JSON type (the lines the reference
        // verifier of docs/SPEC.md rejects too)
        good.replacen("\"attempt\":4", "\"attempt\":4294967296", 1),
        good.replacen(
            "\"time_ms\":1764460800750",
            "\"time_ms\":18446744073709551616",
            1,
        ),
        good.replacen("\"attempt\":4", "\"attempt\":true", 1),
        good.replacen("\"retry\":false", "\"retry\":0", 1),
        good.replacen("\"endpoint\":\"svc-3\"", "\"endpoint\":7", 1),
        good.replacen("\"v\":1", "\"v\":true", 1),
    ];
    for (k, case) in cases.iter().enumerate() {
        assert_ne!(case, &good, "case {k} changes nothing");
        let bytes = with_line_4(format!("{case}\n").as_bytes());
        match verify(&bytes) {
            Error::Malformed { line: 4, problem } => assert!(!problem.is_empty()),
            other => panic!("case {k} ({case}): {other:?}"),
        }
    }
    let bytes = with_line_4(b"{\"v\":1,\"seq\":3,\xff}\n");
    assert!(matches!(verify(&bytes), Error::Malformed { line: 4, .. }));
}

#[test]
fn entries_not_in_canonical_form_are_refused() {
    let good = line_4();
    assert!(
        good.contains("\\u000a"),
        "the line holds an escaped newline"
    );
    let cases = [
        good.replacen(",", ", ", 1),
        format!(" {good}"),
        good.replacen("\\u000a", "\\n", 1),
        good.replacen("svc-", "sv\\u0063-", 1),
        {
            // the hash in capitals
            let at = good.find("\"hash\":\"").unwrap() + 8;
            format!("{}{}", &good[..at], good[at..].to_uppercase())
        },
        {
            // two fields swapped
            good.replacen("\"v\":1,\"seq\":3", "\"seq\":3,\"v\":1", 1)
        },
    ];
    for (k, case) in cases.iter().enumerate() {
        assert_ne!(case, &good, "case {k} changes nothing");
        let bytes = with_line_4(format!("{case}\n").as_bytes());
        match verify(&bytes) {
            Error::NotCanonical { line: 4 } => {}
            other => panic!("case {k} ({case}): {other:?}"),
        }
    }
}

#[test]
fn a_version_from_the_future_is_named() {
    let bytes = with_line_4(format!("{}\n", line_4().replacen("\"v\":1", "\"v\":2", 1)).as_bytes());
    assert!(matches!(
        verify(&bytes),
        Error::UnsupportedVersion {
            line: 4,
            version: 2
        }
    ));
}

#[test]
fn a_last_line_without_its_newline_is_incomplete() {
    let lines = file_lines(3);
    let mut bytes = lines.concat();
    bytes.pop();
    assert!(matches!(verify(&bytes), Error::IncompleteLine { line: 3 }));
    // cut in the middle
    bytes.truncate(lines[0].len() + lines[1].len() + 10);
    assert!(matches!(verify(&bytes), Error::IncompleteLine { line: 3 }));
}

#[test]
fn a_line_over_the_bound_is_too_long() {
    let lines = file_lines(3);
    let longest = lines.iter().map(Vec::len).max().unwrap() - 1;
    let bytes = lines.concat();
    assert!(
        Verifier::new()
            .with_max_line_len(longest)
            .verify_reader(bytes.as_slice())
            .is_ok()
    );
    let err = Verifier::new()
        .with_max_line_len(longest - 1)
        .verify_reader(bytes.as_slice())
        .unwrap_err();
    assert!(matches!(err, Error::LineTooLong { limit, .. } if limit == longest - 1));
}

#[test]
fn an_endless_line_is_refused_after_the_bound() {
    // gigabytes without a newline: refused once the bound is passed
    let endless = io::repeat(b'a').take(4 << 30);
    let err = Verifier::new()
        .verify_reader(io::BufReader::new(endless))
        .unwrap_err();
    assert!(matches!(
        err,
        Error::LineTooLong {
            line: 1,
            limit: 65536
        }
    ));
}

#[test]
fn an_empty_file_is_an_empty_log() {
    let seal = Verifier::new().verify_reader(&b""[..]).unwrap();
    assert_eq!(seal.entries(), 0);
}

#[test]
fn a_blank_line_is_named_as_empty_even_after_the_last_entry() {
    let said = |bytes: &[u8]| match verify(bytes) {
        error @ Error::Malformed { .. } => error.to_string(),
        other => panic!("{other:?}"),
    };
    let mut trailing = file_lines(5).concat();
    trailing.push(b'\n');
    assert_eq!(
        said(&trailing),
        "line 6 is not an audit entry: it is empty (a blank line after the last entry), \
         and a log has no blank lines"
    );
    assert_eq!(
        said(&with_line_4(b"\n")),
        "line 4 is not an audit entry: it is empty, and a log has no blank lines"
    );
    assert_eq!(
        said(&with_line_4(b" \t\r\n")),
        "line 4 is not an audit entry: it holds only whitespace, and a log has no blank lines"
    );
    assert_eq!(
        said(b"\n"),
        "line 1 is not an audit entry: it is empty, and a log has no blank lines"
    );
}
