//! `bayesretry audit verify` given a store snapshot in place of an audit log
//! says that is what it was given and which command reads it, rather than
//! "line 1 has no newline", which reads as a log a crash cut short; among
//! several files (a rotated log) too, naming the snapshot.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use std::path::{Path, PathBuf};

use bayesretry_audit::{Event, Fsync, JsonlWriter, Record};
use bayesretry_store::{Context, ErrorClass, PosteriorStore, StoreConfig};
use common::{arg, bayesretry, scratch};

/// A snapshot of one context's evidence, as a store writes it.
fn snapshot_json() -> String {
    let store = StoreConfig::new().build().unwrap();
    let limited = Context::new("llm.example.com", 1, ErrorClass::Http(429));
    for t in 0..4 {
        store.observe(&limited, t % 2 == 0, 1_000 + t);
    }
    store.snapshot(5_000).to_json()
}

#[test]
fn a_snapshot_is_named_as_one_with_the_command_that_reads_it() {
    let path = scratch("audit-verify-a-snapshot.json");
    std::fs::write(&path, snapshot_json()).unwrap();
    let shown = path.display().to_string();

    let run = bayesretry(&["audit", "verify", arg(&path)], b"");

    run.fails_with(
        65,
        &[
            &format!("{shown}: not an audit log"),
            "a store snapshot",
            &format!("bayesretry inspect {shown}"),
        ],
    );
    assert!(!run.stderr.contains("no newline"), "{run:#?}");
}

#[test]
fn a_snapshot_ending_in_a_newline_or_on_standard_input_is_named_too() {
    let json = snapshot_json();
    for input in [json.clone(), json + "\n"] {
        let run = bayesretry(&["audit", "verify", "-"], input.as_bytes());
        run.fails_with(65, &["<stdin>: not an audit log", "bayesretry inspect -"]);
        assert!(!run.stderr.contains("unknown field"), "{run:#?}");
    }
}

#[test]
fn other_json_that_is_no_entry_is_reported_as_before() {
    let run = bayesretry(&["audit", "verify", "-"], b"{\"a\":1}\n");

    run.fails_with(65, &["<stdin>: line 1 is not an audit entry"]);
    assert!(!run.stderr.contains("snapshot"), "{run:#?}");
}

/// An audit log of two outcomes at `name` in `dir`.
fn audit_log(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let mut writer = JsonlWriter::open(&path, Fsync::Never).unwrap();
    for i in 0..2 {
        let event = Event::Outcome {
            endpoint: String::from("api.example.com"),
            attempt: 1,
            error_class: String::from("http-503"),
            success: i == 0,
        };
        writer.append(&Record::new(100 + i, event)).unwrap();
    }
    writer.sync().unwrap();
    path
}

#[test]
fn a_snapshot_among_several_files_is_named_as_one_with_the_command_that_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = audit_log(dir.path(), "decisions.jsonl.1");
    let snapshot = dir.path().join("store.json");
    // as a store saves it, and as `to_json` writes it
    for json in [snapshot_json() + "\n", snapshot_json()] {
        std::fs::write(&snapshot, json).unwrap();
        let shown = snapshot.display().to_string();
        for files in [[&log, &snapshot], [&snapshot, &log]] {
            let run = bayesretry(&["audit", "verify", arg(files[0]), arg(files[1])], b"");

            run.fails_with(
                65,
                &[
                    &format!("error: {shown}: not an audit log"),
                    "a store snapshot",
                    &format!("bayesretry inspect {shown}"),
                ],
            );
            assert!(!run.stderr.contains(&log.display().to_string()), "{run:#?}");
            assert!(!run.stderr.contains("no newline"), "{run:#?}");
            assert!(!run.stderr.contains("unknown field"), "{run:#?}");
        }
    }
}

#[test]
fn a_bad_line_in_a_rotated_file_that_is_no_snapshot_is_reported_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let log = audit_log(dir.path(), "decisions.jsonl.1");
    let other = dir.path().join("decisions.jsonl");
    std::fs::write(&other, "{\"a\":1}\n").unwrap();

    let run = bayesretry(&["audit", "verify", arg(&log), arg(&other)], b"");

    run.fails_with(
        65,
        &[&other.display().to_string(), "line 1 is not an audit entry"],
    );
    assert!(!run.stderr.contains("snapshot"), "{run:#?}");
}
