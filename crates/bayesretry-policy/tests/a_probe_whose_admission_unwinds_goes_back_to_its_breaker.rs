//! A half-open breaker's probe handed to an attempt that is then never made
//! because a later step of its admission unwinds — the shared breaker's
//! `admit` or `held_until` (`Builder::with_shared_breaker`) panicking — goes back to the
//! breaker that gave it, as a probe does whose operation or classifier
//! unwinds. Kept by the call that unwound, the slot was lost until the
//! breaker gave the probe round up, a cooldown later, and every call was
//! refused meanwhile. Both loops; virtual time.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::future::ready;
use core::panic::AssertUnwindSafe;
use core::sync::atomic::{AtomicBool, Ordering};
use std::panic::catch_unwind;

use bayesretry_breaker::{Admission, Config, FleetView, ProbeRound, State, Transition};
use bayesretry_policy::{HttpStatus, RetryPolicy, VirtualSleeper};
use common::block_on;

/// A shared breaker that admits everything, or panics when asked to: in
/// `admit`, or in `held_until`.
#[derive(Default)]
struct Failing {
    panics: AtomicBool,
    hold_panics: AtomicBool,
}

impl FleetView for Failing {
    fn admit(&self, _: &str, _: u64) -> Admission {
        assert!(
            !self.panics.load(Ordering::SeqCst),
            "the shared breaker failed"
        );
        Admission::Allowed
    }
    fn held_until(&self, _: &str, _: u64) -> Option<u64> {
        assert!(
            !self.hold_panics.load(Ordering::SeqCst),
            "the shared breaker failed to read its holds"
        );
        None
    }
    fn record(&self, _: &str, _: u64, _: bool, _: Option<ProbeRound>) {}
    fn publish(&self, _: &str, _: u64, _: Transition) {}
    fn release_probe(&self, _: &str, _: ProbeRound) {}
}

/// A policy of one attempt per call whose own breaker lets one probe through
/// after its cooldown, with `shared` as its shared breaker: its breaker for
/// "api" opened on failures, and the clock at the cooldown's end, so that
/// the next attempt is the breaker's one probe.
fn half_open(shared: &Arc<Failing>) -> RetryPolicy {
    let sleeper = VirtualSleeper::new(bayesretry_policy::ManualClock::new(0));
    let rules = Config::new()
        .with_min_strength(5.0)
        .with_open_below(0.5)
        .with_cooldown_ms(1_000)
        .with_max_probes(1)
        .with_probes_to_close(1);
    let view: Arc<dyn FleetView + Send + Sync> = shared.clone();
    let policy = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_breaker(rules)
        .with_shared_breaker(view)
        .with_max_attempts(1)
        .build()
        .unwrap();
    let until_ms = (0..100)
        .find_map(|_| {
            let _ = policy.run_blocking("api", |_| Err::<(), _>(HttpStatus(503)));
            match policy.breaker_state("api") {
                Some(State::Open { until_ms }) => Some(until_ms),
                _ => None,
            }
        })
        .expect("a dead endpoint opens the breaker");
    sleeper.clock().set(until_ms);
    policy
}

#[test]
fn a_blocking_call_whose_shared_admission_unwinds_gives_its_probe_back() {
    let shared = Arc::new(Failing::default());
    let policy = half_open(&shared);
    shared.panics.store(true, Ordering::SeqCst);
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        policy.run_blocking("api", |_| Ok::<(), HttpStatus>(()))
    }));
    assert!(
        unwound.is_err(),
        "the shared breaker's panic reached the caller"
    );
    shared.panics.store(false, Ordering::SeqCst);

    let mut made = 0;
    let result = policy.run_blocking("api", |_| {
        made += 1;
        Ok::<(), HttpStatus>(())
    });
    assert!(result.is_ok(), "the probe's slot was lost: {result:?}");
    assert_eq!(made, 1);
    assert_eq!(policy.breaker_state("api"), Some(State::Closed));
}

#[test]
fn an_async_call_whose_shared_admission_unwinds_gives_its_probe_back() {
    let shared = Arc::new(Failing::default());
    let policy = half_open(&shared);
    shared.panics.store(true, Ordering::SeqCst);
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        block_on(policy.run("api", |_| ready(Ok::<(), HttpStatus>(()))))
    }));
    assert!(
        unwound.is_err(),
        "the shared breaker's panic reached the caller"
    );
    shared.panics.store(false, Ordering::SeqCst);

    let result = block_on(policy.run("api", |_| ready(Ok::<u32, HttpStatus>(7))));
    assert_eq!(result.ok(), Some(7), "the probe's slot was lost");
    assert_eq!(policy.breaker_state("api"), Some(State::Closed));
}

#[test]
fn a_call_whose_read_of_the_fleet_s_holds_unwinds_gives_its_probe_back() {
    let shared = Arc::new(Failing::default());
    let policy = half_open(&shared);
    shared.hold_panics.store(true, Ordering::SeqCst);
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        policy.run_blocking("api", |_| Ok::<(), HttpStatus>(()))
    }));
    assert!(
        unwound.is_err(),
        "the shared breaker's panic reached the caller"
    );
    shared.hold_panics.store(false, Ordering::SeqCst);

    let result = policy.run_blocking("api", |_| Ok::<(), HttpStatus>(()));
    assert!(result.is_ok(), "the probe's slot was lost: {result:?}");
    assert_eq!(policy.breaker_state("api"), Some(State::Closed));
}
