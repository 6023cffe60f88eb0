//! A save on a disk that fills up in the middle of the new snapshot, or on a
//! file system mounted read-only, fails with `Error::Io` naming the file and
//! the operating system's reason, panics nowhere, and leaves the snapshot and
//! its backup as they were; once there is room again, the next save goes
//! through (the failed one left no half-written temporary file to hold on to
//! the space), and an autosave that failed saves at its next check.
//!
//! The full disk is a real one: a 64 KiB tmpfs mounted for the test, which
//! needs root. Without root (or where mounting is not allowed) each test
//! prints why it skipped, on stderr, and passes; with
//! `BAYESRETRY_TMPFS_REQUIRED=1` it fails instead, so that a run that must
//! cover it cannot skip it unseen.

#![cfg(target_os = "linux")]

extern crate alloc;

use alloc::sync::Arc;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use bayesretry_fs::{Autosave, AutosaveConfig, Check, Error, FileStore};
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore, Snapshot};

type TestResult = Result<(), Box<dyn core::error::Error>>;

/// The size of the small disk, in KiB.
const DISK_KIB: u32 = 64;

/// A tmpfs of [`DISK_KIB`] mounted on a new directory, unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// The disk, or `None` (after saying why on stderr) if this run cannot
    /// mount one and is not required to.
    fn mount(test: &str) -> Result<Option<SmallDisk>, Box<dyn core::error::Error>> {
        let dir = tempfile::Builder::new()
            .prefix("bayesretry-full-")
            .tempdir()?;
        // the owner of a new file is the process's file system user
        let probe = dir.path().join("whoami");
        fs::write(&probe, b"")?;
        let uid = fs::metadata(&probe)?.uid();
        fs::remove_file(&probe)?;
        if uid != 0 {
            return skip(
                test,
                &format!("not root (uid {uid}): mounting a tmpfs needs root"),
            );
        }
        let size = format!("size={DISK_KIB}k,mode=0700");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &size, "tmpfs"])
            .arg(dir.path())
            .output();
        match mounted {
            Ok(out) if out.status.success() => Ok(Some(SmallDisk { dir })),
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

    /// Mounts the disk again, read-only.
    fn make_read_only(&self) -> TestResult {
        let status = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(self.path())
            .status()?;
        if !status.success() {
            return Err(format!("remount read-only failed: {status}").into());
        }
        Ok(())
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        // before the directory itself is removed
        let _unmounted = Command::new("umount").arg(self.dir.path()).status();
    }
}

fn skip(test: &str, why: &str) -> Result<Option<SmallDisk>, Box<dyn core::error::Error>> {
    if std::env::var("BAYESRETRY_TMPFS_REQUIRED").is_ok_and(|v| v == "1") {
        return Err(format!("{test}: {why}, and BAYESRETRY_TMPFS_REQUIRED=1").into());
    }
    eprintln!("SKIPPED {test}: {why}");
    Ok(None)
}

/// A store with `contexts` contexts of one success each, and long endpoint
/// names: about 260 bytes of file per context.
fn store(contexts: usize) -> MemoryStore {
    let store = MemoryStore::new();
    for i in 0..contexts {
        let endpoint = format!("{i:04}-{}", "e".repeat(150));
        store.observe(&Context::new(&endpoint, 1, ErrorClass::Http(503)), true, 0);
    }
    store
}

/// A file on the disk saved twice, so that it has a backup: the snapshots
/// of the file and of the backup.
fn saved_twice(file: &FileStore) -> Result<(Snapshot, Snapshot), Box<dyn core::error::Error>> {
    let older = store(2).snapshot(0);
    let newer = store(3).snapshot(0);
    file.save(&older)?;
    file.save(&newer)?;
    Ok((newer, older))
}

/// That `result` is the disk's refusal `kind`, naming a file of `dir`.
fn assert_refused<T: core::fmt::Debug>(
    result: Result<T, Error>,
    kind: io::ErrorKind,
    dir: &Path,
) -> TestResult {
    match result {
        Err(Error::Io { op, path, source }) if source.kind() == kind => {
            if !path.starts_with(dir) {
                return Err(format!("the error names {}, outside the disk", path.display()).into());
            }
            // the message says what failed on which file, its cause says why
            let error = Error::Io { op, path, source };
            let shown = error.to_string();
            let why = core::error::Error::source(&error).map(ToString::to_string);
            if !shown.contains("evidence.json") || why.is_none_or(|why| !why.contains("os error")) {
                return Err(format!("the error does not say what and why: {error:?}").into());
            }
            Ok(())
        }
        other => Err(format!("expected an I/O error of kind {kind:?}, got {other:?}").into()),
    }
}

/// The names of the files in `dir` that end in `.tmp`.
fn temporaries(dir: &Path) -> Result<Vec<PathBuf>, io::Error> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "tmp") {
            found.push(path);
        }
    }
    Ok(found)
}

/// That the file and its backup hold what they held, and no temporary
/// file is left on the disk.
fn assert_kept(file: &FileStore, kept: &(Snapshot, Snapshot), dir: &Path) -> TestResult {
    if file.load()? != kept.0 {
        return Err("the snapshot changed".into());
    }
    if file.load_backup()? != kept.1 {
        return Err("the backup changed".into());
    }
    let left = temporaries(dir)?;
    if !left.is_empty() {
        return Err(format!("the failed save left {left:?}").into());
    }
    Ok(())
}

#[test]
fn a_save_that_fills_the_disk_fails_and_keeps_the_file_and_its_backup() -> TestResult {
    let Some(disk) = SmallDisk::mount("a_save_that_fills_the_disk")? else {
        return Ok(());
    };
    let file = FileStore::open(disk.path().join("evidence.json"))?;
    let kept = saved_twice(&file)?;
    // about 100 KiB: more than the whole disk
    let big = store(400).snapshot(0);
    assert_refused(file.save(&big), io::ErrorKind::StorageFull, disk.path())?;
    assert_kept(&file, &kept, disk.path())?;
    assert_refused(
        file.save_merged(&big),
        io::ErrorKind::StorageFull,
        disk.path(),
    )?;
    assert_kept(&file, &kept, disk.path())?;

    // the space the failed saves took is free again: a save that fits goes
    // through, after as many failures as it takes
    for _ in 0..20 {
        let _refused = file.save(&big);
    }
    let fits = store(60).snapshot(0);
    file.save(&fits)?;
    assert_eq!(file.load()?, fits);
    assert_eq!(file.load_backup()?, kept.0);
    Ok(())
}

#[test]
fn a_save_on_a_read_only_disk_fails_and_the_file_still_loads() -> TestResult {
    let Some(disk) = SmallDisk::mount("a_save_on_a_read_only_disk")? else {
        return Ok(());
    };
    let file = FileStore::open(disk.path().join("evidence.json"))?;
    let kept = saved_twice(&file)?;
    disk.make_read_only()?;

    // a store opened afterwards, which knows nothing of the file yet
    let later = FileStore::open(disk.path().join("evidence.json"))?;
    let more = store(4).snapshot(0);
    for store in [&file, &later] {
        assert_refused(
            store.save(&more),
            io::ErrorKind::ReadOnlyFilesystem,
            disk.path(),
        )?;
        assert_refused(
            store.save_merged(&more),
            io::ErrorKind::ReadOnlyFilesystem,
            disk.path(),
        )?;
        assert_kept(store, &kept, disk.path())?;
        assert_eq!(store.load_or_recover()?.snapshot(), &kept.0);
    }
    Ok(())
}

#[test]
fn an_autosave_that_found_the_disk_full_saves_once_there_is_room() -> TestResult {
    let Some(disk) = SmallDisk::mount("an_autosave_that_found_the_disk_full")? else {
        return Ok(());
    };
    let path = disk.path().join("evidence.json");
    let filler = disk.path().join("filler");
    let live = Arc::new(store(3));
    let source = Arc::clone(&live);
    let autosave = Autosave::manual(FileStore::open(&path)?, AutosaveConfig::new(), move || {
        source.snapshot(0)
    })?;
    assert_eq!(autosave.check_now()?, Check::Saved);
    let saved = FileStore::open(&path)?.load()?;

    // someone else fills the disk; the store learns more
    let room = usize::try_from(DISK_KIB * 1024)?;
    let _full = fs::write(&filler, vec![b'x'; room]);
    live.observe(&Context::new("late", 1, ErrorClass::Timeout), false, 0);
    assert_refused(
        autosave.check_now(),
        io::ErrorKind::StorageFull,
        disk.path(),
    )?;
    let stats = autosave.stats();
    assert_eq!(stats.failures, 1);
    let said = stats.last_error.unwrap_or_default();
    assert!(said.contains("evidence.json"), "{said}");
    assert_eq!(FileStore::open(&path)?.load()?, saved);

    // room again: the evidence the failed check could not write is written
    fs::remove_file(&filler)?;
    assert_eq!(autosave.check_now()?, Check::Saved);
    assert_eq!(FileStore::open(&path)?.load()?, live.snapshot(0));
    assert_eq!(autosave.shutdown()?, Check::Unchanged);
    Ok(())
}
