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
type Row<'a> = (&'a str, u32, &'a str, u64, u64, f64, f64, u64);

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v0.json")
}

fn copy_of_fixture(dir: &tempfile::TempDir) -> Result<PathBuf, Box<dyn core::error::Error>> {
    let path = dir.path().join("evidence.json");
    fs::copy(fixture(), &path)?;
    Ok(path)
}

#[test]
fn version_0_contexts_load_as_entries_of_writer_0() -> TestResult {
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
                e.writer().get(),
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
                0,
                1,
                18.0,
                2.0,
                86_300_000
            ),
            ("api.example.com", 2, "timeout", 0, 1, 0.5, 3.25, 86_350_000),
            ("billing", 1, "custom:quota", 0, 1, 1.0, 0.0, 80_000_000),
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
    assert_eq!(fs::read(file.backup_path())?, fs::read(fixture())?);
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
