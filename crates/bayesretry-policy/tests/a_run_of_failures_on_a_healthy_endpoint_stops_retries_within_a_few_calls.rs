//! The change-point evidence of the default policy: the endpoint's breaker sees
//! every attempt, first tries included, and a run of failures on an endpoint
//! that usually succeeds stops retries before the retry context's own posterior
//! (here a class never seen before, at its uniform prior) has learned of the
//! outage; a run long enough opens the breaker itself. Virtual time throughout.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

use core::time::Duration;

use bayesretry_breaker::State;
use bayesretry_cost::CostModel;
use bayesretry_policy::{HttpStatus, ManualClock, RetryPolicy, VirtualSleeper, default_breaker};

mod common;
use common::healthy_minute;

/// The default policy (or one without a breaker) on virtual time, and its clock.
fn policy(breaker: bool) -> (RetryPolicy, ManualClock) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let clock = sleeper.clock().clone();
    let mut builder = RetryPolicy::builder()
        .with_virtual_time(sleeper)
        .with_seed(11);
    if !breaker {
        builder = builder.without_breaker();
    }
    (builder.build().unwrap(), clock)
}

/// A minute of healthy calls, ten a second, then `calls` calls into an outage
/// that fails every attempt with a 503; the retries each outage call made
/// (none for a call the breaker refused).
fn retries_into_an_outage(policy: &RetryPolicy, clock: &ManualClock, calls: usize) -> Vec<u32> {
    healthy_minute(policy, clock);
    (0..calls)
        .map(|_| {
            let mut attempts: u32 = 0;
            let _ = policy.run_blocking("api", |_| {
                attempts += 1;
                Err::<(), _>(HttpStatus(503))
            });
            clock.advance(Duration::from_millis(100));
            attempts.saturating_sub(1)
        })
        .collect()
}

#[test]
fn two_failures_in_a_row_stop_the_retries_of_a_class_never_seen() {
    let (policy, clock) = policy(true);
    let retries = retries_into_an_outage(&policy, &clock, 20);
    // the first call's first failure is one in a row (a healthy endpoint fails
    // now and then): it retries once; at the second failure in a row, on an
    // endpoint whose usual rate is about 0.98 (the faded minute of successes),
    // the run says the endpoint changed (w ≈ 0.94, most likely down), the
    // retry's probability falls from its prior's ½ to 0.07, below the
    // break-even 0.1, and no call retries any more. Jeffreys' prior alone,
    // without the point at 0, took the first call to its cap.
    assert_eq!(retries[0], 1, "{retries:?}");
    assert!(retries[1..].iter().all(|&r| r == 0), "{retries:?}");
}

#[test]
fn a_run_of_twenty_opens_the_breaker_after_a_healthy_minute() {
    let (policy, clock) = policy(true);
    let _ = retries_into_an_outage(&policy, &clock, 16);
    // the first call's attempts and fifteen more first tries: 18 or more
    // failures in a row, where 6 already make the breaker 95 % sure that the
    // rate is below the break-even 0.1 (18 under Jeffreys' prior alone)
    assert!(
        matches!(policy.breaker_state("api"), Some(State::Open { .. })),
        "{:?}",
        policy.breaker_state("api")
    );
    // the same breaker reading only its decayed evidence is still closed
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let clock = sleeper.clock().clone();
    let plain = RetryPolicy::builder()
        .with_breaker(default_breaker(&CostModel::new(10.0, 1.0).unwrap()).without_failure_run())
        .with_virtual_time(sleeper)
        .with_seed(11)
        .build()
        .unwrap();
    let _ = retries_into_an_outage(&plain, &clock, 16);
    assert_eq!(plain.breaker_state("api"), Some(State::Closed));
}

#[test]
fn without_the_breaker_the_posterior_alone_takes_longer_to_learn() {
    let (policy, clock) = policy(false);
    let retries = retries_into_an_outage(&policy, &clock, 20);
    let total: u32 = retries.iter().sum();
    // the uniform prior needs about nine failed retries before its mean falls
    // to the break-even 0.1
    assert!(total >= 6, "{retries:?}");
}

#[test]
fn asking_about_an_endpoint_never_called_makes_no_state_for_it() {
    let (policy, _clock) = policy(true);
    let ctx = bayesretry_store::Context::new("never", 1, bayesretry_store::ErrorClass::Http(503));
    assert!(policy.should_retry(&ctx).retry(), "the prior alone: retry");
    assert_eq!(policy.breaker_state("never"), None);
}
