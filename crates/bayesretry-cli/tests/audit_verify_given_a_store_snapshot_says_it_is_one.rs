//! `bayesretry audit verify` given a store snapshot in place of an audit log
//! says that is what it was given and which command reads it, rather than
//! "line 1 has no newline", which reads as a log a crash cut short.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

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
