//! Outcomes arrive in the order attempts end. A shared breaker told when each
//! attempt began (by the count of failures it had seen) does not let a slow
//! attempt that began before a run of failures end that run by succeeding late.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

use bayesretry_breaker::{Admission, Config, FailureCount, SharedBreaker, State};

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
