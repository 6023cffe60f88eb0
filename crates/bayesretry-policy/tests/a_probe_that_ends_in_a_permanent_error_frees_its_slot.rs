//! A half-open breaker lets a probe through; if that attempt ends in a
//! permanent error (a 404, say), it tells nothing about whether the endpoint
//! is back, so the breaker neither closes nor reopens — but the probe's slot is
//! handed back, and the next call is let through at once instead of being
//! refused until the probe round gives up a cooldown later.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::time::Duration;

use bayesretry_breaker::State;
use bayesretry_policy::{
    HttpStatus, ManualClock, RetryError, RetryErrorKind, RetryPolicy, VirtualSleeper,
};

#[test]
fn the_next_call_is_admitted_after_a_probe_ends_in_a_permanent_error() {
    let clock = ManualClock::new(0);
    let policy = RetryPolicy::builder()
        .classic()
        .with_breaker(bayesretry_breaker::Config::new())
        .with_max_attempts(1)
        .with_virtual_time(VirtualSleeper::new(clock.clone()))
        .build()
        .unwrap();

    // a hard-down endpoint: the breaker opens
    let mut until = None;
    for _ in 0..100 {
        let _ = policy.run_blocking("api", |_| Err::<(), _>(HttpStatus(503)));
        if let Some(State::Open { until_ms }) = policy.breaker_state("api") {
            until = Some(until_ms);
            break;
        }
    }
    let until = until.expect("the breaker never opened");

    // the cooldown passes; the probe gets a permanent error
    clock.set(until);
    let probe = policy.run_blocking("api", |_| Err::<(), _>(HttpStatus(404)));
    assert!(
        matches!(
            probe.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::Permanent(HttpStatus(404)))
        ),
        "{probe:?}"
    );

    // the next call is let through, and its success closes the breaker
    clock.advance(Duration::from_millis(1));
    let next = policy.run_blocking("api", |_| Ok::<_, HttpStatus>(7));
    assert_eq!(next.ok(), Some(7));
    assert_eq!(policy.breaker_state("api"), Some(State::Closed));
}
