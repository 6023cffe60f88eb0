//! `JsonlWriter::rotate` moves the log in two steps, so that a file at the
//! name it rotates to is never overwritten: it gives the file its new name
//! (a hard link, which fails if the name is taken), then removes the live
//! name. A crash between the two leaves the whole log under both names: the
//! live name reopens and verifies as it was, and rotating to the same name
//! again finishes the rotation with nothing lost or written twice. A name
//! that only points at the live file (a symbolic link), or is the live name
//! itself, is refused.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use std::fs;

use bayesretry_audit::{Fsync, JsonlWriter, Verifier};
use common::record;

#[test]
fn a_crash_after_the_new_name_and_before_the_old_one_goes_is_finished_by_the_next_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("decisions.jsonl");
    let old = dir.path().join("decisions.jsonl.1");
    let mut writer = JsonlWriter::open(&live, Fsync::Never).unwrap();
    for i in 0..5 {
        writer.append(&record(i)).unwrap();
    }
    writer.sync().unwrap();
    let before = writer.seal();
    // the rotation's first step, by hand; then the process dies
    fs::hard_link(&live, &old).unwrap();
    drop(writer);

    // the live name still holds the whole log: it verifies and reopens
    assert_eq!(Verifier::new().verify_file(&live).unwrap(), before);
    let mut writer = JsonlWriter::open(&live, Fsync::Never).unwrap();
    for i in 5..8 {
        writer.append(&record(i)).unwrap();
    }

    // rotating to the same name again finishes what the crash cut
    let seal = writer.rotate(&old).unwrap();
    assert_eq!(seal.entries(), 8);
    writer.append(&record(8)).unwrap();
    writer.sync().unwrap();
    let end = writer.seal();
    drop(writer);

    assert_eq!(Verifier::new().verify_file(&old).unwrap(), seal);
    assert_eq!(Verifier::new().summarize_file(&live).unwrap().start(), seal);
    // 8 entries, the link, and one more: each once
    let whole = Verifier::new().summarize_files([&old, &live]).unwrap();
    assert_eq!(whole.seal(), end);
    assert_eq!(end.entries(), 10);
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_to_the_live_file_at_the_new_name_is_refused_and_both_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("decisions.jsonl");
    let old = dir.path().join("decisions.jsonl.1");
    let mut writer = JsonlWriter::open(&live, Fsync::EveryEntry).unwrap();
    writer.append(&record(0)).unwrap();
    std::os::unix::fs::symlink(&live, &old).unwrap();

    let err = writer.rotate(&old).unwrap_err();
    assert!(err.to_string().contains("rotate"), "{err}");
    assert!(fs::symlink_metadata(&old).unwrap().file_type().is_symlink());
    // the writer goes on in its file, which holds every entry
    writer.append(&record(1)).unwrap();
    drop(writer);
    assert_eq!(Verifier::new().verify_file(&live).unwrap().entries(), 2);
}

#[test]
fn a_rotation_to_the_live_name_itself_is_refused_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("decisions.jsonl");
    let mut writer = JsonlWriter::open(&live, Fsync::EveryEntry).unwrap();
    writer.append(&record(0)).unwrap();
    // the same name, spelled another way
    let same = dir.path().join(".").join("decisions.jsonl");
    for to in [&live, &same] {
        assert!(writer.rotate(to).is_err());
    }
    writer.append(&record(1)).unwrap();
    drop(writer);
    assert_eq!(Verifier::new().verify_file(&live).unwrap().entries(), 2);
}
