//! An `AuditTrail` that finishes, or is dropped, makes what it wrote durable
//! (`Sink::sync`: for a file, an fsync), whatever the file's fsync policy: a
//! machine that fails after a clean shutdown does not take the last entries
//! with it. Syncs during the trail's life are the policy's and `sync`'s alone.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

use alloc::sync::Arc;
use core::sync::atomic::{AtomicUsize, Ordering};

use bayesretry_audit::{AuditLog, AuditTrail, Error, Record, Seal, Sink};
use bayesretry_decision::{Decision, Reason};
use bayesretry_policy::Observer;
use bayesretry_store::{Context, ErrorClass};

/// A sink in memory that counts the calls that make it durable.
struct Counted {
    log: AuditLog,
    syncs: Arc<AtomicUsize>,
}

impl Sink for Counted {
    fn append(&mut self, record: &Record) -> Result<(), Error> {
        self.log.append(record.clone());
        Ok(())
    }
    fn flush(&mut self) -> Result<(), Error> {
        Ok(())
    }
    fn sync(&mut self) -> Result<(), Error> {
        self.syncs.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
    fn seal(&self) -> Seal {
        self.log.seal()
    }
}

fn trail() -> (AuditTrail<Counted>, Arc<AtomicUsize>) {
    let syncs = Arc::new(AtomicUsize::new(0));
    let sink = Counted {
        log: AuditLog::new(),
        syncs: Arc::clone(&syncs),
    };
    let trail = AuditTrail::spawn(sink).unwrap();
    let observer = trail.observer();
    let ctx = Context::new("provider", 1, ErrorClass::Http(503));
    for _ in 0..3 {
        observer.on_decision(&Decision::stop(Reason::BudgetExhausted), &ctx);
    }
    (trail, syncs)
}

#[test]
fn finish_syncs_the_sink_once_after_the_last_entry() {
    let (trail, syncs) = trail();
    let sink = trail.finish().unwrap();
    assert_eq!(sink.log.entries().len(), 3);
    assert_eq!(syncs.load(Ordering::SeqCst), 1);
}

#[test]
fn a_dropped_trail_syncs_too() {
    let (trail, syncs) = trail();
    drop(trail);
    assert_eq!(syncs.load(Ordering::SeqCst), 1);
}

#[test]
fn a_sync_on_the_way_is_one_more() {
    let (trail, syncs) = trail();
    let seal = trail.sync().unwrap();
    assert_eq!(seal.entries(), 3);
    assert_eq!(syncs.load(Ordering::SeqCst), 1);
    drop(trail.finish().unwrap());
    assert_eq!(syncs.load(Ordering::SeqCst), 2);
}
