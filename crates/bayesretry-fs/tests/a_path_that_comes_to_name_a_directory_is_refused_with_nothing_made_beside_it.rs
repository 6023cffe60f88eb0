//! A snapshot path that names a directory once the store is open — one made
//! at the path, or a symbolic link pointed at a directory elsewhere — is
//! refused by every save with `Error::Io` naming it, before anything is made
//! beside it: no lock file, no temporary file, in a directory the store was
//! never given. A save cannot put a file where a directory is, so there is
//! nothing to lock for.

#![cfg(unix)]

use std::fs;
use std::io;
use std::path::Path;

use bayesretry_fs::{Error, FileStore};
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore};

type TestResult = Result<(), Box<dyn core::error::Error>>;

fn store() -> MemoryStore {
    let store = MemoryStore::new();
    store.observe(&Context::new("api", 1, ErrorClass::Timeout), true, 0);
    store
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Result<Vec<String>, io::Error> {
    let mut names = Vec::new();
    for entry in fs::read_dir(dir)? {
        names.push(entry?.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

/// That `result` refuses the directory `dir` by name.
fn assert_refused<T: core::fmt::Debug>(result: Result<T, Error>, dir: &Path) -> TestResult {
    match result {
        Err(Error::Io { path, .. }) if path == dir => Ok(()),
        other => Err(format!(
            "expected an I/O error naming {}, got {other:?}",
            dir.display()
        )
        .into()),
    }
}

#[test]
fn a_link_pointed_at_a_directory_elsewhere_makes_no_file_beside_that_directory() -> TestResult {
    let ours = tempfile::tempdir()?;
    let theirs = tempfile::tempdir()?;
    let target = theirs.path().join("state.json");
    let link = ours.path().join("evidence.json");
    std::os::unix::fs::symlink(&target, &link)?;
    let file_store = FileStore::open(&link)?;
    file_store.save(&store().snapshot(0))?;

    // someone points the link at a directory beside the file
    let data = theirs.path().join("data");
    fs::create_dir(&data)?;
    fs::write(data.join("keep"), b"theirs")?;
    fs::remove_file(&link)?;
    std::os::unix::fs::symlink(&data, &link)?;
    let before = names(theirs.path())?;

    let snapshot = store().snapshot(1);
    assert_refused(file_store.save(&snapshot), &data)?;
    assert_refused(file_store.save_merged(&snapshot), &data)?;
    assert_eq!(
        names(theirs.path())?,
        before,
        "a save made files beside the directory"
    );
    assert_eq!(names(&data)?, ["keep"]);
    assert_eq!(fs::read(data.join("keep"))?, b"theirs");
    assert!(file_store.load().is_err());
    Ok(())
}

#[test]
fn a_directory_made_at_the_path_after_open_makes_no_lock_file_beside_it() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    let file_store = FileStore::open(&path)?;
    fs::create_dir(&path)?;

    let snapshot = store().snapshot(0);
    assert_refused(file_store.save(&snapshot), &path)?;
    assert_refused(file_store.save_merged(&snapshot), &path)?;
    assert_eq!(names(dir.path())?, ["evidence.json"]);
    assert!(names(&path)?.is_empty());
    Ok(())
}
