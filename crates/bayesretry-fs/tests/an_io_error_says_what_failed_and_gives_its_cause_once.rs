//! An I/O error's message says what failed and on which file; the operating
//! system's error is its `source()` only, so that a report printing the chain
//! of causes (anyhow, eyre, the CLI) shows it once. A message that holds
//! other errors (a recovery, an unrecoverable file) gives each with its cause.
#![cfg(unix)]

use core::error::Error as _;
use std::fs;
use std::io;

use bayesretry_fs::{Error, FileStore, Source};
use bayesretry_store::MemoryStore;

type TestResult = Result<(), Box<dyn core::error::Error>>;

/// The messages of `error` and of each of its causes, in order.
fn chain(error: &Error) -> Vec<String> {
    let mut messages = vec![error.to_string()];
    let mut next = error.source();
    while let Some(cause) = next.filter(|_| messages.len() < 8) {
        messages.push(cause.to_string());
        next = cause.source();
    }
    messages
}

/// How many of `messages` contain `text`.
fn times(messages: &[String], text: &str) -> usize {
    messages.iter().filter(|m| m.contains(text)).count()
}

/// The text of the error reading a directory gives.
fn is_a_directory() -> Result<String, Box<dyn core::error::Error>> {
    let dir = tempfile::tempdir()?;
    let error = fs::read(dir.path()).err().ok_or("read a directory")?;
    Ok(error.to_string())
}

#[test]
fn a_failed_read_names_the_file_and_gives_the_cause_as_its_source() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    let file = FileStore::open(&path)?;
    // made after the open, which refuses a directory already there
    fs::create_dir(&path)?;
    let error = file.load().err().ok_or("loaded a directory")?;
    assert!(matches!(error, Error::Io { .. }), "{error:?}");
    assert_eq!(error.to_string(), format!("cannot read {}", path.display()));
    let source = error
        .source()
        .and_then(|source| source.downcast_ref::<io::Error>())
        .ok_or("no io::Error source")?;
    assert_eq!(source.to_string(), is_a_directory()?);
    assert_eq!(times(&chain(&error), &is_a_directory()?), 1);
    Ok(())
}

#[test]
fn an_unrecoverable_file_gives_each_reason_with_its_cause_once() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    fs::write(file.path(), b"{")?;
    fs::create_dir(file.backup_path()?)?;
    let error = file
        .load_or_recover()
        .err()
        .ok_or("recovered from two bad files")?;
    assert!(matches!(error, Error::Unrecoverable { .. }), "{error:?}");
    let chain = chain(&error);
    assert_eq!(chain.len(), 1, "the message gives both reasons: {chain:?}");
    let said = &chain[0];
    assert!(said.contains("truncated"), "{said}");
    assert!(
        said.contains(&format!("cannot read {}", file.backup_path()?.display())),
        "{said}"
    );
    assert_eq!(times(&chain, &is_a_directory()?), 1, "{said}");
    Ok(())
}

#[test]
fn a_recovery_says_why_the_file_could_not_be_read_with_its_cause() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    file.save(&MemoryStore::new().snapshot(0))?;
    file.save(&MemoryStore::new().snapshot(0))?;
    fs::remove_file(file.path())?;
    fs::create_dir(file.path())?;
    let merged_error = file
        .save_merged(&MemoryStore::new().snapshot(0))
        .err()
        .ok_or("merged over a directory")?;
    // refused before the lock, as a path no save can replace, saying so once
    assert_eq!(times(&chain(&merged_error), "it is a directory"), 1);

    let recovery = file.load_or_recover()?;
    assert_eq!(recovery.source(), Source::Backup);
    let said = recovery.to_string();
    assert!(
        said.contains(&format!("cannot read {}", file.path().display())),
        "{said}"
    );
    assert_eq!(said.matches(&is_a_directory()?).count(), 1, "{said}");
    Ok(())
}
