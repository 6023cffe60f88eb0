//! A snapshot path that names a device or a FIFO (`/dev/null`, set to turn
//! saving off, or a link to it) is refused: `open` refuses it, and a path
//! that comes to name one later fails each load and save with an
//! invalid-input error that names it. Before, a load read `/dev/null` as an
//! empty snapshot (and blocked forever on a FIFO), and a save run as root
//! renamed a regular file over the device node `/dev/null` itself.
//!
//! These tests must never harm the machine they run on, whatever the code
//! under test does: `/dev/null` is only opened and loaded (read), never
//! saved to. Saves are tried through a link to a FIFO made in a temporary
//! directory, which the refusal covers as it covers a device (anything but a
//! regular file or a directory): were the refusal lost, a save would replace
//! that FIFO, nothing else. An operation that waits on a FIFO fails its test
//! after a while, instead of hanging the run.

#![cfg(unix)]

use core::time::Duration;
use std::fs::{self, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;

use bayesretry_fs::{Error, FileStore};
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore};

type TestResult = Result<(), Box<dyn core::error::Error>>;

/// How long an operation on a FIFO may take before it is taken to be
/// waiting for a writer: a refusal takes microseconds.
const PATIENCE: Duration = Duration::from_secs(20);

/// Whether `result` failed with an invalid-input I/O error saying the path
/// is no regular file.
fn refused<T: core::fmt::Debug>(result: &Result<T, Error>) -> bool {
    matches!(
        result,
        Err(Error::Io { source, .. })
            if source.kind() == ErrorKind::InvalidInput
                && source.to_string().contains("not a regular file")
    )
}

/// A FIFO made with `mkfifo` at `path`; fails the test if it cannot be made.
fn mkfifo(path: &Path) -> TestResult {
    let made = std::process::Command::new("mkfifo").arg(path).status()?;
    if !made.success() {
        return Err(format!("mkfifo {} failed: {made}", path.display()).into());
    }
    Ok(())
}

/// What `operation` returns, run on another thread. If it has not returned
/// within [`PATIENCE`] — it is waiting on the FIFO at `fifo` — the FIFO is
/// opened for writing and closed, so that it returns, and the test fails.
fn without_waiting_on<T: Send + 'static>(
    fifo: PathBuf,
    operation: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Box<dyn core::error::Error>> {
    let (done, returned) = mpsc::channel();
    let worker = thread::spawn(move || {
        let _ = done.send(operation());
    });
    match returned.recv_timeout(PATIENCE) {
        Ok(value) => {
            worker.join().map_err(|_| "the operation panicked")?;
            Ok(value)
        }
        Err(_) => {
            // read and write: never waits itself, and lets a reader go
            drop(OpenOptions::new().read(true).write(true).open(&fifo));
            let _ = worker.join();
            Err(format!("waited on the FIFO {} for {PATIENCE:?}", fifo.display()).into())
        }
    }
}

#[test]
fn dev_null_is_refused_at_open_directly_or_through_a_link() -> TestResult {
    let opened = FileStore::open("/dev/null");
    assert!(refused(&opened), "{opened:?}");
    let dir = tempfile::tempdir()?;
    let link = dir.path().join("evidence.json");
    symlink("/dev/null", &link)?;
    let opened = FileStore::open(&link);
    assert!(refused(&opened), "{opened:?}");
    // nothing made beside the link, nor in /dev
    assert_eq!(fs::read_dir(dir.path())?.count(), 1);
    assert!(!Path::new("/dev/null.lock").exists());
    Ok(())
}

#[test]
fn a_fifo_is_refused_at_open_and_a_load_does_not_wait_for_a_writer() -> TestResult {
    let dir = tempfile::tempdir()?;
    let fifo = dir.path().join("evidence.json");
    mkfifo(&fifo)?;
    let opened = FileStore::open(&fifo);
    assert!(refused(&opened), "{opened:?}");
    // a store opened before the FIFO was made: its load returns at once
    fs::remove_file(&fifo)?;
    let file = FileStore::open(&fifo)?;
    mkfifo(&fifo)?;
    let loaded = without_waiting_on(fifo, move || file.load())?;
    assert!(refused(&loaded), "{loaded:?}");
    Ok(())
}

#[test]
fn a_link_pointed_at_dev_null_after_open_fails_every_load() -> TestResult {
    let dir = tempfile::tempdir()?;
    let link = dir.path().join("evidence.json");
    symlink("real.json", &link)?;
    let file = FileStore::open(&link)?;
    fs::remove_file(&link)?;
    symlink("/dev/null", &link)?;

    let loaded = file.load();
    assert!(refused(&loaded), "{loaded:?}");
    // not an empty start: the device is no missing file
    let recovered = file.load_or_recover().map(|r| r.snapshot().len());
    let why = recovered
        .as_ref()
        .err()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(why.contains("not a regular file"), "{recovered:?}");
    assert!(fs::metadata("/dev/null")?.file_type().is_char_device());
    Ok(())
}

#[test]
fn a_link_pointed_at_a_fifo_after_open_fails_every_save() -> TestResult {
    let dir = tempfile::tempdir()?;
    let link = dir.path().join("evidence.json");
    let fifo = dir.path().join("fifo");
    symlink("real.json", &link)?;
    let file = FileStore::open(&link)?;
    fs::remove_file(&link)?;
    mkfifo(&fifo)?;
    symlink("fifo", &link)?;

    let store = MemoryStore::new();
    store.observe(&Context::new("api", 1, ErrorClass::Timeout), true, 0);
    let snapshot = store.snapshot(0);
    let (saved, merged) = without_waiting_on(fifo.clone(), move || {
        (file.save(&snapshot), file.save_merged(&snapshot))
    })?;
    assert!(refused(&saved), "{saved:?}");
    assert!(refused(&merged), "{merged:?}");
    // the FIFO is still one, and no file was made beside it
    assert!(fs::metadata(&fifo)?.file_type().is_fifo());
    let mut names: Vec<_> = fs::read_dir(dir.path())?
        .map(|entry| entry.map(|e| e.file_name()))
        .collect::<Result<_, _>>()?;
    names.sort();
    assert_eq!(names, ["evidence.json", "fifo"]);
    Ok(())
}
