//! A crash loses the entries a `JsonlWriter` had not yet written out (a killed
//! process) or synced (a power cut), from the end and without a trace; the
//! `Fsync` policy bounds how many. A line left unfinished is recorded by
//! `open_after_crash` as one lost record, whatever went with it, so the counts
//! of a log's `dropped` entries are a lower bound of its losses — which is what
//! `docs/SPEC.md` (section 11) says, rather than that a log without a
//! `dropped` entry lost nothing.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod common;

use core::num::NonZeroU32;
use std::fs;
use std::path::PathBuf;

use bayesretry_audit::{Fsync, JsonlWriter, Verifier};
use common::{Disk, record};

/// Entries appended in each case.
const APPENDED: u64 = 10;

/// A disk a writer with `fsync` appended [`APPENDED`] entries to, the writer
/// still running.
fn disk_after_appends(fsync: Fsync) -> (Disk, JsonlWriter<Disk>) {
    let disk = Disk::default();
    let mut writer = JsonlWriter::new(disk.clone(), fsync);
    for i in 0..APPENDED {
        writer.append(&record(i)).unwrap();
    }
    (disk, writer)
}

/// The entries the file a crash left still holds; it verifies.
fn entries_left(bytes: &[u8]) -> u64 {
    Verifier::new().verify_reader(bytes).unwrap().entries()
}

#[test]
fn each_fsync_policy_loses_no_more_than_it_promises() {
    let every_3 = Fsync::Every(NonZeroU32::new(3).unwrap());
    // (policy, entries a killed process keeps, entries a power cut keeps)
    let cases = [
        (Fsync::EveryEntry, APPENDED, APPENDED),
        // synced after entries 3, 6 and 9: the tenth is lost either way
        (every_3, 9, 9),
        // everything waits in the buffer
        (Fsync::Never, 0, 0),
    ];
    for (fsync, killed, power_cut) in cases {
        let (disk, writer) = disk_after_appends(fsync);
        assert_eq!(entries_left(&disk.written()), killed, "{fsync:?}, killed");
        assert_eq!(
            entries_left(&disk.after_power_cut(0)),
            power_cut,
            "{fsync:?}, power cut"
        );
        // written out, lines survive the process but not the machine
        drop(writer);
        assert_eq!(entries_left(&disk.written()), APPENDED, "{fsync:?}");
        assert_eq!(entries_left(&disk.after_power_cut(0)), power_cut);
    }
}

#[test]
fn the_default_policy_loses_the_unsynced_tail_and_the_log_does_not_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let (disk, writer) = disk_after_appends(Fsync::default());
    assert_eq!(disk.durable(), 0, "64 entries go by between two syncs");
    core::mem::forget(writer); // a killed process
    let path = dir.path().join("audit.jsonl");
    fs::write(&path, disk.written()).unwrap();
    let (writer, cut) = JsonlWriter::open_after_crash(&path, Fsync::default()).unwrap();
    // all ten entries are gone, the file is a clean empty log: nothing to cut,
    // no `dropped` entry
    assert_eq!((cut, writer.seal().entries()), (0, 0));
}

#[test]
fn an_unfinished_line_is_counted_as_one_lost_record_however_many_were_lost() {
    let dir = tempfile::tempdir().unwrap();
    let every_4 = Fsync::Every(NonZeroU32::new(4).unwrap());
    let (disk, mut writer) = disk_after_appends(every_4);
    // synced after entries 4 and 8; entries 9 and 10 written out, not synced
    writer.flush().unwrap();
    // the power goes out with a few bytes of entry 9 on disk
    let path = dir.path().join("audit.jsonl");
    fs::write(&path, disk.after_power_cut(20)).unwrap();
    let (writer, cut) = JsonlWriter::open_after_crash(&path, every_4).unwrap();
    assert_eq!(cut, 20);
    drop(writer);
    let text = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 9, "8 entries and the loss");
    assert!(
        lines[8].contains(r#""event":"dropped","count":1"#),
        "{}",
        lines[8]
    );
    // two records were lost; the log counts one
}

/// Section 11 of `docs/SPEC.md`, up to section 12.
fn spec_section_11() -> String {
    let spec = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/SPEC.md");
    let text = fs::read_to_string(spec).unwrap();
    let start = text.find("\n## 11.").expect("a section 11");
    let end = text[start..]
        .find("\n## 12.")
        .map_or(text.len(), |n| start + n);
    text[start..end].to_owned()
}

#[test]
fn the_spec_says_the_dropped_counts_are_a_lower_bound_and_what_each_policy_loses() {
    let spec = spec_section_11();
    let flat = spec.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        !flat.contains("A log with no `dropped` entry lost nothing that reached its writer"),
        "the spec still promises what a crash breaks"
    );
    assert!(flat.contains("**lower bound**"), "{flat}");
    for policy in ["(`EveryEntry`)", "(`Every(n)`;", "(`Never`)"] {
        assert!(
            spec.lines()
                .any(|line| line.starts_with('|') && line.contains(policy)),
            "no row for {policy} in the spec's table of what a crash loses"
        );
    }
}
