//! An `AuditTrail`'s observer logs every decision and outcome of a policy with
//! the numbers the policy acted on; when the writer falls behind it drops records
//! instead of blocking the call, counts them, and the log itself says how many
//! were lost.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod common;

use core::num::NonZeroUsize;
use std::sync::mpsc;

use bayesretry_audit::{
    AuditLog, AuditTrail, Error, Event, Fsync, JsonlWriter, Record, Seal, Sink, reason_name,
};
use bayesretry_decision::{Decision, Reason};
use bayesretry_policy::{
    HttpStatus, ManualClock, Observer, RetryError, RetryErrorKind, RetryPolicy, VirtualSleeper,
};
use bayesretry_store::{Context, ErrorClass};
use common::Full;

fn capacity(n: usize) -> NonZeroUsize {
    NonZeroUsize::new(n).unwrap()
}

#[test]
fn every_decision_of_a_call_is_logged_with_the_numbers_it_acted_on() {
    let clock = ManualClock::new(1_764_460_800_000);
    let trail = AuditTrail::spawn_with(AuditLog::new(), capacity(1024), clock.clone()).unwrap();
    let policy = RetryPolicy::builder()
        .with_observer(trail.observer())
        .with_virtual_time(VirtualSleeper::default())
        .with_max_attempts(3)
        .build()
        .unwrap();

    // always a 503: the call ends on a decision to stop, after retries
    let result: Result<(), _> = policy
        .run_blocking("provider", |_| Err(HttpStatus(503)))
        .map_err(RetryError::into_kind);
    let Err(RetryErrorKind::Exhausted {
        attempts, decision, ..
    }) = result
    else {
        panic!("the call gives up: {result:?}");
    };

    let log = trail.finish().unwrap();
    assert_eq!(log.verify(), Ok(()));
    let decisions: Vec<&Record> = log
        .entries()
        .iter()
        .map(|e| e.record())
        .filter(|r| matches!(r.event(), Event::Decision { .. }))
        .collect();
    assert_eq!(
        decisions.len() as u32,
        attempts,
        "one decision per failed attempt"
    );
    for (k, record) in decisions.iter().enumerate() {
        assert_eq!(record.time_ms(), 1_764_460_800_000);
        let Event::Decision {
            endpoint,
            attempt,
            error_class,
            ..
        } = record.event()
        else {
            unreachable!()
        };
        assert_eq!(endpoint, "provider");
        assert_eq!(*attempt as usize, k + 1);
        assert_eq!(error_class, "http-503");
    }
    let Some(Event::Decision {
        retry,
        probability,
        expected_value,
        reason,
        ..
    }) = decisions.last().map(|r| r.event())
    else {
        unreachable!()
    };
    assert_eq!(*retry, decision.retry());
    assert_eq!(probability.to_bits(), decision.probability().to_bits());
    assert_eq!(
        expected_value.to_bits(),
        decision.expected_value().to_bits()
    );
    assert_eq!(reason, reason_name(decision.reason()));
    // the failures after the first were learned as outcomes of the attempts before
    let failures = log
        .entries()
        .iter()
        .filter(|e| matches!(e.record().event(), Event::Outcome { success: false, .. }))
        .count();
    assert!(failures >= 1, "the failed retries are logged as outcomes");
}

/// A sink that holds its first append until the test opens the gate.
struct Gated {
    log: AuditLog,
    gate: Option<mpsc::Receiver<()>>,
}

impl Sink for Gated {
    fn append(&mut self, record: &Record) -> Result<(), Error> {
        if let Some(gate) = self.gate.take() {
            let _ = gate.recv();
        }
        self.log.append(record.clone());
        Ok(())
    }
    fn flush(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn seal(&self) -> Seal {
        self.log.seal()
    }
}

#[test]
fn a_full_queue_drops_and_counts_and_the_log_says_how_many() {
    let (open, gate) = mpsc::channel();
    let sink = Gated {
        log: AuditLog::new(),
        gate: Some(gate),
    };
    let trail = AuditTrail::spawn_with(sink, capacity(4), ManualClock::new(7)).unwrap();
    let observer = trail.observer();
    let ctx = Context::new("provider", 1, ErrorClass::Http(429));
    // the writer is stuck on its first record: at most 1 + 4 get through, and
    // none of these calls waits for it
    for _ in 0..200 {
        observer.on_decision(&Decision::stop(Reason::BudgetExhausted), &ctx);
    }
    let dropped = trail.dropped();
    assert!(dropped >= 195, "dropped {dropped}");
    open.send(()).unwrap();

    let log = trail.finish().unwrap().log;
    assert_eq!(log.verify(), Ok(()));
    let mut decisions = 0;
    let mut lost = 0;
    for entry in log.entries() {
        match entry.record().event() {
            Event::Decision { reason, .. } => {
                assert_eq!(reason, "budget_exhausted");
                decisions += 1;
            }
            Event::Dropped { count } => lost += count,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(lost, dropped, "the log records every drop");
    assert_eq!(decisions + lost, 200, "every record is logged or counted");
}

#[test]
fn records_offered_after_finish_are_counted_as_dropped() {
    let trail = AuditTrail::spawn(AuditLog::new()).unwrap();
    let observer = trail.observer();
    let ctx = Context::new("provider", 2, ErrorClass::Timeout);
    observer.on_observe(&ctx, true);
    let seal = trail.sync().unwrap();
    assert_eq!(seal.entries(), 1);
    assert_eq!(trail.written(), 1);
    let log = trail.finish().unwrap();
    assert!(matches!(
        log.entries()[0].record().event(),
        Event::Outcome {
            success: true,
            attempt: 2,
            ..
        }
    ));
    // the writer is gone: the observer neither blocks nor panics, and counts
    assert_eq!(observer.dropped(), 0);
    observer.on_observe(&ctx, false);
    observer.on_decision(&Decision::stop(Reason::Deadline), &ctx);
    assert_eq!(observer.dropped(), 2);
}

#[test]
fn a_failing_sink_is_counted_and_its_first_error_returned() {
    let trail = AuditTrail::spawn(JsonlWriter::new(Full, Fsync::EveryEntry)).unwrap();
    let observer = trail.observer();
    let ctx = Context::new("provider", 1, ErrorClass::Http(500));
    for _ in 0..3 {
        observer.on_observe(&ctx, false);
    }
    assert!(matches!(trail.sync(), Err(Error::Writer(message)) if message.contains("disk full")));
    assert_eq!(trail.failed(), 3);
    assert_eq!(trail.written(), 0);
    assert!(matches!(trail.finish(), Err(Error::Io { .. })));
}

#[test]
fn endpoint_names_of_every_length_arrive_intact() {
    let names: Vec<String> = [0, 1, 55, 56, 57, 300]
        .iter()
        .map(|&n| "é".repeat(n / 2) + &"a".repeat(n % 2))
        .collect();
    let trail = AuditTrail::spawn(AuditLog::new()).unwrap();
    let observer = trail.observer();
    for name in &names {
        let ctx = Context::new(name, 1, ErrorClass::Custom("quota"));
        observer.on_decision(&Decision::stop(Reason::CircuitOpen), &ctx);
    }
    let log = trail.finish().unwrap();
    let logged: Vec<&str> = log
        .entries()
        .iter()
        .map(|e| match e.record().event() {
            Event::Decision {
                endpoint,
                error_class,
                ..
            } => {
                assert_eq!(error_class, "quota");
                endpoint.as_str()
            }
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(logged, names);
}
