//! A store started again under its old writer id without loading the file
//! numbers its entries from 1 again, below its entries on disk: the merge
//! would keep those and drop its new evidence. `save_merged` refuses such a
//! snapshot with a typed error that names the writer and a context, and
//! writes nothing.

use std::fs;

use bayesretry_fs::{Error, FileStore};
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore, StoreConfig, WriterId};

type TestResult = Result<(), Box<dyn core::error::Error>>;

fn ctx() -> Context<'static> {
    Context::new("api", 1, ErrorClass::Timeout)
}

fn on_disk(file: &FileStore) -> Result<(f64, f64), Error> {
    let store = MemoryStore::new();
    store.load(&file.load()?);
    let evidence = store.evidence(&ctx(), 0);
    Ok((evidence.successes(), evidence.failures()))
}

#[test]
fn a_store_restarted_under_its_id_without_loading_gets_an_error_and_the_file_is_kept() -> TestResult
{
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    let first_run = StoreConfig::new().with_writer(WriterId::new(1)).build()?;
    for _ in 0..3 {
        first_run.observe(&ctx(), true, 0);
    }
    file.save_merged(&first_run.snapshot(0))?;

    // Another writer holding an older copy of writer 1's entry is no error:
    // that is how evidence travels, and the file's newer entry is kept.
    let other = StoreConfig::new().with_writer(WriterId::new(2)).build()?;
    first_run.observe(&ctx(), true, 0);
    other.merge(&first_run.snapshot(0));
    file.save_merged(&first_run.snapshot(0))?;
    other.observe(&ctx(), false, 0);
    file.save_merged(&other.snapshot(0))?;
    assert_eq!(on_disk(&file)?, (4.0, 1.0));
    let before = fs::read(file.path())?;

    // Writer 1 runs again without loading the file and sees two failures.
    let second_run = StoreConfig::new().with_writer(WriterId::new(1)).build()?;
    second_run.observe(&ctx(), false, 0);
    second_run.observe(&ctx(), false, 0);
    let error = match file.save_merged(&second_run.snapshot(0)) {
        Err(error) => error,
        Ok(merged) => return Err(format!("saved without a word: {merged}").into()),
    };
    assert!(
        matches!(
            &error,
            Error::WriterBehind { writer, contexts: 1, context, on_disk: 4, in_snapshot: 2, .. }
                if *writer == WriterId::new(1) && context == "api/1/timeout"
        ),
        "{error:?}"
    );
    assert_eq!(error.path(), Some(file.path()));
    let message = error.to_string();
    for needle in [
        "writer 0000000000000001",
        "nothing was written",
        "Load the file",
    ] {
        assert!(message.contains(needle), "{message}");
    }
    assert_eq!(fs::read(file.path())?, before, "nothing was written");

    // Loaded first, the next run keeps both runs' evidence.
    let third_run = StoreConfig::new().with_writer(WriterId::new(1)).build()?;
    third_run.load(&file.load()?);
    third_run.observe(&ctx(), false, 0);
    third_run.observe(&ctx(), false, 0);
    file.save_merged(&third_run.snapshot(0))?;
    assert_eq!(on_disk(&file)?, (4.0, 3.0));
    Ok(())
}

#[test]
fn the_same_sequence_number_with_other_evidence_is_refused_too() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    let first_run = StoreConfig::new().with_writer(WriterId::new(7)).build()?;
    first_run.observe(&ctx(), true, 0);
    first_run.observe(&ctx(), true, 0);
    file.save_merged(&first_run.snapshot(0))?;

    let second_run = StoreConfig::new().with_writer(WriterId::new(7)).build()?;
    second_run.observe(&ctx(), false, 10);
    second_run.observe(&ctx(), false, 10);
    let refused = file.save_merged(&second_run.snapshot(10));
    assert!(
        matches!(
            refused,
            Err(Error::WriterBehind {
                on_disk: 2,
                in_snapshot: 2,
                ..
            })
        ),
        "{refused:?}"
    );
    assert_eq!(on_disk(&file)?, (2.0, 0.0));

    // Saving the very snapshot already on disk again is no conflict.
    file.save_merged(&first_run.snapshot(0))?;
    Ok(())
}
