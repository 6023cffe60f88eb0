//! A record whose line would be too long for a log file is refused by the
//! writer without touching the file; the trail counts it as dropped and the log
//! records the loss as a `dropped` entry, so that a log without one still lost
//! nothing. `sync` reports the refusal once; records after it are written and
//! `finish` gives the file back. A write error that may have left a partial line
//! is different: every `sync` and `finish` report it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::num::NonZeroUsize;
use std::io;

use bayesretry_audit::{
    AuditObserver, AuditTrail, Durable, Error, Fsync, JsonlWriter, MAX_LINE_LEN, Verifier,
};
use bayesretry_decision::{Decision, Reason};
use bayesretry_policy::{ManualClock, Observer};
use bayesretry_store::{Context, ErrorClass};

/// An endpoint name too long for a log line (the user's report: 70 000 bytes).
fn huge_name() -> String {
    "e".repeat(70_000)
}

fn trail() -> AuditTrail<JsonlWriter<Vec<u8>>> {
    AuditTrail::spawn_with(
        JsonlWriter::new(Vec::new(), Fsync::Never),
        NonZeroUsize::new(64).unwrap(),
        ManualClock::new(1_764_460_800_000),
    )
    .unwrap()
}

fn decide(observer: &AuditObserver, endpoint: &str) {
    let ctx = Context::new(endpoint, 1, ErrorClass::Http(503));
    observer.on_decision(&Decision::stop(Reason::MaxAttempts), &ctx);
}

/// The file's entries as JSON objects, after checking that it verifies.
fn entries(file: &[u8]) -> Vec<serde_json::Value> {
    let seal = Verifier::new().verify_reader(file).unwrap();
    let entries: Vec<serde_json::Value> = file
        .split_inclusive(|&b| b == b'\n')
        .map(|line| serde_json::from_slice(line).unwrap())
        .collect();
    assert_eq!(seal.entries(), entries.len() as u64);
    entries
}

/// `event` of each entry, with the endpoint of a decision or the count of a
/// `dropped` entry.
fn summary(entries: &[serde_json::Value]) -> Vec<String> {
    entries
        .iter()
        .map(|e| match e["event"].as_str().unwrap() {
            "decision" => format!("decision {}", e["endpoint"].as_str().unwrap()),
            "dropped" => format!("dropped {}", e["count"]),
            other => other.to_owned(),
        })
        .collect()
}

#[test]
fn an_over_long_record_leaves_a_dropped_entry_and_the_log_verifies() {
    let trail = trail();
    let observer = trail.observer();
    decide(&observer, "before");
    decide(&observer, &huge_name());

    let file = trail.finish().unwrap().into_inner().unwrap();
    let entries = entries(&file);
    assert_eq!(summary(&entries), ["decision before", "dropped 1"]);
    assert!(
        file.split(|&b| b == b'\n')
            .all(|line| line.len() <= MAX_LINE_LEN)
    );
}

#[test]
fn records_after_an_over_long_one_are_written_and_finish_gives_the_file_back() {
    let trail = trail();
    let observer = trail.observer();
    decide(&observer, "before");
    decide(&observer, &huge_name());
    decide(&observer, "after");
    decide(&observer, "later");
    let _ = trail.sync();

    // counted once each: the refused record as dropped, nothing as failed;
    // written holds the three decisions and the `dropped` entry
    assert_eq!(
        (trail.written(), trail.dropped(), trail.failed()),
        (4, 1, 0)
    );
    let file = trail.finish().unwrap().into_inner().unwrap();
    assert_eq!(
        summary(&entries(&file)),
        [
            "decision before",
            "dropped 1",
            "decision after",
            "decision later"
        ]
    );
}

#[test]
fn sync_reports_an_over_long_record_once_and_then_succeeds() {
    let trail = trail();
    let observer = trail.observer();
    decide(&observer, &huge_name());

    let first = trail.sync();
    assert!(
        matches!(
            first,
            Err(Error::RecordTooLong { len, limit }) if len > 70_000 && limit == MAX_LINE_LEN
        ),
        "{first:?}"
    );
    // the `dropped` entry is in the log; nothing failed since the last sync
    let seal = trail.sync().unwrap();
    assert_eq!(seal.entries(), 1);

    decide(&observer, "after");
    assert_eq!(trail.sync().unwrap().entries(), 2);
    let file = trail.finish().unwrap().into_inner().unwrap();
    assert_eq!(summary(&entries(&file)), ["dropped 1", "decision after"]);
}

#[test]
fn a_second_refusal_after_a_sync_is_reported_by_the_next_sync() {
    let trail = trail();
    let observer = trail.observer();
    decide(&observer, &huge_name());
    assert!(matches!(trail.sync(), Err(Error::RecordTooLong { .. })));
    assert!(trail.sync().is_ok());
    decide(&observer, &huge_name());
    decide(&observer, &huge_name());
    assert!(matches!(trail.sync(), Err(Error::RecordTooLong { .. })));
    assert!(trail.sync().is_ok());
    assert_eq!(trail.dropped(), 3);

    // each loss is recorded before the next record is appended: right where
    // it happened
    let file = trail.finish().unwrap().into_inner().unwrap();
    assert_eq!(
        summary(&entries(&file)),
        ["dropped 1", "dropped 1", "dropped 1"]
    );
}

/// A destination whose first write fails and the rest succeed: the failed
/// write may have left part of a line behind.
#[derive(Default)]
struct Flaky {
    failed: bool,
    bytes: Vec<u8>,
}

impl io::Write for Flaky {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.failed {
            self.failed = true;
            return Err(io::Error::other("disk full"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Durable for Flaky {
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_write_error_that_may_leave_a_partial_line_is_reported_by_every_sync_and_by_finish() {
    let trail = AuditTrail::spawn_with(
        JsonlWriter::new(Flaky::default(), Fsync::EveryEntry),
        NonZeroUsize::new(64).unwrap(),
        ManualClock::new(0),
    )
    .unwrap();
    let observer = trail.observer();
    decide(&observer, "first");
    for _ in 0..3 {
        let synced = trail.sync();
        assert!(
            matches!(&synced, Err(Error::Writer(message)) if message.contains("disk full")),
            "{synced:?}"
        );
    }
    decide(&observer, "second");
    assert!(trail.sync().is_err());
    // nothing says the file is whole: the records count as failed, not dropped
    assert_eq!((trail.failed(), trail.dropped()), (2, 0));
    assert!(matches!(trail.finish(), Err(Error::Io { .. })));
}
