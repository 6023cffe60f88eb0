//! A first attempt is on the policy's hot path: the policy reads its clock
//! once and hands the time to the budget's `deposit`. A ratio budget telling
//! the window a first attempt belongs to takes that time (on the fleet's
//! clock, which is the policy's) rather than reading a clock of its own
//! again, which would cost every first attempt a second clock read.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

extern crate alloc;

use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;

use bayesretry_budget::Budget;
use bayesretry_policy::{Clock, ManualClock};
use bayesretry_redis::{Fleet, FleetBudgetConfig, FleetConfig};

/// A clock that counts its readings.
struct Counting {
    time: ManualClock,
    reads: Arc<AtomicU64>,
}

impl Clock for Counting {
    fn now_ms(&self) -> u64 {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.time.now_ms()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_attempt_reads_no_clock_beyond_the_policy_s() {
    let time = ManualClock::new(1_000_000);
    let reads = Arc::new(AtomicU64::new(0));
    // Nothing listens on port 1: no round reaches Redis, and none reads the
    // clock for a lease.
    let config = FleetConfig::new("redis://127.0.0.1:1/0")
        .with_connect_timeout(Duration::from_millis(50))
        .with_clock(Counting {
            time: time.clone(),
            reads: reads.clone(),
        });
    let fleet = Fleet::without_evidence(config).unwrap();
    let budget = fleet
        .budget(FleetBudgetConfig::ratio(
            "ratio",
            0.1,
            10,
            Duration::from_secs(60),
        ))
        .unwrap();

    let before = reads.load(Ordering::Relaxed);
    for _ in 0..1_000 {
        budget.deposit(time.now_ms());
    }
    let read = reads.load(Ordering::Relaxed) - before;
    assert!(read < 10, "{read} clock reads for 1 000 first attempts");
    drop(fleet);
}
