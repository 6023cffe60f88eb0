//! A snapshot path pointed by mistake at a huge file (a log, a disk image) is
//! refused with an error naming the file, its size and the limit, before the
//! file is read into memory; and no save replaces such a file.
//!
//! The files are sparse (`File::set_len`): the tests write almost nothing.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use bayesretry_fs::{Error, FileStore, Source};
use bayesretry_store::{Context, ErrorClass, PosteriorStore, Snapshot, StoreConfig, WriterId};

type TestResult = Result<(), Box<dyn core::error::Error>>;

/// A file of `len` bytes at `name` in `dir`, all a hole but a first `{`.
fn sparse(dir: &Path, name: &str, len: u64) -> Result<PathBuf, Box<dyn core::error::Error>> {
    let path = dir.join(name);
    fs::write(&path, b"{")?;
    File::options().write(true).open(&path)?.set_len(len)?;
    Ok(path)
}

/// A snapshot of one context.
fn snapshot() -> Result<Snapshot, Box<dyn core::error::Error>> {
    let store = StoreConfig::new().with_writer(WriterId::new(4)).build()?;
    store.observe(
        &Context::new("api.example.com", 1, ErrorClass::Http(503)),
        true,
        1_000,
    );
    Ok(store.snapshot(2_000))
}

#[test]
fn a_file_past_the_default_limit_is_refused_naming_its_size_and_the_limit() -> TestResult {
    let dir = tempfile::tempdir()?;
    let limit = FileStore::DEFAULT_MAX_FILE_BYTES;
    assert_eq!(limit, 256 * 1024 * 1024);
    let path = sparse(dir.path(), "evidence.json", limit + 1)?;
    let store = FileStore::open(&path)?;
    assert_eq!(store.max_file_bytes(), limit);

    let error = store
        .load()
        .err()
        .ok_or("a file past the limit was loaded")?;

    assert!(
        matches!(&error, Error::TooLarge { path: p, size, limit: l }
            if *p == path && *size == limit + 1 && *l == limit),
        "{error:?}"
    );
    assert_eq!(error.path(), Some(path.as_path()));
    let message = error.to_string();
    for words in [
        path.display().to_string(),
        format!("{} bytes", limit + 1),
        format!("{limit} bytes"),
        String::from("with_max_file_bytes"),
    ] {
        assert!(message.contains(&words), "{message:?} should say {words:?}");
    }
    assert!(message.starts_with("snapshot file "), "{message}");
    Ok(())
}

#[test]
fn a_file_at_the_limit_is_read_and_one_byte_more_is_not() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    let json = format!("{}\n", snapshot()?.to_json());
    fs::write(&path, &json)?;
    let len = json.len() as u64;

    let exact = FileStore::open(&path)?.with_max_file_bytes(len);
    assert_eq!(exact.max_file_bytes(), len);
    assert_eq!(exact.load()?, snapshot()?);

    let short = FileStore::open(&path)?.with_max_file_bytes(len - 1);
    assert!(
        matches!(short.load(), Err(Error::TooLarge { size, limit, .. }) if size == len && limit == len - 1)
    );
    Ok(())
}

#[test]
fn the_backup_and_recovery_are_bounded_too() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    let store = FileStore::open(&path)?.with_max_file_bytes(4_096);
    store.save(&snapshot()?)?;
    // the good file is now the backup's size bound's victim: a huge backup
    let backup = store.backup_path()?;
    sparse(dir.path(), "evidence.json.bak", 1 << 40)?;
    assert!(matches!(store.load_backup(), Err(Error::TooLarge { path, .. }) if path == backup));

    // a huge primary falls back to a good backup, and says why
    fs::rename(&path, &backup)?;
    sparse(dir.path(), "evidence.json", 1 << 40)?;
    let recovered = store.load_or_recover()?;
    assert_eq!(recovered.source(), Source::Backup);
    assert_eq!(recovered.snapshot(), &snapshot()?);
    assert!(matches!(
        recovered.origin().primary_error(),
        Some(Error::TooLarge { size, .. }) if *size == 1 << 40
    ));
    Ok(())
}

#[test]
fn no_save_replaces_a_file_past_the_limit() -> TestResult {
    let dir = tempfile::tempdir()?;
    // a disk image where the snapshot was meant to go
    let path = sparse(dir.path(), "evidence.json", 1 << 40)?;
    let store = FileStore::open(&path)?.with_max_file_bytes(1 << 20);

    let saved = store.save(&snapshot()?);
    assert!(matches!(saved, Err(Error::TooLarge { .. })), "{saved:?}");
    // with no backup to merge instead, the error says why for both files
    let merged = store.save_merged(&snapshot()?);
    assert!(
        matches!(&merged, Err(Error::Unrecoverable { primary, .. })
            if matches!(**primary, Error::TooLarge { .. })),
        "{merged:?}"
    );

    assert_eq!(fs::metadata(&path)?.len(), 1 << 40);
    assert!(!dir.path().join("evidence.json.bak").exists());
    assert!(!dir.path().join("evidence.json.tmp").exists());
    Ok(())
}
