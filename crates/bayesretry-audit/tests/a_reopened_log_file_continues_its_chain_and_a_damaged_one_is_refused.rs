//! `JsonlWriter::open` continues the chain of an existing file, refuses one that
//! does not verify, syncs as its `Fsync` policy says, and refuses a record too
//! long for a verifier to read without changing the log.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod common;

use core::num::NonZeroU32;
use std::fs;
use std::io::{self, Write};

use bayesretry_audit::{Durable, Error, Event, Fsync, JsonlWriter, Record, Verifier};
use common::record;

#[test]
fn a_reopened_file_continues_where_it_ended() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let mut first = JsonlWriter::open(&path, Fsync::EveryEntry).unwrap();
    for i in 0..5 {
        first.append(&record(i)).unwrap();
    }
    let after_five = first.seal();
    drop(first);

    let mut second = JsonlWriter::open(&path, Fsync::Never).unwrap();
    assert_eq!(second.seal(), after_five);
    for i in 5..12 {
        second.append(&record(i)).unwrap();
    }
    second.flush().unwrap();
    let seal = second.seal();
    assert_eq!(seal.entries(), 12);
    assert_eq!(
        Verifier::new().with_seal(seal).verify_file(&path).unwrap(),
        seal
    );
    // the seal taken after five entries still holds: the log only grew
    assert_eq!(
        Verifier::new()
            .with_seal(after_five)
            .verify_file(&path)
            .unwrap(),
        seal
    );
}

#[test]
fn a_damaged_file_is_not_appended_to() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let mut writer = JsonlWriter::open(&path, Fsync::Never).unwrap();
    for i in 0..4 {
        writer.append(&record(i)).unwrap();
    }
    drop(writer);
    let good = fs::read_to_string(&path).unwrap();

    // an edited entry
    fs::write(&path, good.replacen("svc-1", "svc-9", 1)).unwrap();
    assert!(matches!(
        JsonlWriter::open(&path, Fsync::Never),
        Err(Error::Broken { line: 2, .. })
    ));

    // a last line cut short, as a crash in the middle of a write leaves it
    fs::write(&path, &good[..good.len() - 20]).unwrap();
    assert!(matches!(
        JsonlWriter::open(&path, Fsync::Never),
        Err(Error::IncompleteLine { line: 4 })
    ));
    assert_eq!(fs::read_to_string(&path).unwrap(), good[..good.len() - 20]);
}

/// A destination that counts its syncs and what had been written at each.
#[derive(Default)]
struct Counting {
    bytes: Vec<u8>,
    synced_at: Vec<usize>,
}

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Durable for Counting {
    fn sync(&mut self) -> io::Result<()> {
        let lines = self.bytes.iter().filter(|&&b| b == b'\n').count();
        self.synced_at.push(lines);
        Ok(())
    }
}

fn synced_at(fsync: Fsync, entries: u64) -> Vec<usize> {
    let mut writer = JsonlWriter::new(Counting::default(), fsync);
    for i in 0..entries {
        writer.append(&record(i)).unwrap();
    }
    writer.into_inner().unwrap().synced_at
}

#[test]
fn the_fsync_policy_decides_when_lines_are_synced() {
    assert_eq!(synced_at(Fsync::Never, 10), Vec::<usize>::new());
    assert_eq!(synced_at(Fsync::EveryEntry, 4), vec![1, 2, 3, 4]);
    let three = NonZeroU32::new(3).unwrap();
    assert_eq!(synced_at(Fsync::Every(three), 10), vec![3, 6, 9]);
    assert_eq!(Fsync::default(), Fsync::Every(NonZeroU32::new(64).unwrap()));
}

#[test]
fn a_record_too_long_to_verify_is_refused_and_the_log_is_unchanged() {
    let mut writer = JsonlWriter::new(Vec::new(), Fsync::Never);
    writer.append(&record(0)).unwrap();
    writer.flush().unwrap();
    let before = writer.seal();
    let huge = Record::new(
        1,
        Event::Outcome {
            endpoint: "e".repeat(70_000),
            attempt: 1,
            error_class: "timeout".to_owned(),
            success: true,
        },
    );
    assert!(matches!(
        writer.append(&huge),
        Err(Error::RecordTooLong { limit: 65536, .. })
    ));
    writer.flush().unwrap();
    assert_eq!(writer.seal(), before);
    writer.append(&record(1)).unwrap();
    writer.flush().unwrap();
    let seal = writer.seal();
    let bytes = writer.into_inner().unwrap();
    assert_eq!(
        Verifier::new().verify_reader(bytes.as_slice()).unwrap(),
        seal
    );
    assert_eq!(seal.entries(), 2);
}

/// A destination whose writes fail.
struct Broken;

impl Write for Broken {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        Err(io::Error::other("disk full"))
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Durable for Broken {
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn after_a_failed_write_the_writer_refuses_more() {
    let mut writer = JsonlWriter::new(Broken, Fsync::EveryEntry);
    assert!(matches!(writer.append(&record(0)), Err(Error::Io { .. })));
    assert!(matches!(writer.append(&record(1)), Err(Error::Poisoned)));
    assert!(matches!(writer.flush(), Err(Error::Poisoned)));
    assert!(matches!(writer.into_inner(), Err(Error::Poisoned)));
}
