//! A log names endpoints and error classes: a file the writer creates is
//! readable and writable by its owner alone (mode 0600 on Unix), whatever
//! the process's umask would have given. A file that exists keeps the mode
//! it has, and a rotation gives the new file the mode of the old one: so a
//! mode chosen for the log (say 0640, for a group that ships it) is kept.

#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use bayesretry_audit::{AuditTrail, Fsync, Hash, JsonlWriter, Seal};
use common::record;

/// The permission bits of the file at `path`.
fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_new_log_file_is_private_to_its_owner() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("decisions.jsonl");
    let mut writer = JsonlWriter::open(&path, Fsync::EveryEntry).unwrap();
    writer.append(&record(0)).unwrap();
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn every_way_of_opening_a_log_creates_it_private() {
    let dir = tempfile::tempdir().unwrap();
    let after_crash = dir.path().join("after-crash.jsonl");
    drop(JsonlWriter::open_after_crash(&after_crash, Fsync::EveryEntry).unwrap());
    assert_eq!(mode(&after_crash), 0o600);

    let continuing = dir.path().join("continuing.jsonl");
    let from = Seal::new(3, Hash::from_bytes([9; 32]));
    drop(JsonlWriter::open_continuing(&continuing, from, Fsync::EveryEntry).unwrap());
    assert_eq!(mode(&continuing), 0o600);

    let trail = dir.path().join("trail.jsonl");
    let trail_writer = AuditTrail::spawn(JsonlWriter::open(&trail, Fsync::default()).unwrap());
    drop(trail_writer.unwrap().finish().unwrap());
    assert_eq!(mode(&trail), 0o600);
}

#[test]
fn a_log_file_that_exists_keeps_its_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("decisions.jsonl");
    fs::write(&path, b"").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).unwrap();
    let mut writer = JsonlWriter::open(&path, Fsync::EveryEntry).unwrap();
    writer.append(&record(0)).unwrap();
    drop(writer);
    assert_eq!(mode(&path), 0o640);
}

#[test]
fn a_rotation_gives_the_new_file_the_mode_of_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("decisions.jsonl");
    let mut writer = JsonlWriter::open(&live, Fsync::EveryEntry).unwrap();
    writer.append(&record(0)).unwrap();

    // by default, private before and after
    let first = dir.path().join("decisions.jsonl.1");
    writer.rotate(&first).unwrap();
    assert_eq!((mode(&first), mode(&live)), (0o600, 0o600));

    // a mode chosen for the log goes on to the next file
    fs::set_permissions(&live, fs::Permissions::from_mode(0o640)).unwrap();
    writer.append(&record(1)).unwrap();
    let second = dir.path().join("decisions.jsonl.2");
    writer.rotate(&second).unwrap();
    assert_eq!((mode(&second), mode(&live)), (0o640, 0o640));
}
