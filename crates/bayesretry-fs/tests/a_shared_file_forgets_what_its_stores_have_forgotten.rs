//! Processes that save into one file with `save_merged` and restart under new
//! random writer ids each add an entry per context. A store with a half-life
//! forgets evidence 64 half-lives old; the file forgets it too, at each save,
//! so it holds the writers of the last 64 half-lives, not every writer that
//! ever saved. And a writer that keeps a fixed id and was forgotten can save
//! again: its old entry on disk neither wins over its new one nor is taken
//! for a conflict.

use core::num::NonZeroU64;

use bayesretry_fs::FileStore;
use bayesretry_store::{
    Context, ErrorClass, HalfLife, MemoryStore, PosteriorStore, StoreConfig, WriterId,
};

type TestResult = Result<(), Box<dyn core::error::Error>>;

const HALF_LIFE: NonZeroU64 = NonZeroU64::new(10 * 60_000).unwrap();
const HOUR_MS: u64 = 60 * 60_000;
/// A Unix time in ms (2026-12-01), as the policy's default clock reads.
const T0: u64 = 1_796_083_200_000;

fn ctx(attempt: u32) -> Context<'static> {
    Context::new("api", attempt, ErrorClass::Http(503))
}

fn store(writer: Option<u64>) -> Result<MemoryStore, bayesretry_store::Error> {
    let config = StoreConfig::new()
        .with_hierarchical_priors(false)
        .with_half_life(HalfLife::from_ms(HALF_LIFE));
    match writer {
        Some(id) => config.with_writer(WriterId::new(id)).build(),
        None => config.build(),
    }
}

#[test]
fn a_file_saved_by_a_process_restarted_every_hour_for_a_week_stays_small() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    for life in 0..(7 * 24) {
        let now = T0 + life * HOUR_MS;
        // a new random writer id each time, loading the file first
        let run = store(None)?;
        if let Ok(saved) = file.load() {
            run.merge_at(&saved, now);
        }
        for attempt in 1..=3 {
            run.observe(&ctx(attempt), attempt != 2, now);
        }
        file.save_merged(&run.snapshot(now))?;
    }
    // 64 ten-minute half-lives are 10 h 40 min. The saver's own entries and
    // those of the 11 lives before it: others' entries go once they are that
    // much older than the newest other writer's, the life an hour before.
    let saved = file.load()?;
    assert_eq!(saved.len(), 3 * 12, "{} entries", saved.len());
    let oldest = saved.entries().iter().map(|e| e.updated_at_ms()).min();
    assert_eq!(oldest, Some(T0 + (7 * 24 - 12) * HOUR_MS));
    Ok(())
}

/// A host whose clock runs 12 hours fast saves into the file, twice: by its
/// clock, everyone else's evidence is 64 half-lives old. The file keeps it
/// all the same, for the readers whose clocks are right.
#[test]
fn a_saver_whose_clock_runs_hours_ahead_does_not_erase_the_others_evidence() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    let honest = store(Some(1))?;
    for _ in 0..50 {
        honest.observe(&ctx(1), false, T0);
    }
    file.save_merged(&honest.snapshot(T0))?;
    let skewed = store(Some(2))?;
    for hour in 0..2 {
        let ahead = T0 + (12 + hour) * HOUR_MS;
        skewed.merge_at(&file.load()?, ahead);
        skewed.observe(&ctx(1), true, ahead);
        file.save_merged(&skewed.snapshot(ahead))?;
    }
    let reader = store(Some(9))?;
    reader.merge_at(&file.load()?, T0 + 60_000);
    let evidence = reader.evidence(&ctx(1), T0 + 60_000);
    assert!(evidence.failures() > 40.0, "{evidence:?}");
    Ok(())
}

#[test]
fn a_fixed_writer_forgotten_while_away_saves_again_and_its_new_evidence_counts() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    let first_life = store(Some(7))?;
    for _ in 0..40 {
        first_life.observe(&ctx(1), false, T0);
    }
    file.save_merged(&first_life.snapshot(T0))?;

    // A day later it starts again under its id without loading the file
    // (nothing in it would count), so it numbers its updates from 1 again,
    // below its forgotten entry on disk: no conflict, the entry is dropped.
    let back = T0 + 24 * HOUR_MS;
    let second_life = store(Some(7))?;
    second_life.observe(&ctx(1), true, back);
    second_life.observe(&ctx(1), true, back);
    file.save_merged(&second_life.snapshot(back))?;

    let saved = file.load()?;
    assert_eq!(saved.len(), 1);
    let entry = &saved.entries()[0];
    assert_eq!((entry.writer(), entry.seq()), (WriterId::new(7), 2));
    let reader = store(Some(1))?;
    reader.merge_at(&saved, back);
    let evidence = reader.evidence(&ctx(1), back);
    assert_eq!((evidence.successes(), evidence.failures()), (2.0, 0.0));
    Ok(())
}

#[test]
fn a_store_without_decay_keeps_every_writer_in_the_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(dir.path().join("evidence.json"))?;
    for life in 0..5 {
        let run = StoreConfig::new().without_decay().build()?;
        run.observe(&ctx(1), true, T0 + life * 24 * HOUR_MS);
        file.save_merged(&run.snapshot(T0 + life * 24 * HOUR_MS))?;
    }
    assert_eq!(file.load()?.len(), 5);
    Ok(())
}
