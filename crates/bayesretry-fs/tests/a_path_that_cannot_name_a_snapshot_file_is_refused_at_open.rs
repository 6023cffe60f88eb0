//! A path that names a directory, or (on Unix) a file whose name leaves no
//! room for the suffixes of the files a save writes beside it, is refused when
//! the store is opened: before, the first save of a long name succeeded and
//! every later one failed, and a path ending in a separator left a temporary
//! file behind at each save.

use std::fs;
use std::io::ErrorKind;

use bayesretry_fs::{Error, FileStore};
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore};

type TestResult = Result<(), Box<dyn core::error::Error>>;

/// The message of the invalid-input error `result` should be, or `None` if
/// it is anything else.
fn invalid_input(result: Result<FileStore, Error>) -> Option<String> {
    match result {
        Err(Error::Io { op, source, .. })
            if op == "use as a snapshot file" && source.kind() == ErrorKind::InvalidInput =>
        {
            Some(source.to_string())
        }
        _ => None,
    }
}

/// Observes and saves twice, so that the second save rotates the first into
/// the backup; the store, for more saves.
fn save_twice(file: &FileStore) -> Result<MemoryStore, Box<dyn core::error::Error>> {
    let store = MemoryStore::new();
    let ctx = Context::new("api", 1, ErrorClass::Timeout);
    store.observe(&ctx, true, 0);
    file.save(&store.snapshot(0))?;
    store.observe(&ctx, true, 0);
    file.save(&store.snapshot(0))?;
    Ok(store)
}

#[test]
fn a_path_ending_in_a_separator_or_a_dot_is_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    fs::create_dir(dir.path().join("sub"))?;
    let slash = format!("{}/evidence.json/", dir.path().display());
    let why = invalid_input(FileStore::open(slash)).unwrap_or_default();
    assert!(why.contains("names a directory"), "{why}");
    let dot = dir.path().join("sub").join(".");
    let why = invalid_input(FileStore::open(dot)).unwrap_or_default();
    assert!(why.contains("names a directory"), "{why}");
    // nothing was created beside `sub`
    assert_eq!(fs::read_dir(dir.path())?.count(), 1);
    Ok(())
}

#[test]
fn an_existing_directory_is_refused_whatever_its_path_ends_in() -> TestResult {
    // A state directory configured where the snapshot file was meant: before,
    // it opened, and every save failed reading it, leaving a lock file beside.
    let dir = tempfile::tempdir()?;
    let state = dir.path().join("state");
    fs::create_dir(&state)?;
    let why = invalid_input(FileStore::open(&state)).unwrap_or_default();
    assert!(why.contains("is a directory"), "{why:?}");
    #[cfg(unix)]
    {
        let link = dir.path().join("link");
        std::os::unix::fs::symlink("state", &link)?;
        let why = invalid_input(FileStore::open(&link)).unwrap_or_default();
        assert!(why.contains("is a directory"), "{why:?}");
    }
    // nothing was created beside it, and it is as it was
    let mut names: Vec<_> = fs::read_dir(dir.path())?
        .map(|entry| entry.map(|e| e.file_name()))
        .collect::<Result<_, _>>()?;
    names.sort();
    let expected: Vec<std::ffi::OsString> = if cfg!(unix) {
        vec!["link".into(), "state".into()]
    } else {
        vec!["state".into()]
    };
    assert_eq!(names, expected);
    assert_eq!(fs::read_dir(&state)?.count(), 0);
    Ok(())
}

#[cfg(unix)]
#[test]
fn a_name_too_long_for_the_backups_temporary_file_is_refused_before_any_save() -> TestResult {
    let dir = tempfile::tempdir()?;
    let too_long = "e".repeat(248);
    let why = invalid_input(FileStore::open(dir.path().join(&too_long))).unwrap_or_default();
    assert!(why.contains("248 bytes"), "{why}");

    // the longest accepted name saves, and saves again over its backup
    let longest = "e".repeat(247);
    let file = FileStore::open(dir.path().join(&longest))?;
    let store = save_twice(&file)?;
    file.save_merged(&store.snapshot(0))?;
    assert_eq!(file.load_backup()?.len(), 1);
    Ok(())
}

#[cfg(unix)]
#[test]
fn a_link_to_a_name_too_long_is_refused_by_save_and_nothing_is_written() -> TestResult {
    let dir = tempfile::tempdir()?;
    let link = dir.path().join("evidence.json");
    std::os::unix::fs::symlink("e".repeat(250), &link)?;
    let why = invalid_input(FileStore::open(&link)).unwrap_or_default();
    assert!(why.contains("250 bytes"), "{why}");
    // a link pointed at such a name after the store was opened
    fs::remove_file(&link)?;
    std::os::unix::fs::symlink("short.json", &link)?;
    let file = FileStore::open(&link)?;
    fs::remove_file(&link)?;
    std::os::unix::fs::symlink("e".repeat(250), &link)?;
    let store = MemoryStore::new();
    store.observe(&Context::new("api", 1, ErrorClass::Timeout), true, 0);
    assert!(matches!(
        file.save(&store.snapshot(0)),
        Err(Error::Io { .. })
    ));
    assert!(matches!(
        file.save_merged(&store.snapshot(0)),
        Err(Error::Io { .. })
    ));
    // only the link itself is in the directory
    assert_eq!(fs::read_dir(dir.path())?.count(), 1);
    Ok(())
}

#[cfg(unix)]
#[test]
fn a_link_with_a_long_name_to_a_file_with_a_short_one_opens_and_saves() -> TestResult {
    // a save writes beside the file the link names, never beside the link:
    // only the file's name must leave room for the suffixes
    let dir = tempfile::tempdir()?;
    let link = dir.path().join("e".repeat(250));
    std::os::unix::fs::symlink("evidence.json", &link)?;
    let file = FileStore::open(&link)?;
    save_twice(&file)?;
    assert_eq!(file.load_backup()?.len(), 1);
    assert!(fs::symlink_metadata(&link)?.file_type().is_symlink());
    Ok(())
}
