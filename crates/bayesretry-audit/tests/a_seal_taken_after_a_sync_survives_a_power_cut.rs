//! A seal vouches only for lines a crash keeps. `AuditTrail::sync` makes what
//! its seal covers durable (it syncs the file, whatever the `Fsync` policy), so
//! a power cut after it loses only later entries: the file left, reopened with
//! `open_after_crash` and written on, still verifies against that seal, where
//! a seal over lost lines would read as a rewrite. A `JsonlWriter`'s seal
//! leaves out lines still in its buffer, which a killed process loses.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod common;

use std::fs;
use std::path::Path;

use bayesretry_audit::{AuditTrail, Fsync, JsonlWriter, Seal, Verifier};
use bayesretry_policy::Observer;
use bayesretry_store::{Context, ErrorClass};
use common::{Disk, record};

/// A trail writing to `disk` with no fsync of its own, fed `n` outcomes.
fn trail_on(disk: &Disk, n: u32) -> AuditTrail<JsonlWriter<Disk>> {
    let trail = AuditTrail::spawn(JsonlWriter::new(disk.clone(), Fsync::Never)).unwrap();
    let observer = trail.observer();
    for attempt in 1..=n {
        observer.on_observe(&Context::new("svc", attempt, ErrorClass::Timeout), false);
    }
    trail
}

/// Writes `bytes` to `path` as the file a crash left, reopens it as a service
/// restarting would, and writes `more` entries to it.
fn restart_on(path: &Path, bytes: &[u8], more: u64) {
    fs::write(path, bytes).unwrap();
    let (mut writer, _cut) = JsonlWriter::open_after_crash(path, Fsync::EveryEntry).unwrap();
    for i in 0..more {
        writer.append(&record(i)).unwrap();
    }
}

/// The number of whole lines in `bytes`.
fn lines(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

#[test]
fn the_trail_s_sync_makes_every_line_its_seal_covers_durable() {
    let disk = Disk::default();
    let trail = trail_on(&disk, 5);
    let seal = trail.sync().unwrap();
    assert_eq!(seal.entries(), 5);
    assert_eq!(disk.durable(), disk.written().len());
    assert_eq!(lines(&disk.after_power_cut(0)), 5);
    drop(trail.finish().unwrap());
}

#[test]
fn a_power_cut_after_the_trail_s_sync_loses_only_later_entries_and_its_seal_holds() {
    let dir = tempfile::tempdir().unwrap();
    let disk = Disk::default();
    let trail = trail_on(&disk, 5);
    let seal = trail.sync().unwrap();
    // three more outcomes, written out when the trail finishes; the power
    // goes before the sync that finishing makes can make them durable
    let observer = trail.observer();
    for attempt in 6..=8 {
        observer.on_observe(&Context::new("svc", attempt, ErrorClass::Timeout), true);
    }
    disk.lose_power();
    drop(trail.finish().unwrap());
    assert_eq!(lines(&disk.written()), 8);

    // the power goes out while the disk writes the first unsynced line, before
    // it, at its first byte, in its middle, or just before its newline; the
    // service restarts and goes on past the seal
    let durable = disk.durable();
    let next_line = disk.written()[durable..]
        .iter()
        .position(|&b| b == b'\n')
        .unwrap();
    for torn in [0, 1, next_line / 2, next_line] {
        let path = dir.path().join(format!("audit-{torn}.jsonl"));
        restart_on(&path, &disk.after_power_cut(torn), 6);
        let verified = Verifier::new().with_seal(seal).verify_file(&path);
        assert!(
            verified.is_ok(),
            "a power cut {torn} bytes into the first unsynced line: {verified:?}"
        );
    }
}

#[test]
fn a_writer_s_seal_leaves_out_lines_still_in_its_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let disk = Disk::default();
    let mut writer = JsonlWriter::new(disk.clone(), Fsync::Never);
    for i in 0..3 {
        writer.append(&record(i)).unwrap();
    }
    // the three lines are in the writer's buffer: a killed process loses them
    let in_buffer = writer.seal();
    assert_eq!(in_buffer, Seal::new(0, bayesretry_audit::Hash::GENESIS));
    let path = dir.path().join("killed.jsonl");
    restart_on(&path, &disk.written(), 4);
    assert!(
        Verifier::new()
            .with_seal(in_buffer)
            .verify_file(&path)
            .is_ok()
    );

    // written out, they survive the process (and the seal covers them), but
    // are durable only once synced
    writer.flush().unwrap();
    let flushed = writer.seal();
    assert_eq!(flushed.entries(), 3);
    assert_eq!(lines(&disk.written()), 3);
    assert_eq!(disk.durable(), 0);
    writer.sync().unwrap();
    assert_eq!(writer.seal(), flushed);
    let path = dir.path().join("power-cut.jsonl");
    restart_on(&path, &disk.after_power_cut(10), 4);
    assert!(
        Verifier::new()
            .with_seal(flushed)
            .verify_file(&path)
            .is_ok()
    );
}
