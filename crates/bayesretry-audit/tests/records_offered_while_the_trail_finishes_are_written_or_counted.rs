//! Observers on other threads may go on offering records while an
//! `AuditTrail` finishes (`finish`, or the trail dropped). Each such record is
//! written or counted as dropped — none is queued after the writer's last look
//! at its queue and lost unseen — and the log's last `dropped` entry comes
//! after the last record the writer took.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

extern crate alloc;

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use core::time::Duration;
use std::fs;
use std::thread::{self, JoinHandle};

use bayesretry_audit::{
    AuditLog, AuditObserver, AuditTrail, Entry, Event, Fsync, JsonlWriter, Verifier,
};
use bayesretry_decision::{Decision, Reason};
use bayesretry_policy::Observer;
use bayesretry_store::{Context, ErrorClass};

/// A thread offering decisions as fast as it can until `stop`; counts them in
/// `offered`.
fn feeder(
    observer: &AuditObserver,
    stop: &Arc<AtomicBool>,
    offered: &Arc<AtomicU64>,
) -> JoinHandle<()> {
    let (observer, stop, offered) = (observer.clone(), Arc::clone(stop), Arc::clone(offered));
    thread::spawn(move || {
        let ctx = Context::new("svc", 1, ErrorClass::Http(503));
        let decision = Decision::stop(Reason::MaxAttempts);
        while !stop.load(Ordering::SeqCst) {
            observer.on_decision(&decision, &ctx);
            offered.fetch_add(1, Ordering::SeqCst);
        }
    })
}

/// The decisions a log holds, and the records its `dropped` entries count.
fn decisions_and_logged_drops<'a>(entries: impl IntoIterator<Item = &'a Entry>) -> (u64, u64) {
    let (mut decisions, mut dropped) = (0, 0);
    for entry in entries {
        match entry.record().event() {
            Event::Decision { .. } => decisions += 1,
            Event::Dropped { count } => dropped += count,
            other => panic!("unexpected {other:?}"),
        }
    }
    (decisions, dropped)
}

#[test]
fn every_record_offered_while_the_trail_finishes_is_written_or_counted() {
    for round in 0..50 {
        let trail = AuditTrail::spawn(AuditLog::new()).unwrap();
        let observer = trail.observer();
        let stop = Arc::new(AtomicBool::new(false));
        let offered = Arc::new(AtomicU64::new(0));
        let feeding = feeder(&observer, &stop, &offered);
        thread::sleep(Duration::from_millis(3));
        let dropped_before = observer.dropped();
        let log = trail.finish().unwrap();
        let dropped_at_finish = observer.dropped();
        // the feeder goes on for a while after the writer has gone
        thread::sleep(Duration::from_millis(1));
        stop.store(true, Ordering::SeqCst);
        feeding.join().unwrap();

        assert_eq!(log.verify(), Ok(()));
        let (written, logged_drops) = decisions_and_logged_drops(log.entries());
        let offered = offered.load(Ordering::SeqCst);
        let dropped = observer.dropped();
        assert_eq!(
            written + dropped,
            offered,
            "round {round}: {} records offered were neither written nor counted as dropped",
            offered.saturating_sub(written + dropped)
        );
        // the last `dropped` entry counts at least what was dropped before
        // the trail began to finish, and nothing that was not dropped
        assert!(
            (dropped_before..=dropped_at_finish).contains(&logged_drops),
            "round {round}: the log counts {logged_drops} drops; {dropped_before} before finish, \
             {dropped_at_finish} when it returned"
        );
    }
}

#[test]
fn every_record_offered_while_a_dropped_trail_stops_is_written_or_counted() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..20 {
        let path = dir.path().join(format!("audit-{round}.jsonl"));
        let trail = AuditTrail::spawn(JsonlWriter::open(&path, Fsync::Never).unwrap()).unwrap();
        let observer = trail.observer();
        let stop = Arc::new(AtomicBool::new(false));
        let offered = Arc::new(AtomicU64::new(0));
        let feeding = feeder(&observer, &stop, &offered);
        thread::sleep(Duration::from_millis(3));
        drop(trail);
        thread::sleep(Duration::from_millis(1));
        stop.store(true, Ordering::SeqCst);
        feeding.join().unwrap();

        let seal = Verifier::new().verify_file(&path).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        let written = text.matches(r#""event":"decision""#).count() as u64;
        let drop_entries = text.matches(r#""event":"dropped""#).count() as u64;
        assert_eq!(seal.entries(), written + drop_entries);
        let offered = offered.load(Ordering::SeqCst);
        assert_eq!(
            written + observer.dropped(),
            offered,
            "round {round}: {} records offered were neither written nor counted as dropped",
            offered.saturating_sub(written + observer.dropped())
        );
    }
}
