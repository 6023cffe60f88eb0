//! A snapshot path that names a device or a FIFO (`/dev/null`, set to turn
//! saving off, or a link to it) is refused: `open` refuses it, and a path
//! that comes to name one later fails each load and save with an
//! invalid-input error that names it. Before, a load read `/dev/null` as an
//! empty snapshot (and blocked forever on a FIFO), and a save run as root
//! renamed a regular file over the device node `/dev/null` itself.

#![cfg(unix)]

use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt, symlink};

use bayesretry_fs::{Error, FileStore};
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore};

type TestResult = Result<(), Box<dyn core::error::Error>>;

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

#[test]
fn dev_null_is_refused_at_open_directly_or_through_a_link() -> TestResult {
    let opened = FileStore::open("/dev/null");
    assert!(refused(&opened), "{opened:?}");
    let dir = tempfile::tempdir()?;
    let link = dir.path().join("evidence.json");
    symlink("/dev/null", &link)?;
    let opened = FileStore::open(&link);
    assert!(refused(&opened), "{opened:?}");
    Ok(())
}

#[test]
fn a_fifo_is_refused_at_open_and_a_load_does_not_wait_for_a_writer() -> TestResult {
    let dir = tempfile::tempdir()?;
    let fifo = dir.path().join("evidence.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status()?;
    assert!(made.success());
    let opened = FileStore::open(&fifo);
    assert!(refused(&opened), "{opened:?}");
    // a store opened before the FIFO was made: its load returns at once
    fs::remove_file(&fifo)?;
    let file = FileStore::open(&fifo)?;
    let made = std::process::Command::new("mkfifo").arg(&fifo).status()?;
    assert!(made.success());
    let loaded = file.load();
    assert!(refused(&loaded), "{loaded:?}");
    Ok(())
}

#[test]
fn a_link_pointed_at_dev_null_after_open_fails_every_load_and_save() -> TestResult {
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

    let store = MemoryStore::new();
    store.observe(&Context::new("api", 1, ErrorClass::Timeout), true, 0);
    let saved = file.save(&store.snapshot(0));
    assert!(refused(&saved), "{saved:?}");
    let merged = file.save_merged(&store.snapshot(0));
    assert!(refused(&merged), "{merged:?}");
    assert!(fs::metadata("/dev/null")?.file_type().is_char_device());
    Ok(())
}
