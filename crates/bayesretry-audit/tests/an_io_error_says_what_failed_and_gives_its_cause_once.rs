//! An I/O error's message says what failed (naming the log file when there is
//! one); the operating system's error is its `source()` only, so that a report
//! printing the chain of causes (anyhow, eyre, the CLI) shows it once.

mod common;

use core::error::Error as _;
use std::io;

use bayesretry_audit::{Error, Event, Fsync, JsonlWriter, Record, Verifier};
use common::Full;

/// The messages of `error` and of each of its causes, in order.
fn chain(error: &Error) -> Vec<String> {
    let mut messages = vec![error.to_string()];
    let mut next = error.source();
    while let Some(cause) = next.filter(|_| messages.len() < 8) {
        messages.push(cause.to_string());
        next = cause.source();
    }
    messages
}

/// Asserts that `error` is an I/O error whose message leaves out `cause`, the
/// text of the operating system's error, which `source()` gives, once.
fn says_its_cause_once(error: &Error, cause: &str) {
    assert!(matches!(error, Error::Io { .. }), "{error:?}");
    assert!(!error.to_string().contains(cause), "{error}");
    let source = error
        .source()
        .and_then(|source| source.downcast_ref::<io::Error>());
    assert_eq!(source.map(ToString::to_string).as_deref(), Some(cause));
    let chain = chain(error);
    let times = chain.iter().filter(|m| m.contains(cause)).count();
    assert_eq!(times, 1, "{chain:?}");
}

/// A source whose reads fail.
struct Unreadable;

impl io::Read for Unreadable {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Err(io::Error::other("bad sector"))
    }
}

#[test]
fn a_failed_write_says_it_was_a_write_and_gives_the_cause_as_its_source() {
    let mut writer = JsonlWriter::new(Full, Fsync::EveryEntry);
    let error = writer
        .append(&Record::new(1, Event::Dropped { count: 1 }))
        .unwrap_err();
    says_its_cause_once(&error, "disk full");
    assert_eq!(error.to_string(), "cannot write the audit log");
}

#[test]
fn a_failed_read_says_it_was_a_read_and_gives_the_cause_as_its_source() {
    let reader = io::BufReader::new(Unreadable);
    let error = Verifier::new().verify_reader(reader).unwrap_err();
    says_its_cause_once(&error, "bad sector");
    assert_eq!(error.to_string(), "cannot read the audit log");
}

#[test]
fn a_log_file_that_cannot_be_opened_is_named_and_the_cause_given_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no such dir").join("audit.jsonl");
    let cause = io::Error::from(io::ErrorKind::NotFound);
    let missing = std::fs::File::open(&path).unwrap_err();
    for error in [
        JsonlWriter::open(&path, Fsync::Never).unwrap_err(),
        JsonlWriter::open_after_crash(&path, Fsync::Never).unwrap_err(),
        Verifier::new().verify_file(&path).unwrap_err(),
    ] {
        says_its_cause_once(&error, &missing.to_string());
        assert_eq!(
            error.to_string(),
            format!("cannot open audit log {}", path.display())
        );
        let source = error.source().and_then(|s| s.downcast_ref::<io::Error>());
        assert_eq!(source.map(io::Error::kind), Some(cause.kind()));
    }
}

#[cfg(unix)]
#[test]
fn a_log_file_that_cannot_be_read_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let error = Verifier::new().verify_file(dir.path()).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("cannot read audit log {}", dir.path().display())
    );
    let source = error.source().and_then(|s| s.downcast_ref::<io::Error>());
    assert!(source.is_some(), "{error:?}");
    assert_eq!(chain(&error).len(), 2);
}

#[test]
fn a_broken_chain_says_where_and_why_in_its_message_alone() {
    let mut writer = JsonlWriter::new(Vec::new(), Fsync::Never);
    for time in 0..3 {
        writer
            .append(&Record::new(time, Event::Dropped { count: 0 }))
            .unwrap();
    }
    let text = String::from_utf8(writer.into_inner().unwrap()).unwrap();
    let tampered = text.replacen(r#""time_ms":1"#, r#""time_ms":7"#, 1);
    let error = Verifier::new()
        .verify_reader(tampered.as_bytes())
        .unwrap_err();
    assert!(matches!(error, Error::Broken { line: 2, .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with("line 2: entry 1: stored hash"),
        "{error}"
    );
    assert!(error.source().is_none(), "the message says it all");
}
