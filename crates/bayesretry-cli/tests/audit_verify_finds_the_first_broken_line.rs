//! `bayesretry audit verify`: a log written by bayesretry-audit verifies and
//! prints its seal; every kind of tampering is found at its line, exit 65.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed step must fail the test"
)]

mod common;

use std::path::{Path, PathBuf};

use bayesretry_audit::{Event, Fsync, JsonlWriter, Record};
use common::{arg, bayesretry, scratch};

/// A log of `n` entries written to the scratch file `name`, and its seal.
fn written_log(name: &str, n: u64) -> (PathBuf, String) {
    let path = scratch(name);
    let mut writer = JsonlWriter::open(&path, Fsync::Never).unwrap();
    for i in 0..n {
        let event = if i % 2 == 0 {
            Event::Outcome {
                endpoint: String::from("api.example.com"),
                attempt: 1,
                error_class: String::from("http-503"),
                success: i % 4 == 0,
            }
        } else {
            Event::Dropped { count: i }
        };
        writer.append(&Record::new(1_000 + i, event)).unwrap();
    }
    writer.flush().unwrap();
    let seal = writer.seal().to_string();
    (path, seal)
}

/// A log of `events`, each at time 7, written to the scratch file `name`.
fn log_of(name: &str, events: impl IntoIterator<Item = Event>) -> PathBuf {
    let path = scratch(name);
    let mut writer = JsonlWriter::open(&path, Fsync::Never).unwrap();
    for event in events {
        writer.append(&Record::new(7, event)).unwrap();
    }
    writer.flush().unwrap();
    path
}

/// `audit verify` of the log at `path`, which must pass.
fn verified(path: &Path) -> common::Run {
    let run = bayesretry(&["audit", "verify", arg(path)], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    run
}

fn lines(path: &PathBuf) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn rewrite(path: &PathBuf, lines: &[String]) {
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_written_log_is_valid_and_its_seal_is_printed() {
    let (path, seal) = written_log("audit-valid.jsonl", 6);
    let run = bayesretry(&["audit", "verify", arg(&path)], b"");
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        run.stdout
            .contains("valid: 6 entries (0 decisions, 3 outcomes), every hash chains\n"),
        "{}",
        run.stdout
    );
    // the three `dropped` entries, counts 1, 3 and 5: valid, but not whole
    assert!(
        run.stdout.contains(
            "incomplete: at least 9 record(s) lost before reaching the log, as its 3 \
             `dropped` entries record\n"
        ),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!("seal: {seal}\n")),
        "{}",
        run.stdout
    );

    let again = bayesretry(&["audit", "verify", arg(&path), "--seal", &seal], b"");
    assert_eq!(again.code, 0, "{again:#?}");
    assert!(
        again.stdout.contains("holds the 6 entries of the seal"),
        "{}",
        again.stdout
    );

    let piped = bayesretry(&["audit", "verify", "-"], &std::fs::read(&path).unwrap());
    assert_eq!(piped.code, 0, "{piped:#?}");
    assert!(piped.stdout.starts_with("<stdin>: valid: 6 entries"));
}

#[test]
fn a_log_that_lost_nothing_says_nothing_of_losses() {
    let outcomes = (1..=2).map(|attempt| Event::Outcome {
        endpoint: String::from("api.example.com"),
        attempt,
        error_class: String::from("timeout"),
        success: true,
    });
    let run = verified(&log_of("audit-whole.jsonl", outcomes));
    assert!(
        run.stdout
            .contains("valid: 2 entries (0 decisions, 2 outcomes)"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("incomplete"), "{}", run.stdout);
}

#[test]
fn the_losses_are_a_lower_bound_and_a_count_of_zero_is_none() {
    // a `dropped` entry of count 0 records no loss
    let run = verified(&log_of(
        "audit-zero-lost.jsonl",
        [Event::Dropped { count: 0 }],
    ));
    assert!(!run.stdout.contains("incomplete"), "{}", run.stdout);

    // a log reopened after a crash cut its last line records one lost record,
    // however many the crash took: the count is a lower bound, and says so
    let path = log_of("audit-after-crash.jsonl", [Event::Dropped { count: 0 }]);
    let mut torn = std::fs::read(&path).unwrap();
    torn.extend_from_slice(b"{\"v\":1,\"seq\":1,");
    std::fs::write(&path, torn).unwrap();
    drop(JsonlWriter::open_after_crash(&path, Fsync::Never).unwrap());
    let run = verified(&path);
    assert!(
        run.stdout.contains(
            "incomplete: at least 1 record(s) lost before reaching the log, as its 2 \
             `dropped` entries record\n"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn an_edited_entry_is_found_at_its_line() {
    let (path, _) = written_log("audit-edited.jsonl", 6);
    let mut all = lines(&path);
    all[2] = all[2].replace("\"success\":false", "\"success\":true");
    assert_ne!(all[2], lines(&path)[2], "the edit must change the line");
    rewrite(&path, &all);
    bayesretry(&["audit", "verify", arg(&path)], b"")
        .fails_with(65, &["audit-edited.jsonl: line 3:", "hash"]);
}

#[test]
fn a_deleted_entry_breaks_the_sequence_at_its_line() {
    let (path, _) = written_log("audit-deleted.jsonl", 6);
    let mut all = lines(&path);
    all.remove(3);
    rewrite(&path, &all);
    bayesretry(&["audit", "verify", arg(&path)], b"")
        .fails_with(65, &["line 4:", "sequence number 4 where 3 was due"]);
}

#[test]
fn entries_cut_from_the_end_are_found_only_with_the_seal() {
    let (path, seal) = written_log("audit-cut.jsonl", 6);
    let mut all = lines(&path);
    all.truncate(4);
    rewrite(&path, &all);
    let unsealed = bayesretry(&["audit", "verify", arg(&path)], b"");
    assert_eq!(
        unsealed.code, 0,
        "the chain alone cannot see a cut: {unsealed:#?}"
    );
    bayesretry(&["audit", "verify", arg(&path), "--seal", &seal], b"")
        .fails_with(65, &["line 5:", "4 entries but the seal commits to 6"]);
}

#[test]
fn a_half_written_last_line_and_garbage_are_data_errors() {
    let (path, _) = written_log("audit-torn.jsonl", 3);
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, &text[..text.len() - 10]).unwrap();
    bayesretry(&["audit", "verify", arg(&path)], b"").fails_with(65, &["line 3", "no newline"]);

    bayesretry(&["audit", "verify", "-"], b"{\"v\":1,\"seq\":0}\n")
        .fails_with(65, &["<stdin>: line 1 is not an audit entry"]);
}

#[test]
fn a_blank_line_after_the_last_entry_is_named_as_empty() {
    let (path, _) = written_log("audit-blank.jsonl", 4);
    let mut text = std::fs::read(&path).unwrap();
    text.push(b'\n');
    std::fs::write(&path, text).unwrap();
    bayesretry(&["audit", "verify", arg(&path)], b"").fails_with(
        65,
        &[
            "audit-blank.jsonl: line 5 is not an audit entry: it is empty (a blank line \
           after the last entry), and a log has no blank lines\n",
        ],
    );
}

#[test]
fn a_missing_log_or_a_bad_seal_has_its_own_status() {
    bayesretry(&["audit", "verify", "no/such/log.jsonl"], b"")
        .fails_with(66, &["no/such/log.jsonl", "no such file"]);
    bayesretry(&["audit", "verify", "x.jsonl", "--seal", "12:abc"], b"")
        .is_refused_with(&["--seal", "12:abc"]);
    let run = bayesretry(&["audit"], b"");
    assert_eq!(run.code, 64, "{run:#?}");
}
