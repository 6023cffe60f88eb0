//! A save waits for another's lock only so long. A process that dies releases
//! its lock, but one that is stopped keeps it; past the store's lock timeout a
//! save gives up with `Error::LockTimeout`, naming the lock file, and writes
//! nothing. Once the holder lets go, saves go through again.
//!
//! The timeout here is zero (one try), so nothing in this file waits; the wait
//! itself, its pauses and its bound are tested beside it, on pauses that do not
//! sleep.

use core::time::Duration;
use std::fs::{self, File};

use bayesretry_fs::{Error, FileStore};
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore};
use fs4::FileExt;

type TestResult = Result<(), Box<dyn core::error::Error>>;

fn store() -> MemoryStore {
    let store = MemoryStore::new();
    store.observe(&Context::new("api", 1, ErrorClass::Timeout), true, 0);
    store
}

/// Another holder of `file`'s lock: what a stopped process's save leaves.
fn hold(file: &FileStore) -> Result<File, Box<dyn core::error::Error>> {
    let holder = File::create(file.lock_path()?)?;
    FileExt::lock(&holder)?;
    Ok(holder)
}

fn assert_timed_out(result: Result<(), Error>, file: &FileStore) -> TestResult {
    match result {
        Err(Error::LockTimeout { path, waited }) => {
            assert_eq!(path, file.lock_path()?);
            assert_eq!(waited, Duration::ZERO);
            Ok(())
        }
        other => Err(format!("expected a lock timeout, got {other:?}").into()),
    }
}

#[test]
fn saves_wait_ten_seconds_unless_told_otherwise() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    assert_eq!(file.lock_timeout(), Some(Duration::from_secs(10)));
    assert_eq!(file.without_lock_timeout().lock_timeout(), None);
    Ok(())
}

#[test]
fn a_held_lock_makes_both_saves_give_up_and_write_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?.with_lock_timeout(Duration::ZERO);
    let holder = hold(&file)?;
    let snapshot = store().snapshot(0);

    assert_timed_out(file.save(&snapshot), &file)?;
    assert_timed_out(file.save_merged(&snapshot).map(drop), &file)?;
    assert!(file.load().is_err_and(|e| e.is_missing()));
    let mut names: Vec<_> = fs::read_dir(dir.path())?
        .map(|entry| entry.map(|e| e.file_name()))
        .collect::<Result<_, _>>()?;
    names.sort();
    assert_eq!(names, ["evidence.json.lock"], "no temporary file was left");

    FileExt::unlock(&holder)?;
    drop(holder);
    file.save(&snapshot)?;
    assert_eq!(file.load()?, snapshot);
    Ok(())
}

#[test]
fn the_message_names_the_lock_file_and_the_likely_cause() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?.with_lock_timeout(Duration::ZERO);
    let _holder = hold(&file)?;
    let Err(err) = file.save(&store().snapshot(0)) else {
        return Err("the save went through a held lock".into());
    };
    let message = err.to_string();
    let lock = file.lock_path()?;
    assert!(message.contains(&*lock.to_string_lossy()), "{message}");
    assert!(message.contains("stopped or hung"), "{message}");
    assert!(message.contains("nothing was written"), "{message}");
    assert_eq!(err.path(), Some(lock.as_path()));
    Ok(())
}
