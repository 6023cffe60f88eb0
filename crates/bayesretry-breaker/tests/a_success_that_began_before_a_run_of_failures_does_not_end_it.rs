//! Outcomes arrive in the order attempts end. A shared breaker told when each
//! attempt began (by the count of failures it had seen) does not let a slow
//! attempt that began before a run of failures end that run by succeeding late;
//! nor does a keyed breaker, key by key.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

use core::num::NonZeroUsize;

use bayesretry_breaker::{Admission, Config, FailureCount, KeyedBreaker, SharedBreaker, State};

/// The breaker crate's default breaker, shared.
fn breaker() -> SharedBreaker {
    SharedBreaker::new(Config::new().build().unwrap())
}

#[test]
fn a_success_that_began_a_failure_before_the_run_leaves_the_run_going() {
    let shared = breaker();
    let slow = shared.failures_recorded();
    let _ = shared.record(1, false);
    let _ = shared.record(2, true);
    for t in 3..6 {
        let began = shared.failures_recorded();
        let _ = shared.record_failure_and_read(began, t);
    }
    assert_eq!(shared.run_reading(6).failures, 3);
    let _ = shared.record_success_since(slow, || 6);
    assert_eq!(
        shared.run_reading(6).failures,
        3,
        "the late success is older news"
    );
    // it is evidence all the same: the posterior counts it
    let before = shared.posterior(6);
    let _ = shared.record_success_since(slow, || 6);
    assert!(shared.posterior(6).alpha() > before.alpha());
}

#[test]
fn a_success_that_began_inside_the_run_ends_it() {
    let shared = breaker();
    let _ = shared.record(1, false);
    let _ = shared.record(2, true);
    let _ = shared.record(3, false);
    // begins after the run's first failure, overlaps its second
    let inside = shared.failures_recorded();
    let _ = shared.record(4, false);
    let _ = shared.record_success_since(inside, || 5);
    assert_eq!(shared.run_reading(5).failures, 0);
}

#[test]
fn attempts_begun_with_no_failure_between_them_end_runs_as_they_end() {
    // a burst sent together: the count cannot order them, so a success that
    // ends after a failing peer ends the peer's run, as ordering by end does
    let shared = breaker();
    let together = shared.failures_recorded();
    let _ = shared.record_failure_and_read(together, 1);
    let _ = shared.record_failure_and_read(together, 1);
    let _ = shared.record_success_since(together, || 2);
    assert_eq!(shared.run_reading(2).failures, 0);
}

/// A slow attempt begins; a failure and a success; then an outage opens the
/// breaker. The breaker, the slow attempt's count, and the time after the
/// outage's last failure.
fn opened_while_a_slow_attempt_was_out() -> (SharedBreaker, FailureCount, u64) {
    let shared = breaker();
    let slow = shared.failures_recorded();
    let _ = shared.record(0, false);
    let _ = shared.record(0, true);
    let mut t = 1;
    while shared.state() == State::Closed {
        assert!(t < 10_000, "the outage opens the breaker");
        let _ = shared.record(t, false);
        t += 1;
    }
    (shared, slow, t)
}

#[test]
fn a_late_success_is_not_a_probe_result() {
    let (shared, slow, _) = opened_while_a_slow_attempt_was_out();
    let State::Open { until_ms } = shared.state() else {
        unreachable!("the loop ends on an open breaker");
    };
    assert!(matches!(shared.check(until_ms), Admission::Probe { .. }));
    let _ = shared.record_success_since(slow, || until_ms);
    assert!(
        matches!(shared.state(), State::HalfOpen { .. }),
        "a success from before the outage says nothing of now: {:?}",
        shared.state()
    );
    // the probe's own success, begun after the run, closes it
    let probe = shared.failures_recorded();
    let _ = shared.record_success_since(probe, || until_ms + 1);
    assert_eq!(shared.state(), State::Closed);
}

#[test]
fn a_late_success_is_not_a_probe_result_even_after_the_run_was_ended() {
    let (shared, slow, t) = opened_while_a_slow_attempt_was_out();
    // while open, a success that began inside the run ends it
    let inside = shared.failures_recorded();
    let _ = shared.record(t, false);
    let _ = shared.record_success_since(inside, || t);
    assert_eq!(shared.run_reading(t).failures, 0);
    let State::Open { until_ms } = shared.state() else {
        unreachable!("a success while open is evidence only");
    };
    assert!(matches!(shared.check(until_ms), Admission::Probe { .. }));
    // the slow one from before the outage still does not close it
    let _ = shared.record_success_since(slow, || until_ms);
    assert!(
        matches!(shared.state(), State::HalfOpen { .. }),
        "{:?}",
        shared.state()
    );
}

/// The breaker crate's default breaker, one per key, for at most `max` keys.
fn keyed(max: usize) -> KeyedBreaker<&'static str> {
    KeyedBreaker::new(
        Config::new().build().unwrap(),
        NonZeroUsize::new(max).unwrap(),
    )
}

/// The failure run of `key`'s breaker.
fn run_of(breakers: &KeyedBreaker<&'static str>, key: &'static str) -> u32 {
    breakers.snapshot(&key).unwrap().failure_run()
}

#[test]
fn a_keyed_breaker_keeps_each_keys_run_going_past_a_late_success() {
    let breakers = keyed(8);
    let _ = breakers.record(&"a", 0, true);
    let slow = breakers.failures_recorded();
    let _ = breakers.record(&"a", 1, false);
    let _ = breakers.record(&"a", 2, true);
    for t in 3..6 {
        let began = breakers.failures_recorded();
        let _ = breakers.record_since(&"a", began, t, false);
    }
    // another key's failure moves the count too, and runs a run of its own
    let _ = breakers.record(&"b", 5, false);
    assert_eq!(breakers.failures_recorded().get(), 5);
    assert_eq!(run_of(&breakers, "b"), 1);
    let before = breakers.snapshot(&"a").unwrap().posterior(6);
    let _ = breakers.record_since(&"a", slow, 6, true);
    assert_eq!(run_of(&breakers, "a"), 3, "the late success is older news");
    assert!(breakers.snapshot(&"a").unwrap().posterior(6).alpha() > before.alpha());
    assert_eq!(run_of(&breakers, "b"), 1, "and news of `a` only");
}

#[test]
fn a_keyed_breaker_ends_a_run_on_a_success_that_began_inside_it() {
    let breakers = keyed(8);
    // plain records: each failure begins as it is recorded
    let _ = breakers.record(&"a", 0, false);
    let inside = breakers.failures_recorded();
    let _ = breakers.record(&"a", 1, false);
    let _ = breakers.record(&"a", 2, false);
    // began after the run's first failure, overlapped its later ones
    let _ = breakers.record_since(&"a", inside, 3, true);
    assert_eq!(run_of(&breakers, "a"), 0);
    // began together with the failure that begins the next run
    let together = breakers.failures_recorded();
    let _ = breakers.record(&"a", 4, false);
    let _ = breakers.record_since(&"a", together, 5, true);
    assert_eq!(run_of(&breakers, "a"), 0);
}

#[test]
fn a_keyed_breaker_cannot_order_attempts_begun_together() {
    let breakers = keyed(8);
    let together = breakers.failures_recorded();
    let _ = breakers.record_since(&"a", together, 1, false);
    let _ = breakers.record_since(&"a", together, 1, false);
    let _ = breakers.record_since(&"a", together, 2, true);
    assert_eq!(run_of(&breakers, "a"), 0);
}

#[test]
fn a_keyed_breakers_late_success_is_not_a_probe_result() {
    let breakers = keyed(8);
    let slow = breakers.failures_recorded();
    let _ = breakers.record(&"a", 0, false);
    let _ = breakers.record(&"a", 0, true);
    let mut t = 1;
    while breakers.state(&"a") == Some(State::Closed) {
        assert!(t < 10_000, "the outage opens the breaker");
        let _ = breakers.record(&"a", t, false);
        t += 1;
    }
    let Some(State::Open { until_ms }) = breakers.state(&"a") else {
        unreachable!("the loop ends on an open breaker");
    };
    assert!(matches!(
        breakers.check(&"a", until_ms),
        Admission::Probe { .. }
    ));
    let _ = breakers.record_since(&"a", slow, until_ms, true);
    assert!(
        matches!(breakers.state(&"a"), Some(State::HalfOpen { .. })),
        "{:?}",
        breakers.state(&"a")
    );
    let probe = breakers.failures_recorded();
    let _ = breakers.record_since(&"a", probe, until_ms + 1, true);
    assert_eq!(breakers.state(&"a"), Some(State::Closed));
}

#[test]
fn a_note_from_before_an_eviction_still_orders_against_the_keys_new_run() {
    let breakers = keyed(1);
    for t in 0..200 {
        let _ = breakers.record(&"a", t, false);
        let _ = breakers.record(&"a", t, true);
    }
    let before = breakers.failures_recorded();
    // "b" takes the only place; "a" comes back afresh
    let _ = breakers.record(&"b", 200, true);
    assert_eq!(breakers.state(&"a"), None, "evicted");
    // the old attempt fails first, beginning a's new run...
    let _ = breakers.record_since(&"a", before, 201, false);
    assert_eq!(run_of(&breakers, "a"), 1);
    // ...and an attempt begun since ends it: the run is not stuck
    let now = breakers.failures_recorded();
    let _ = breakers.record_since(&"a", now, 202, true);
    assert_eq!(run_of(&breakers, "a"), 0);
    // a note from before a run that began after another eviction (by a
    // failure of "b", which orders the two) is still late
    let slow = breakers.failures_recorded();
    let _ = breakers.record(&"b", 203, false);
    let _ = breakers.record(&"a", 203, false);
    let _ = breakers.record(&"a", 204, false);
    let _ = breakers.record_since(&"a", slow, 205, true);
    assert_eq!(run_of(&breakers, "a"), 2);
}
