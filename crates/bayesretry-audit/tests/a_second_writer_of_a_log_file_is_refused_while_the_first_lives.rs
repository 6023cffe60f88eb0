//! One writer per log file: `JsonlWriter::open` and `open_after_crash` hold an
//! exclusive advisory lock on `<file>.lock` for the writer's life, and a second
//! writer — through the same path, a symbolic link, or an `AuditTrail` — is
//! refused with `Error::Locked`, naming the file, before it reads or changes
//! anything. Once the first writer is gone, the next one opens the file.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod common;

use std::fs;
use std::io::Write;
use std::path::Path;

use bayesretry_audit::{AuditTrail, Error, Fsync, JsonlWriter, Verifier};
use common::record;

/// The file at `path` is refused to a second writer, by both ways of opening
/// it, with an error naming it; it is left as it was.
fn refused_to_a_second_writer(path: &Path, named: &Path) {
    let before = fs::read(path).unwrap();
    match JsonlWriter::open(path, Fsync::EveryEntry) {
        Err(err @ Error::Locked { .. }) => {
            let Error::Locked { path: shown, .. } = &err else {
                unreachable!()
            };
            assert_eq!(shown, named);
            assert!(
                err.to_string().contains(&named.display().to_string()),
                "{err}"
            );
        }
        other => panic!("a second writer: {other:?}"),
    }
    assert!(matches!(
        JsonlWriter::open_after_crash(path, Fsync::EveryEntry),
        Err(Error::Locked { .. })
    ));
    assert_eq!(fs::read(path).unwrap(), before);
}

#[test]
fn a_second_writer_is_refused_until_the_first_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let mut first = JsonlWriter::open(&path, Fsync::EveryEntry).unwrap();
    first.append(&record(0)).unwrap();
    refused_to_a_second_writer(&path, &path);
    assert!(dir.path().join("audit.jsonl.lock").is_file());

    // the first goes on, alone
    first.append(&record(1)).unwrap();
    drop(first);
    let mut second = JsonlWriter::open(&path, Fsync::EveryEntry).unwrap();
    second.append(&record(2)).unwrap();
    assert_eq!(second.seal().entries(), 3);
    // given up, a writer lets the next one in too
    drop(second.into_inner().unwrap());
    let (third, cut) = JsonlWriter::open_after_crash(&path, Fsync::EveryEntry).unwrap();
    assert_eq!((cut, third.seal().entries()), (0, 3));
    drop(third);
    assert_eq!(Verifier::new().verify_file(&path).unwrap().entries(), 3);
}

#[test]
fn a_writer_opened_after_a_crash_holds_the_lock_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    drop(JsonlWriter::open(&path, Fsync::EveryEntry).unwrap());
    fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(br#"{"v":1,"seq":0,"#)
        .unwrap();
    let (writer, cut) = JsonlWriter::open_after_crash(&path, Fsync::EveryEntry).unwrap();
    assert!(cut > 0);
    refused_to_a_second_writer(&path, &path);
    drop(writer);
    assert!(JsonlWriter::open(&path, Fsync::EveryEntry).is_ok());
}

#[test]
fn a_trail_holds_its_file_until_it_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let trail = AuditTrail::spawn(JsonlWriter::open(&path, Fsync::default()).unwrap()).unwrap();
    refused_to_a_second_writer(&path, &path);
    drop(trail.finish().unwrap());
    assert!(JsonlWriter::open(&path, Fsync::default()).is_ok());
}

#[cfg(unix)]
#[test]
fn a_writer_through_a_symbolic_link_takes_the_file_s_lock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let link = dir.path().join("current.jsonl");
    std::os::unix::fs::symlink("audit.jsonl", &link).unwrap();
    let writer = JsonlWriter::open(&path, Fsync::EveryEntry).unwrap();
    refused_to_a_second_writer(&link, &link);
    drop(writer);
    let through_link = JsonlWriter::open(&link, Fsync::EveryEntry).unwrap();
    refused_to_a_second_writer(&path, &path);
    drop(through_link);
    // one lock file, beside the file the link names
    assert!(dir.path().join("audit.jsonl.lock").is_file());
    assert!(!dir.path().join("current.jsonl.lock").exists());
}

/// The first writer's file under another name — a hard link, or the name a
/// rotation renamed it to while the writer ran — locks another `.lock` file
/// beside it; the second writer is refused all the same, since the file it
/// would append to has a writer.
#[cfg(unix)]
#[test]
fn a_writer_given_another_name_of_the_file_is_refused_too() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let mut writer = JsonlWriter::open(&path, Fsync::EveryEntry).unwrap();
    writer.append(&record(0)).unwrap();

    let linked = dir.path().join("linked.jsonl");
    fs::hard_link(&path, &linked).unwrap();
    refused_to_a_second_writer(&linked, &linked);

    let rotated = dir.path().join("audit.jsonl.1");
    fs::rename(&path, &rotated).unwrap();
    refused_to_a_second_writer(&rotated, &rotated);

    // the first writer goes on alone, and then the file is free
    writer.append(&record(1)).unwrap();
    drop(writer);
    let mut second = JsonlWriter::open(&rotated, Fsync::EveryEntry).unwrap();
    second.append(&record(2)).unwrap();
    drop(second);
    assert_eq!(Verifier::new().verify_file(&rotated).unwrap().entries(), 3);
}
