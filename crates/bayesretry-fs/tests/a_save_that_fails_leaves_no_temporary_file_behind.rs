//! A save that fails after it has begun writing — a disk that fills up in the
//! middle of the new snapshot, a backup that cannot be replaced, a rename the
//! file system refuses — returns its error and removes the temporary files it
//! made. On a full disk above all, a half-written `F.tmp` left until the next
//! save would hold on to the very space the next save needs. The snapshot
//! file and its backup are as they were.

#![cfg(unix)]

use std::fs;
use std::path::Path;

use bayesretry_fs::{Error, FileStore};
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore};

type TestResult = Result<(), Box<dyn core::error::Error>>;

/// A file saved once, then a store with more evidence, and in place of the
/// backup a directory that is not empty: the next save writes its temporary
/// file, then fails to rename the new backup over it (which fails for root
/// too, unlike a directory without write permission).
fn with_a_backup_that_cannot_be_replaced()
-> Result<(tempfile::TempDir, FileStore, MemoryStore), Box<dyn core::error::Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    let file = FileStore::open(&path)?;
    let store = MemoryStore::new();
    let ctx = Context::new("api", 1, ErrorClass::Timeout);
    store.observe(&ctx, true, 0);
    file.save(&store.snapshot(0))?;
    let backup = dir.path().join("evidence.json.bak");
    fs::create_dir(&backup)?;
    fs::write(backup.join("keep"), b"")?;
    store.observe(&ctx, false, 1);
    Ok((dir, file, store))
}

fn leftovers(dir: &Path) -> Result<Vec<String>, Box<dyn core::error::Error>> {
    let mut names = Vec::new();
    for entry in fs::read_dir(dir)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.ends_with(".tmp") {
            names.push(name);
        }
    }
    names.sort();
    Ok(names)
}

#[test]
fn a_save_whose_backup_cannot_be_replaced_removes_its_temporary_files() -> TestResult {
    let (dir, file, store) = with_a_backup_that_cannot_be_replaced()?;
    let before = fs::read(file.path())?;
    let saved = file.save(&store.snapshot(1));
    assert!(matches!(saved, Err(Error::Io { .. })), "{saved:?}");
    assert_eq!(leftovers(dir.path())?, Vec::<String>::new());
    assert_eq!(fs::read(file.path())?, before, "the file is as it was");
    Ok(())
}

#[test]
fn a_merging_save_whose_backup_cannot_be_replaced_removes_its_temporary_files() -> TestResult {
    let (dir, file, store) = with_a_backup_that_cannot_be_replaced()?;
    let before = fs::read(file.path())?;
    let merged = file.save_merged(&store.snapshot(1));
    assert!(matches!(merged, Err(Error::Io { .. })), "{merged:?}");
    assert_eq!(leftovers(dir.path())?, Vec::<String>::new());
    assert_eq!(fs::read(file.path())?, before, "the file is as it was");
    Ok(())
}

#[test]
fn the_next_save_after_the_failure_succeeds() -> TestResult {
    let (dir, file, store) = with_a_backup_that_cannot_be_replaced()?;
    assert!(file.save(&store.snapshot(1)).is_err());
    fs::remove_dir_all(dir.path().join("evidence.json.bak"))?;
    file.save(&store.snapshot(2))?;
    assert_eq!(file.load()?, store.snapshot(2));
    assert_eq!(leftovers(dir.path())?, Vec::<String>::new());
    Ok(())
}
