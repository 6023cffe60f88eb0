//! A file in format version 0 — the single-writer layout, kept in
//! `tests/fixtures/v0.json` as written by hand from the spec — loads as the
//! current format, says it was migrated, and is written back in the current
//! format by the next save.

use std::fs;
use std::path::PathBuf;

use bayesretry_fs::{Error, FileStore, Source};
use bayesretry_store::{
    Context, ErrorClass, MemoryStore, PosteriorStore, Snapshot, StoreConfig, WriterId,
};

type TestResult = Result<(), Box<dyn core::error::Error>>;

/// An entry's endpoint, attempt, class, writer, sequence number, successes,
/// failures and last update.
type Row<'a> = (&'a str, u32, &'a str, WriterId, u64, f64, f64, u64);

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v0.json")
}

fn copy_of_fixture(dir: &tempfile::TempDir) -> Result<PathBuf, Box<dyn core::error::Error>> {
    let path = dir.path().join("evidence.json");
    fs::copy(fixture(), &path)?;
    Ok(path)
}

/// The writer the fixture's evidence migrates to: the first 8 bytes of the
/// SHA-256 of the file (`sha256sum tests/fixtures/v0.json` begins
/// `a7bd7a92e684364b`), as the spec's section 10.5 says.
fn fixture_writer() -> WriterId {
    WriterId::new(0xa7bd_7a92_e684_364b)
}

#[test]
fn version_0_contexts_load_as_entries_of_the_writer_named_after_the_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(copy_of_fixture(&dir)?)?;
    let snapshot = file.load()?;
    assert_eq!(snapshot.version(), Snapshot::VERSION);
    assert_eq!(snapshot.taken_at_ms(), 86_400_000);
    let seen: Vec<Row<'_>> = snapshot
        .entries()
        .iter()
        .map(|e| {
            (
                e.endpoint(),
                e.attempt(),
                e.class(),
                e.writer(),
                e.seq(),
                e.evidence().successes(),
                e.evidence().failures(),
                e.updated_at_ms(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "api.example.com",
                1,
                "http-429",
                fixture_writer(),
                1,
                18.0,
                2.0,
                86_300_000
            ),
            (
                "api.example.com",
                2,
                "timeout",
                fixture_writer(),
                1,
                0.5,
                3.25,
                86_350_000
            ),
            (
                "billing",
                1,
                "custom:quota",
                fixture_writer(),
                1,
                1.0,
                0.0,
                80_000_000
            ),
        ]
    );
    Ok(())
}

#[test]
fn the_recovery_report_says_which_version_was_migrated() -> TestResult {
    let dir = tempfile::tempdir()?;
    let file = FileStore::open(copy_of_fixture(&dir)?)?;
    let recovery = file.load_or_recover()?;
    assert_eq!(recovery.source(), Source::Primary);
    assert_eq!(recovery.origin().migrated_from(), Some(0));
    assert!(
        recovery
            .to_string()
            .contains("migrated from format version 0")
    );
    Ok(())
}

#[test]
fn a_migrated_file_merges_with_a_live_store_and_is_saved_in_the_current_format() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = copy_of_fixture(&dir)?;
    let file = FileStore::open(&path)?;

    // A new process, writer 5, starts from the old file and adds one outcome.
    let store = StoreConfig::new().with_writer(WriterId::new(5)).build()?;
    store.load(&file.load()?);
    let ctx = Context::new("api.example.com", 1, ErrorClass::Http(429));
    store.observe(&ctx, true, 86_500_000);
    let merged = file.save_merged(&store.snapshot(86_500_000))?;
    assert_eq!(merged.origin().migrated_from(), Some(0));

    // The file is now version 1, the old evidence is still there once, and the
    // version 0 file is the backup.
    let text = fs::read_to_string(&path)?;
    assert!(text.starts_with("{\"version\":1,"), "{text}");
    let restarted = MemoryStore::new();
    restarted.load(&file.load()?);
    let evidence = restarted.evidence(&ctx, 86_500_000);
    assert_eq!((evidence.successes(), evidence.failures()), (19.0, 2.0));
    assert_eq!(fs::read(file.backup_path()?)?, fs::read(fixture())?);
    Ok(())
}

#[test]
fn a_store_of_writer_0_merging_into_a_version_0_file_keeps_the_migrated_evidence() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    fs::write(
        &path,
        r#"{"version":0,"saved_at_ms":1000,"contexts":[{"endpoint":"api","attempt":1,"class":"timeout","successes":10.0,"failures":0.0,"updated_at_ms":900}]}"#,
    )?;
    let file = FileStore::open(&path)?;

    // Writer 0, as a pod ordinal gives it, saves one failure without loading
    // the file first: its entry sits beside the migrated one, not over it.
    let store = StoreConfig::new().with_writer(WriterId::new(0)).build()?;
    let ctx = Context::new("api", 1, ErrorClass::Timeout);
    store.observe(&ctx, false, 2000);
    let merged = file.save_merged(&store.snapshot(2000))?;
    assert_eq!(merged.snapshot().len(), 2, "{merged}");

    let restarted = MemoryStore::new();
    restarted.load(&file.load()?);
    let evidence = restarted.evidence(&ctx, 2000);
    assert_eq!((evidence.successes(), evidence.failures()), (10.0, 1.0));

    // Loading the migrated file first and saving again counts each once.
    store.load(&file.load()?);
    store.observe(&ctx, false, 3000);
    file.save_merged(&store.snapshot(3000))?;
    restarted.load(&file.load()?);
    let evidence = restarted.evidence(&ctx, 3000);
    assert_eq!((evidence.successes(), evidence.failures()), (10.0, 2.0));
    Ok(())
}

#[test]
fn a_version_0_file_of_the_wrong_shape_is_a_schema_error() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    for (json, needle) in [
        (r#"{"version":0,"contexts":[]}"#, "saved_at_ms"),
        (
            r#"{"version":0,"saved_at_ms":1,"contexts":{}}"#,
            "`contexts` must be an array",
        ),
        (
            r#"{"version":0,"saved_at_ms":1,"contexts":[{"endpoint":"a","attempt":1,"class":"timeout","successes":-2.0,"failures":0.0,"updated_at_ms":0}]}"#,
            "after migration from version 0",
        ),
    ] {
        fs::write(&path, json)?;
        match FileStore::open(&path)?.load() {
            Err(Error::Schema { why, .. }) => assert!(why.contains(needle), "{json}: {why}"),
            other => return Err(format!("{json}: {other:?}").into()),
        }
    }
    Ok(())
}
