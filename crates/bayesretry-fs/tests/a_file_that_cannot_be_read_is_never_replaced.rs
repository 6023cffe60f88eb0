//! A snapshot file that exists but cannot be read — permissions, too many open
//! files, a failing disk — is not known to be bad: it may hold evidence that
//! the backup lacks. Neither `save` nor `save_merged` replaces it; both return
//! the I/O error and write nothing. (A file that reads as bad is another
//! matter: see `recovery_falls_back_to_the_backup_and_says_so.rs`.)

#![cfg(unix)]

use std::fs;

use bayesretry_fs::{Error, FileStore};
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore};

type TestResult = Result<(), Box<dyn core::error::Error>>;

/// A store with a backup of one success and, in place of the snapshot file,
/// a path that exists but cannot be read (a directory, which fails even for
/// root, unlike a file without read permission). A save that went ahead would
/// fail only at its rename, leaving its temporary file behind: a save that
/// writes nothing leaves none.
fn unreadable() -> Result<(tempfile::TempDir, FileStore, MemoryStore), Box<dyn core::error::Error>>
{
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    let file = FileStore::open(&path)?;
    let store = MemoryStore::new();
    store.observe(&Context::new("api", 1, ErrorClass::Timeout), true, 0);
    file.save(&store.snapshot(0))?;
    file.save(&store.snapshot(0))?;
    fs::remove_file(&path)?;
    fs::create_dir(&path)?;
    assert!(matches!(file.load(), Err(Error::Io { .. })));
    Ok((dir, file, store))
}

#[test]
fn save_merged_returns_the_error_and_writes_nothing() -> TestResult {
    let (dir, file, store) = unreadable()?;
    let merged = file.save_merged(&store.snapshot(1));
    assert!(matches!(merged, Err(Error::Io { .. })), "{merged:?}");
    assert!(fs::symlink_metadata(file.path())?.is_dir());
    assert!(!dir.path().join("evidence.json.tmp").exists());
    Ok(())
}

#[test]
fn save_returns_the_error_and_writes_nothing() -> TestResult {
    let (dir, file, store) = unreadable()?;
    let saved = file.save(&store.snapshot(1));
    assert!(matches!(saved, Err(Error::Io { .. })), "{saved:?}");
    assert!(fs::symlink_metadata(file.path())?.is_dir());
    assert!(!dir.path().join("evidence.json.tmp").exists());
    assert!(file.load_backup().is_ok());
    Ok(())
}
