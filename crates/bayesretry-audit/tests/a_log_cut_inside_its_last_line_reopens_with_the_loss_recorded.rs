//! A machine that stops while a line is being written leaves the log ending
//! inside that line. `JsonlWriter::open` refuses such a file;
//! `open_after_crash` cuts the unfinished line, records the loss in a
//! `dropped` entry and goes on, and refuses any other damage. An error
//! opening a log file names it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod common;

use std::fs;
use std::io::Write;

use bayesretry_audit::{Fsync, JsonlWriter, Verifier};
use common::record;

/// A log of `n` entries at `path`, and its seal.
fn log_of(path: &std::path::Path, n: u64) -> bayesretry_audit::Seal {
    let mut writer = JsonlWriter::open(path, Fsync::EveryEntry).unwrap();
    for i in 0..n {
        writer.append(&record(i)).unwrap();
    }
    writer.seal()
}

fn append_bytes(path: &std::path::Path, bytes: &[u8]) {
    fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

#[test]
fn an_unfinished_last_line_is_cut_and_its_loss_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let sealed = log_of(&path, 6);
    let whole = fs::read(&path).unwrap();
    // the next line, cut a third of the way through
    let next = &common::file_lines(7)[6];
    let torn = &next[..next.len() / 3];
    append_bytes(&path, torn);
    assert!(JsonlWriter::open(&path, Fsync::Never).is_err());

    let (mut writer, cut) = JsonlWriter::open_after_crash(&path, Fsync::Never).unwrap();
    assert_eq!(cut, torn.len() as u64);
    // the six entries, then one recording the lost record
    assert_eq!(writer.seal().entries(), 7);
    writer.append(&record(7)).unwrap();
    writer.flush().unwrap();
    let seal = writer.seal();
    drop(writer);

    // the seal taken before the crash still holds, and so does the new one
    assert!(Verifier::new().with_seal(sealed).verify_file(&path).is_ok());
    assert_eq!(
        Verifier::new().with_seal(seal).verify_file(&path).unwrap(),
        seal
    );
    let text = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8);
    assert!(lines[6].contains(r#""event":"dropped""#), "{}", lines[6]);
    assert!(lines[6].contains(r#""count":1"#), "{}", lines[6]);
    assert_eq!(
        lines[..6].join("\n") + "\n",
        String::from_utf8(whole).unwrap()
    );
}

#[test]
fn a_log_that_ends_cleanly_is_opened_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let sealed = log_of(&path, 4);
    let before = fs::read(&path).unwrap();
    let (writer, cut) = JsonlWriter::open_after_crash(&path, Fsync::Never).unwrap();
    assert_eq!((cut, writer.seal()), (0, sealed));
    drop(writer);
    assert_eq!(fs::read(&path).unwrap(), before);
    // and a missing file is a new, empty log
    let fresh = dir.path().join("new.jsonl");
    let (writer, cut) = JsonlWriter::open_after_crash(&fresh, Fsync::Never).unwrap();
    assert_eq!((cut, writer.seal().entries()), (0, 0));
}

#[test]
fn a_first_line_cut_short_leaves_an_empty_log_and_the_loss() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let torn = br#"{"v":1,"seq":0,"time_ms":5,"ev"#;
    fs::write(&path, torn).unwrap();
    let (writer, cut) = JsonlWriter::open_after_crash(&path, Fsync::Never).unwrap();
    assert_eq!(cut, torn.len() as u64);
    assert_eq!(writer.seal().entries(), 1);
    drop(writer);
    let text = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1);
    assert!(lines[0].contains(r#""event":"dropped""#), "{}", lines[0]);
}

#[test]
fn other_damage_is_still_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    log_of(&path, 5);
    // a whole line changed in the middle of the log, and a torn tail
    let text = fs::read_to_string(&path).unwrap();
    let tampered = text.replacen(r#""seq":2"#, r#""seq":9"#, 1);
    assert_ne!(tampered, text);
    fs::write(&path, tampered + r#"{"v":1"#).unwrap();
    let before = fs::read(&path).unwrap();
    assert!(JsonlWriter::open_after_crash(&path, Fsync::Never).is_err());
    // refused before anything was cut: the file is as it was
    assert_eq!(fs::read(&path).unwrap(), before);
}

#[test]
fn an_error_about_a_log_file_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no such dir").join("audit.jsonl");
    let err = JsonlWriter::open(&path, Fsync::Never).unwrap_err();
    assert!(err.to_string().contains("no such dir"), "{err}");
    let err = JsonlWriter::open_after_crash(&path, Fsync::Never).unwrap_err();
    assert!(err.to_string().contains("no such dir"), "{err}");
}
