//! Two version 0 files, of two processes, migrated apart and merged, add
//! their evidence as two live stores' snapshots do: each file's contexts
//! migrate to a writer named after the file's content, so the merge keeps
//! both files' entries instead of one. The same file migrated twice still
//! counts once.

use std::fs;

use bayesretry_fs::{FileStore, parse_snapshot};
use bayesretry_store::{Context, ErrorClass, MemoryStore, Snapshot};

type TestResult = Result<(), Box<dyn core::error::Error>>;

/// A version 0 file of one context, `api` attempt 1 timing out, with this
/// evidence, saved at `saved_at`.
fn v0(successes: f64, failures: f64, saved_at: u64) -> String {
    format!(
        r#"{{"version":0,"saved_at_ms":{saved_at},"contexts":[{{"endpoint":"api","attempt":1,"class":"timeout","successes":{successes:?},"failures":{failures:?},"updated_at_ms":900}}]}}"#
    )
}

/// The evidence `snapshot` holds for that context.
fn evidence(snapshot: &Snapshot) -> (f64, f64) {
    let store = MemoryStore::new();
    store.load(snapshot);
    let evidence = store.evidence(&Context::new("api", 1, ErrorClass::Timeout), 1_000);
    (evidence.successes(), evidence.failures())
}

#[test]
fn two_different_version_0_files_merged_hold_the_sum_of_their_evidence() -> TestResult {
    let a = parse_snapshot("a.json", v0(10.0, 1.0, 1_000).as_bytes())?;
    let b = parse_snapshot("b.json", v0(3.0, 4.0, 1_000).as_bytes())?;
    assert_ne!(a.entries()[0].writer(), b.entries()[0].writer());
    assert_eq!(evidence(&a.clone().merged(&b)), (13.0, 5.0));
    assert_eq!(evidence(&b.merged(&a)), (13.0, 5.0));
    Ok(())
}

#[test]
fn a_version_0_file_merged_into_another_on_disk_keeps_both() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("evidence.json");
    let other = dir.path().join("other.json");
    fs::write(&path, v0(10.0, 1.0, 1_000))?;
    fs::write(&other, v0(3.0, 4.0, 2_000))?;
    let file = FileStore::open(&path)?;
    let merged = file.save_merged(&FileStore::open(&other)?.load()?)?;
    assert_eq!(evidence(merged.snapshot()), (13.0, 5.0));
    assert_eq!(evidence(&file.load()?), (13.0, 5.0));
    Ok(())
}

#[test]
fn one_version_0_file_migrated_twice_and_merged_counts_once() -> TestResult {
    let text = v0(10.0, 1.0, 1_000);
    let first = parse_snapshot("a.json", text.as_bytes())?;
    let again = parse_snapshot("copy-of-a.json", text.as_bytes())?;
    assert_eq!(evidence(&first.merged(&again)), (10.0, 1.0));
    Ok(())
}

#[test]
fn a_current_format_snapshot_keeps_its_writers() -> TestResult {
    let text = r#"{"version":1,"taken_at_ms":5,"entries":[{"endpoint":"api","attempt":1,"class":"timeout","writer":18446744073709551615,"seq":1,"successes":2.0,"failures":0.0,"updated_at_ms":4},{"endpoint":"api","attempt":1,"class":"timeout","writer":7,"seq":3,"successes":1.0,"failures":1.0,"updated_at_ms":4}]}"#;
    let snapshot = parse_snapshot("now.json", text.as_bytes())?;
    let writers: Vec<u64> = snapshot
        .entries()
        .iter()
        .map(|e| e.writer().get())
        .collect();
    assert_eq!(writers, [7, u64::MAX]);
    assert_eq!(evidence(&snapshot), (3.0, 1.0));
    Ok(())
}
