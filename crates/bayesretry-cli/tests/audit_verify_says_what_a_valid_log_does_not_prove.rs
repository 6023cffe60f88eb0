//! `bayesretry audit verify` of a valid log says what the chain proves and
//! what it does not: without a seal kept elsewhere, entries cut from the end,
//! or a tail rewritten with every hash recomputed, verify as well as the log
//! that was written. A reader of the verdict must not take "valid" for
//! "whole": the output says which entries nothing anchors, and how to anchor
//! them next time.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use std::path::PathBuf;

use bayesretry_audit::{Event, Fsync, JsonlWriter, Record};
use common::{arg, bayesretry, scratch};

/// A log of `n` outcomes written to the scratch file `name`, and the seal of
/// its first `sealed` entries.
fn written_log(name: &str, n: u64, sealed: u64) -> (PathBuf, String) {
    let path = scratch(name);
    let mut writer = JsonlWriter::open(&path, Fsync::Never).unwrap();
    let mut seal = writer.seal().to_string();
    for i in 0..n {
        if i == sealed {
            writer.flush().unwrap();
            seal = writer.seal().to_string();
        }
        let event = Event::Outcome {
            endpoint: String::from("api.example.com"),
            attempt: 1,
            error_class: String::from("http-503"),
            success: i % 2 == 0,
        };
        writer.append(&Record::new(1_000 + i, event)).unwrap();
    }
    writer.flush().unwrap();
    if sealed >= n {
        seal = writer.seal().to_string();
    }
    (path, seal)
}

#[test]
fn a_log_verified_without_a_seal_says_a_cut_or_rewritten_tail_would_pass() {
    let (path, _) = written_log("audit-unanchored.jsonl", 4, 4);
    let run = bayesretry(&["audit", "verify", arg(&path)], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout.contains(
            "unanchored: all 4 entries: the chain cannot show entries cut from the end, or \
             rewritten from some point on with their hashes recomputed; keep the seal \
             elsewhere and pass it with --seal\n"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn a_log_that_holds_just_its_seal_has_nothing_unanchored() {
    let (path, seal) = written_log("audit-anchored.jsonl", 4, 4);
    let run = bayesretry(&["audit", "verify", arg(&path), "--seal", &seal], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(!run.stdout.contains("unanchored"), "{}", run.stdout);
}

#[test]
fn entries_after_the_seal_are_named_as_vouched_for_by_the_chain_alone() {
    let (path, seal) = written_log("audit-grown.jsonl", 5, 3);
    assert!(seal.starts_with("3:"), "{seal}");
    let run = bayesretry(&["audit", "verify", arg(&path), "--seal", &seal], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout
            .contains("and holds the 3 entries of the seal given"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "unanchored: the 2 entries after the seal's 3: the chain cannot show entries cut \
             from the end, or rewritten from some point on with their hashes recomputed; \
             keep the seal elsewhere and pass it with --seal\n"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn an_empty_log_without_a_seal_still_says_a_cut_would_pass() {
    // a log cut to nothing verifies too: only a seal shows what it held
    let path = scratch("audit-empty.jsonl");
    std::fs::write(&path, b"").unwrap();
    let run = bayesretry(&["audit", "verify", arg(&path)], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stdout.contains("valid: 0 entries"), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("unanchored: the chain cannot show entries cut from the end"),
        "{}",
        run.stdout
    );

    // its own seal, of no entries, anchors all of them
    let seal = run
        .stdout
        .lines()
        .find_map(|line| line.strip_prefix("seal: "))
        .unwrap();
    let sealed = bayesretry(&["audit", "verify", arg(&path), "--seal", seal], b"");
    assert_eq!(sealed.code, 0, "{sealed:#?}");
    assert!(!sealed.stdout.contains("unanchored"), "{}", sealed.stdout);
}

#[test]
fn the_seal_stays_the_last_line_a_script_reads() {
    let (path, seal) = written_log("audit-last-line.jsonl", 3, 3);
    let run = bayesretry(&["audit", "verify", arg(&path)], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(
        run.stdout.lines().last(),
        Some(format!("seal: {seal}").as_str()),
        "{}",
        run.stdout
    );
}
