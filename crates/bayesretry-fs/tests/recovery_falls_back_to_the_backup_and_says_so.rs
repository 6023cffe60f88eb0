//! `load_or_recover` reads the backup when the file is bad and says why; a bad
//! file never pushes a good backup out, never reads as empty, and a file of a
//! newer format is never overwritten.

use std::fs;

use bayesretry_fs::{Error, FileStore, Source};
use bayesretry_store::{
    Context, ErrorClass, MemoryStore, PosteriorStore, Snapshot, StoreConfig, WriterId,
};

type TestResult = Result<(), Box<dyn core::error::Error>>;

/// A store of one writer and the context it observes.
fn store(writer: u64) -> Result<MemoryStore, Box<dyn core::error::Error>> {
    Ok(StoreConfig::new()
        .with_writer(WriterId::new(writer))
        .build()?)
}

fn ctx() -> Context<'static> {
    Context::new("api", 1, ErrorClass::Http(503))
}

/// Saves `n` times, one more success each time; returns the last snapshot.
fn save_rounds(file: &FileStore, store: &MemoryStore, n: u64) -> Result<Snapshot, Error> {
    let mut last = Snapshot::new();
    for now in 1..=n {
        store.observe(&ctx(), true, now);
        last = store.snapshot(now);
        file.save(&last)?;
    }
    Ok(last)
}

fn successes(snapshot: &Snapshot) -> f64 {
    snapshot
        .entries()
        .iter()
        .map(|e| e.evidence().successes())
        .sum()
}

#[test]
fn each_save_keeps_the_previous_snapshot_as_the_backup() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    let store = store(1)?;
    save_rounds(&file, &store, 1)?;
    assert!(file.load_backup().is_err_and(|e| e.is_missing()));
    for round in 2..=4 {
        save_rounds(&file, &store, 1)?;
        assert_eq!(successes(&file.load()?), f64::from(round));
        assert_eq!(successes(&file.load_backup()?), f64::from(round - 1));
    }
    Ok(())
}

#[test]
fn a_bad_file_is_recovered_from_the_backup_with_the_reason() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    let file = FileStore::open(&path)?;
    save_rounds(&file, &store(1)?, 2)?;
    let bad: [&[u8]; 4] = [b"", b"{\"version\":1,\"taken", b"\x00\x01garbage", b"[]"];
    for bytes in bad {
        fs::write(&path, bytes)?;
        let primary_error = file.load().err().ok_or("loaded a bad file")?;
        let recovery = file.load_or_recover()?;
        assert_eq!(recovery.source(), Source::Backup);
        assert!(recovery.origin().recovered());
        assert_eq!(recovery.origin().path(), file.backup_path()?);
        assert_eq!(successes(recovery.snapshot()), 1.0);
        let why = recovery.origin().primary_error().ok_or("no reason given")?;
        assert_eq!(why.to_string(), primary_error.to_string());
        let said = recovery.to_string();
        assert!(
            said.contains("read the backup") && said.contains(&why.to_string()),
            "{said}"
        );
    }
    Ok(())
}

#[test]
fn a_deleted_file_is_recovered_from_the_backup() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    save_rounds(&file, &store(1)?, 3)?;
    fs::remove_file(file.path())?;
    let recovery = file.load_or_recover()?;
    assert_eq!(recovery.source(), Source::Backup);
    assert!(
        recovery
            .origin()
            .primary_error()
            .is_some_and(Error::is_missing)
    );
    assert_eq!(successes(recovery.snapshot()), 2.0);
    Ok(())
}

#[test]
fn with_neither_file_there_recovery_starts_empty_and_says_so() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    let recovery = file.load_or_recover()?;
    assert_eq!(recovery.source(), Source::Neither);
    assert!(recovery.snapshot().is_empty());
    assert!(
        recovery
            .to_string()
            .contains("starting from an empty snapshot")
    );
    Ok(())
}

#[test]
fn with_both_files_bad_recovery_fails_naming_both() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    save_rounds(&file, &store(1)?, 2)?;
    fs::write(file.path(), b"{")?;
    fs::write(file.backup_path()?, b"")?;
    let error = file
        .load_or_recover()
        .err()
        .ok_or("recovered from two bad files")?;
    let Error::Unrecoverable { primary, backup } = &error else {
        return Err(format!("{error:?}").into());
    };
    assert!(matches!(**primary, Error::Truncated { .. }), "{primary:?}");
    assert!(matches!(**backup, Error::Empty { .. }), "{backup:?}");
    let said = error.to_string();
    assert!(
        said.contains("truncated") && said.contains("is empty"),
        "{said}"
    );

    // Only the file bad, backup missing: no empty start either.
    fs::remove_file(file.backup_path()?)?;
    assert!(matches!(
        file.load_or_recover(),
        Err(Error::Unrecoverable { .. })
    ));
    // And save_merged refuses to write over evidence it cannot read.
    let before = fs::read(file.path())?;
    assert!(matches!(
        file.save_merged(&store(2)?.snapshot(0)),
        Err(Error::Unrecoverable { .. })
    ));
    assert_eq!(fs::read(file.path())?, before);
    Ok(())
}

#[test]
fn saving_over_a_bad_file_keeps_the_good_backup() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    let store = store(1)?;
    save_rounds(&file, &store, 2)?; // file: 2, backup: 1
    fs::write(file.path(), b"{\"version\":1,")?;
    save_rounds(&file, &store, 1)?; // file: 3, backup still 1
    assert_eq!(successes(&file.load()?), 3.0);
    assert_eq!(successes(&file.load_backup()?), 1.0);
    Ok(())
}

#[test]
fn save_merged_over_a_bad_file_merges_the_backup_and_says_so() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    save_rounds(&file, &store(1)?, 2)?; // writer 1: file 2 successes, backup 1
    fs::write(file.path(), b"not json")?;
    let other = store(2)?;
    other.observe(&ctx(), false, 5);
    let merged = file.save_merged(&other.snapshot(5))?;
    assert_eq!(merged.origin().source(), Source::Backup);
    assert!(matches!(
        merged.origin().primary_error(),
        Some(Error::NotJson { .. })
    ));
    assert!(merged.to_string().contains("read the backup"));
    // Writer 1's backed-up evidence and writer 2's, once each.
    let restarted = MemoryStore::new();
    restarted.load(&file.load()?);
    let evidence = restarted.evidence(&ctx(), 5);
    assert_eq!((evidence.successes(), evidence.failures()), (1.0, 1.0));
    // The bad file did not become the backup.
    assert_eq!(successes(&file.load_backup()?), 1.0);
    Ok(())
}

#[test]
fn a_file_of_a_newer_format_is_never_overwritten() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    let store = store(1)?;
    save_rounds(&file, &store, 2)?;
    let newer = format!(
        "{{\"version\":{},\"taken_at_ms\":0,\"entries\":[],\"shape\":\"new\"}}\n",
        Snapshot::VERSION + 1
    );
    fs::write(file.path(), &newer)?;
    let snapshot = store.snapshot(9);
    assert!(matches!(
        file.save(&snapshot),
        Err(Error::FutureVersion { .. })
    ));
    assert!(matches!(
        file.save_merged(&snapshot),
        Err(Error::FutureVersion { .. })
    ));
    assert_eq!(fs::read_to_string(file.path())?, newer);
    // Reading may still fall back to the backup, and says why.
    let recovery = file.load_or_recover()?;
    assert_eq!(recovery.source(), Source::Backup);
    assert!(matches!(
        recovery.origin().primary_error(),
        Some(Error::FutureVersion { .. })
    ));
    Ok(())
}

#[test]
fn saving_the_same_snapshot_merged_twice_counts_it_once() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    let store = store(1)?;
    store.observe(&ctx(), true, 1);
    store.observe(&ctx(), false, 2);
    let snapshot = store.snapshot(2);
    let first = file.save_merged(&snapshot)?;
    let second = file.save_merged(&snapshot)?;
    assert_eq!(first.snapshot(), second.snapshot());
    assert_eq!(file.load()?, snapshot);
    Ok(())
}
