//! A writer whose disk fills up in the middle of a line returns `Error::Io`
//! naming the file and the operating system's reason, refuses every later
//! call (`Error::Poisoned`) and panics nowhere. The file then ends in the
//! beginning of the line that did not fit: the verifier names that last line
//! as incomplete, every line before it chains, `open` refuses the file, and
//! once there is room `open_after_crash` cuts the unfinished line, records the
//! loss, and goes on with the chain where the whole lines end.
//!
//! The full disk is a real one: a 16 KiB tmpfs mounted for the test, which
//! needs root. Without root (or where mounting is not allowed) each test
//! prints why it skipped, on stderr, and passes; with
//! `BAYESRETRY_TMPFS_REQUIRED=1` it fails instead, so that a run that must
//! cover it cannot skip it unseen.

#![cfg(target_os = "linux")]
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use core::num::NonZeroU32;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use bayesretry_audit::{Error, Fsync, JsonlWriter, Verifier};
use common::record;

/// The size of the small disk, in KiB: about 80 lines of the test's records.
const DISK_KIB: u32 = 16;
/// A bound on the appends before the disk is full.
const MAX_APPENDS: u64 = 10_000;

/// A tmpfs of [`DISK_KIB`] mounted on a new directory, unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// The disk, or `None` (after saying why on stderr) if this run cannot
    /// mount one and is not required to.
    fn mount(test: &str) -> Option<SmallDisk> {
        let dir = tempfile::Builder::new()
            .prefix("bayesretry-full-")
            .tempdir()
            .unwrap();
        // the owner of a new file is the process's file system user
        let probe = dir.path().join("whoami");
        fs::write(&probe, b"").unwrap();
        let uid = fs::metadata(&probe).unwrap().uid();
        fs::remove_file(&probe).unwrap();
        if uid != 0 {
            return skip(
                test,
                &format!("not root (uid {uid}): mounting a tmpfs needs root"),
            );
        }
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={DISK_KIB}k,mode=0700")])
            .arg("tmpfs")
            .arg(dir.path())
            .output();
        match mounted {
            Ok(out) if out.status.success() => Some(SmallDisk { dir }),
            Ok(out) => skip(
                test,
                &format!(
                    "mount -t tmpfs failed ({}): {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            ),
            Err(e) => skip(test, &format!("cannot run mount: {e}")),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Makes the disk four times as large: room again.
    fn grow(&self) {
        let size = format!("remount,size={}k", 4 * DISK_KIB);
        let status = Command::new("mount")
            .args(["-o", &size])
            .arg(self.path())
            .status()
            .unwrap();
        assert!(status.success(), "remount failed: {status}");
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // before the directory itself is removed
        let _unmounted = Command::new("umount").arg(self.dir.path()).status();
    }
}

fn skip(test: &str, why: &str) -> Option<SmallDisk> {
    assert!(
        !std::env::var("BAYESRETRY_TMPFS_REQUIRED").is_ok_and(|v| v == "1"),
        "{test}: {why}, and BAYESRETRY_TMPFS_REQUIRED=1"
    );
    eprintln!("SKIPPED {test}: {why}");
    None
}

/// Appends records with `fsync` until the disk is full: returns the error
/// and how many appends returned `Ok` before it.
fn fill(path: &Path, fsync: Fsync) -> (Error, u64) {
    let mut writer = JsonlWriter::open(path, fsync).unwrap();
    let mut appended = 0;
    let error = loop {
        assert!(appended < MAX_APPENDS, "the disk never filled up");
        match writer.append(&record(appended)) {
            Ok(_) => appended += 1,
            Err(error) => break error,
        }
    };
    // poisoned: nothing more goes to a file that may end inside a line
    assert!(matches!(
        writer.append(&record(appended)),
        Err(Error::Poisoned)
    ));
    assert!(matches!(writer.sync(), Err(Error::Poisoned)));
    drop(writer);
    (error, appended)
}

/// That `error` is the full disk's, on `path`, saying so.
fn assert_disk_full(error: &Error, path: &Path) {
    match error {
        Error::Io {
            op,
            path: Some(named),
            source,
        } => {
            assert_eq!(named, path);
            assert_eq!(source.kind(), io::ErrorKind::StorageFull, "{error:?}");
            assert!(["write", "sync"].contains(op), "{error:?}");
            let shown = error.to_string();
            assert!(shown.contains("decisions.jsonl"), "{shown}");
        }
        other => panic!("expected the full disk's I/O error, got {other:?}"),
    }
}

/// Runs the whole story with `fsync`: fill the disk, check the file, make
/// room, reopen after the crash, go on.
fn fill_then_recover(test: &str, fsync: Fsync) {
    let Some(disk) = SmallDisk::mount(test) else {
        return;
    };
    let path = disk.path().join("decisions.jsonl");
    let (error, appended) = fill(&path, fsync);
    assert_disk_full(&error, &path);

    // every whole line chains; only the last, cut where the disk ended, is
    // named as incomplete — or there is none, if the disk ended on a line's end
    let whole = match Verifier::new().verify_file(&path) {
        Ok(seal) => seal.entries(),
        Err(Error::IncompleteLine { line }) => {
            assert!(matches!(
                JsonlWriter::open(&path, fsync),
                Err(Error::IncompleteLine { .. })
            ));
            line - 1
        }
        Err(other) => panic!("the file left by a full disk does not verify: {other:?}"),
    };
    assert!(whole > 0, "not one line fitted");
    assert!(
        whole <= appended + 1,
        "{whole} lines for {appended} appends"
    );

    disk.grow();
    let (mut writer, cut) = JsonlWriter::open_after_crash(&path, fsync).unwrap();
    let dropped = u64::from(cut > 0);
    assert_eq!(writer.seal().entries(), whole + dropped);
    for i in 0..5 {
        writer.append(&record(1000 + i)).unwrap();
    }
    writer.sync().unwrap();
    let seal = writer.seal();
    drop(writer);
    let summary = Verifier::new()
        .with_seal(seal)
        .summarize_file(&path)
        .unwrap();
    assert_eq!(summary.seal().entries(), whole + dropped + 5);
    assert!(summary.dropped_entries() >= dropped, "{summary:?}");
}

#[test]
fn a_writer_syncing_every_entry_on_a_full_disk_fails_and_its_log_is_reopened_after_crash() {
    fill_then_recover(
        "a_writer_syncing_every_entry_on_a_full_disk",
        Fsync::EveryEntry,
    );
}

#[test]
fn a_writer_syncing_every_ten_entries_on_a_full_disk_fails_and_its_log_is_reopened_after_crash() {
    fill_then_recover(
        "a_writer_syncing_every_ten_entries_on_a_full_disk",
        Fsync::Every(NonZeroU32::new(10).unwrap()),
    );
}

#[test]
fn a_log_cut_by_a_full_disk_reopens_after_crash_while_the_disk_is_still_full() {
    // the cut frees the unfinished line's bytes, the page they were in keeps
    // room for the entry that records the loss: no room needs to be made
    let test = "a_log_cut_by_a_full_disk_reopens_after_crash_while_the_disk_is_still_full";
    let Some(disk) = SmallDisk::mount(test) else {
        return;
    };
    let path = disk.path().join("decisions.jsonl");
    let (error, _appended) = fill(&path, Fsync::EveryEntry);
    assert_disk_full(&error, &path);
    let whole = match Verifier::new().verify_file(&path) {
        Ok(seal) => seal.entries(),
        Err(Error::IncompleteLine { line }) => line - 1,
        Err(other) => panic!("the file left by a full disk does not verify: {other:?}"),
    };
    let (writer, cut) = JsonlWriter::open_after_crash(&path, Fsync::EveryEntry).unwrap();
    let seal = writer.seal();
    drop(writer);
    let summary = Verifier::new()
        .with_seal(seal)
        .summarize_file(&path)
        .unwrap();
    assert_eq!(seal.entries(), whole + u64::from(cut > 0));
    assert_eq!(summary.dropped_entries(), u64::from(cut > 0));
}
