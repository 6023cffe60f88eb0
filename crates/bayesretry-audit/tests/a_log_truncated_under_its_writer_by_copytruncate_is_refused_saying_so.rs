//! logrotate's `copytruncate` copies a log and then empties it in place while
//! its writer keeps appending: the writer notices at its next flush that the
//! file shrank under it and refuses to go on (`Error::Shrunk`), and opening
//! the file left says that its first lines were cut, and by what.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod common;

use std::fs::{self, OpenOptions};

use bayesretry_audit::{Error, Fsync, JsonlWriter, Verifier};
use common::record;

/// What `copytruncate` does to the file at `path`: copies it to `to`, then
/// truncates it in place.
fn copytruncate(path: &std::path::Path, to: &std::path::Path) {
    fs::copy(path, to).unwrap();
    OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(0)
        .unwrap();
}

#[test]
fn a_writer_whose_file_was_emptied_under_it_refuses_to_append_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("a.jsonl");
    let mut writer = JsonlWriter::open(&live, Fsync::EveryEntry).unwrap();
    for i in 0..5 {
        writer.append(&record(i)).unwrap();
    }
    copytruncate(&live, &dir.path().join("a.jsonl.1"));

    let err = writer.append(&record(5)).unwrap_err();
    match &err {
        Error::Shrunk { path, written, len } => {
            assert_eq!(path, &live);
            assert!(len < written, "{len} {written}");
        }
        other => panic!("a truncation under the writer not noticed: {other:?}"),
    }
    let text = err.to_string();
    assert!(text.contains("copytruncate"), "{text}");
    assert!(text.contains("renaming"), "{text}");
    // and from then on it refuses everything
    assert!(matches!(writer.append(&record(6)), Err(Error::Poisoned)));
}

#[test]
fn a_writer_that_buffers_notices_at_its_next_flush() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("a.jsonl");
    let mut writer = JsonlWriter::open(&live, Fsync::Never).unwrap();
    for i in 0..5 {
        writer.append(&record(i)).unwrap();
    }
    writer.flush().unwrap();
    copytruncate(&live, &dir.path().join("a.jsonl.1"));
    writer.append(&record(5)).unwrap();
    assert!(matches!(writer.flush(), Err(Error::Shrunk { .. })));
    assert!(matches!(writer.sync(), Err(Error::Poisoned)));
}

#[test]
fn a_file_that_copytruncate_left_is_refused_on_open_saying_its_start_was_cut() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("a.jsonl");
    let mut writer = JsonlWriter::open(&live, Fsync::EveryEntry).unwrap();
    for i in 0..5 {
        writer.append(&record(i)).unwrap();
    }
    copytruncate(&live, &dir.path().join("a.jsonl.1"));
    // the writer's next line lands at the start of the emptied file
    let _ = writer.append(&record(5));
    drop(writer);
    assert!(fs::metadata(&live).unwrap().len() > 0);

    let err = JsonlWriter::open(&live, Fsync::EveryEntry).unwrap_err();
    assert!(matches!(err, Error::Broken { line: 1, .. }), "{err:?}");
    let text = err.to_string();
    assert!(text.contains("entry 5"), "{text}");
    assert!(text.contains("copytruncate"), "{text}");
    let err = Verifier::new().verify_file(&live).unwrap_err();
    assert!(err.to_string().contains("cut from its start"), "{err}");
}

#[test]
fn a_file_that_grew_meanwhile_is_no_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("a.jsonl");
    let mut writer = JsonlWriter::open(&live, Fsync::EveryEntry).unwrap();
    writer.append(&record(0)).unwrap();
    drop(writer);
    // reopened: the length it starts from is the file's
    let mut writer = JsonlWriter::open(&live, Fsync::EveryEntry).unwrap();
    for i in 1..4 {
        writer.append(&record(i)).unwrap();
    }
    writer.sync().unwrap();
    drop(writer);
    assert_eq!(Verifier::new().verify_file(&live).unwrap().entries(), 4);
}
