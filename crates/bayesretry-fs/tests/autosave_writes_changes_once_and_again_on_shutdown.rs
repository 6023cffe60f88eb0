//! `Autosave` writes a snapshot when it changed since the last save, never
//! when it did not, and once more when shut down or dropped; a failing source
//! or save is counted and retried. Checks are asked for explicitly, so no test
//! waits on a clock.

extern crate alloc;

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;

use bayesretry_fs::{Autosave, AutosaveConfig, Check, Error, FileStore};
use bayesretry_store::{
    Context, ErrorClass, MemoryStore, PosteriorStore, Snapshot, StoreConfig, WriterId,
};

type TestResult = Result<(), Box<dyn core::error::Error>>;

fn ctx() -> Context<'static> {
    Context::new("api", 1, ErrorClass::Http(429))
}

fn failures_on_disk(file: &FileStore) -> Result<f64, Error> {
    Ok(file
        .load()?
        .entries()
        .iter()
        .map(|e| e.evidence().failures())
        .sum())
}

/// A store, a file and a manual autosave of the store to the file.
fn setup(
    dir: &tempfile::TempDir,
    config: AutosaveConfig,
) -> Result<(Arc<MemoryStore>, FileStore, Autosave), Box<dyn core::error::Error>> {
    let path = dir.path().join("evidence.json");
    let store = Arc::new(StoreConfig::new().with_writer(WriterId::new(4)).build()?);
    let source = Arc::clone(&store);
    let autosave = Autosave::manual(FileStore::open(&path)?, config, move || source.snapshot(0))?;
    Ok((store, FileStore::open(&path)?, autosave))
}

#[test]
fn an_empty_store_writes_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (_store, file, autosave) = setup(&dir, AutosaveConfig::new())?;
    assert_eq!(autosave.check_now()?, Check::Unchanged);
    autosave.shutdown()?;
    assert!(file.load().is_err_and(|e| e.is_missing()));
    Ok(())
}

#[test]
fn many_changes_between_checks_are_one_save_and_no_change_is_none() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (store, file, autosave) = setup(&dir, AutosaveConfig::new())?;
    for _ in 0..50 {
        store.observe(&ctx(), false, 0);
    }
    assert_eq!(autosave.check_now()?, Check::Saved);
    assert_eq!(failures_on_disk(&file)?, 50.0);
    for _ in 0..3 {
        assert_eq!(autosave.check_now()?, Check::Unchanged);
    }
    store.observe(&ctx(), false, 0);
    assert_eq!(autosave.check_now()?, Check::Saved);
    assert_eq!(failures_on_disk(&file)?, 51.0);
    let stats = autosave.stats();
    assert_eq!((stats.saves, stats.unchanged, stats.failures), (2, 3, 0));
    Ok(())
}

#[test]
fn shutdown_saves_what_changed_since_the_last_check() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (store, file, autosave) = setup(&dir, AutosaveConfig::new())?;
    store.observe(&ctx(), false, 0);
    assert_eq!(autosave.check_now()?, Check::Saved);
    store.observe(&ctx(), false, 0);
    assert_eq!(autosave.shutdown()?, Check::Saved);
    assert_eq!(failures_on_disk(&file)?, 2.0);
    Ok(())
}

#[test]
fn dropping_the_autosave_saves_one_last_time() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (store, file, autosave) = setup(&dir, AutosaveConfig::new())?;
    store.observe(&ctx(), false, 0);
    drop(autosave);
    assert_eq!(failures_on_disk(&file)?, 1.0);
    Ok(())
}

#[test]
fn a_timed_autosave_stops_at_once_and_saves_on_the_way_out() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    let store = Arc::new(MemoryStore::new());
    let source = Arc::clone(&store);
    // An hour between checks: the test must not wait for one.
    let config = AutosaveConfig::new().with_interval(Duration::from_secs(3_600));
    let autosave = Autosave::spawn(FileStore::open(&path)?, config, move || source.snapshot(0))?;
    store.observe(&ctx(), false, 0);
    assert_eq!(autosave.shutdown()?, Check::Saved);
    assert_eq!(failures_on_disk(&FileStore::open(&path)?)?, 1.0);
    Ok(())
}

#[test]
fn a_zero_interval_is_refused() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    let config = AutosaveConfig::new().with_interval(Duration::ZERO);
    let error = Autosave::spawn(file, config, Snapshot::new)
        .err()
        .ok_or("spawned with a zero interval")?;
    assert!(matches!(error, Error::InvalidInterval(d) if d.is_zero()));
    assert!(error.to_string().contains("0ns"), "{error}");
    Ok(())
}

#[test]
fn a_panicking_source_is_counted_and_the_thread_goes_on() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    let store = Arc::new(MemoryStore::new());
    let source = Arc::clone(&store);
    let fail = Arc::new(AtomicBool::new(true));
    let failing = Arc::clone(&fail);
    let autosave = Autosave::manual(FileStore::open(&path)?, AutosaveConfig::new(), move || {
        assert!(!failing.load(Ordering::SeqCst), "the source failed");
        source.snapshot(0)
    })?;
    store.observe(&ctx(), false, 0);
    assert!(matches!(autosave.check_now(), Err(Error::SourcePanicked)));
    fail.store(false, Ordering::SeqCst);
    assert_eq!(autosave.check_now()?, Check::Saved);
    let stats = autosave.stats();
    assert_eq!((stats.saves, stats.failures), (1, 1));
    assert_eq!(
        stats.last_error.as_deref(),
        Some("the autosave's snapshot source panicked")
    );
    Ok(())
}

#[test]
fn a_failed_save_is_tried_again_at_the_next_check() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (store, file, autosave) = setup(&dir, AutosaveConfig::new().with_merge(false))?;
    // A file of a newer format blocks saves until it is moved away.
    let newer = format!("{{\"version\":{}}}", Snapshot::VERSION + 1);
    std::fs::write(file.path(), &newer)?;
    store.observe(&ctx(), false, 0);
    assert!(matches!(
        autosave.check_now(),
        Err(Error::FutureVersion { .. })
    ));
    assert_eq!(std::fs::read_to_string(file.path())?, newer);
    std::fs::remove_file(file.path())?;
    assert_eq!(autosave.check_now()?, Check::Saved);
    assert_eq!(failures_on_disk(&file)?, 1.0);
    let stats = autosave.stats();
    assert_eq!((stats.saves, stats.failures), (1, 1));
    assert!(
        stats
            .last_error
            .is_some_and(|e| e.contains("format version"))
    );
    Ok(())
}

#[test]
fn merging_autosaves_of_two_stores_keep_both() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    let mut autosaves = Vec::new();
    let mut stores = Vec::new();
    for writer in [1, 2] {
        let store = Arc::new(
            StoreConfig::new()
                .with_writer(WriterId::new(writer))
                .build()?,
        );
        let source = Arc::clone(&store);
        autosaves.push(Autosave::manual(
            FileStore::open(&path)?,
            AutosaveConfig::new(),
            move || source.snapshot(0),
        )?);
        stores.push(store);
    }
    for (store, autosave) in stores.iter().zip(&autosaves) {
        store.observe(&ctx(), false, 0);
        assert_eq!(autosave.check_now()?, Check::Saved);
    }
    assert_eq!(failures_on_disk(&FileStore::open(&path)?)?, 2.0);
    Ok(())
}
