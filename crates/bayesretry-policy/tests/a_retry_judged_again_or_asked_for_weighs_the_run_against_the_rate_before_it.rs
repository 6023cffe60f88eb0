//! The run loop's decision after a failure is not the only one that weighs
//! the endpoint's run of failures: a retry judged again after its wait (the
//! run grew meanwhile) and `RetryPolicy::should_retry` read the breaker's run
//! too, and must weigh it against the success rate before the run, as the
//! loop does — not against a posterior mean that holds the run's own failures.
//! On a quiet endpoint (one call every 5 s, the default breaker's 10 s
//! half-life: a handful of outcomes of evidence) the two readings part most:
//! after five failures in a row a context at its uniform prior, ½, is worth
//! 0.0438 against the rate before the run (0.793) and stays near 0.48 against
//! the posterior's mean (0.310). Virtual time.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;
use std::sync::OnceLock;

use bayesretry_policy::{
    BlockingSleeper, Builder, Context, ErrorClass, HttpStatus, ManualClock, Reason, RetryError,
    RetryErrorKind, RetryPolicy,
};

/// The probability after five failures in a row on the quiet endpoint, for a
/// context at its uniform prior, at a hazard of 1 % a run: the mixture of
/// SPEC §5 at `p₀` = 0.793273 (computed with mpmath by bayesretry-breaker's
/// `tests/data/run_of_failures_reference.py`, "failure 5 new"; the "old"
/// reading, at the posterior's mean, is 0.4813).
const AFTER_FIVE: f64 = 0.043_824_908_751_777_971;

/// `builder`'s policy on `clock`, after five minutes of successes at "api",
/// a call every 5 s: the breaker folds them in, at the first failure, as
/// 2.8373 successes of faded evidence, a rate before the run of 0.793273.
fn quiet_endpoint(builder: Builder, clock: &ManualClock) -> RetryPolicy {
    let policy = builder.with_seed(5).build().unwrap();
    common::quiet_five_minutes(&policy, clock);
    policy
}

/// A call to "api" whose first attempt fails with a 503, its retry vetoed:
/// one failure more in the breaker's run, and no retry context learns.
fn one_failing_call(policy: &RetryPolicy) {
    let _ = policy
        .call::<HttpStatus>("api")
        .should_retry(|_| false)
        .run_blocking(|_| Err::<(), _>(HttpStatus(503)));
}

#[test]
fn should_retry_weighs_the_run_against_the_rate_before_it() {
    let clock = ManualClock::new(0);
    let policy = quiet_endpoint(RetryPolicy::builder().with_clock(clock.clone()), &clock);
    // five calls into an outage, 5 s apart, each failing its first attempt;
    // asked just after the fifth
    for call in 0..5 {
        if call > 0 {
            clock.advance(Duration::from_secs(5));
        }
        one_failing_call(&policy);
    }
    let decision = policy.should_retry(&Context::new("api", 1, ErrorClass::Http(503)));
    assert!(
        (decision.probability() - AFTER_FIVE).abs() < 1e-12,
        "{decision:?}"
    );
    assert!(!decision.retry(), "{decision:?}");
}

/// A sleeper that moves the clock and, during the first wait it is asked
/// for, makes four failing calls to "api".
struct FourFailMeanwhile {
    clock: ManualClock,
    policy: OnceLock<RetryPolicy>,
    done: AtomicBool,
}

impl BlockingSleeper for FourFailMeanwhile {
    fn sleep_blocking(&self, delay: Duration) {
        self.clock.advance(delay);
        if self.done.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(policy) = self.policy.get() {
            for _ in 0..4 {
                one_failing_call(policy);
                self.clock.advance(Duration::from_millis(10));
            }
        }
    }
}

/// `Arc<FourFailMeanwhile>` as the policy's sleeper.
struct Shared(Arc<FourFailMeanwhile>);

impl BlockingSleeper for Shared {
    fn sleep_blocking(&self, delay: Duration) {
        self.0.sleep_blocking(delay);
    }
}

#[test]
fn a_retry_judged_again_after_its_wait_weighs_the_run_against_the_rate_before_it() {
    let clock = ManualClock::new(0);
    let sleeper = Arc::new(FourFailMeanwhile {
        clock: clock.clone(),
        policy: OnceLock::new(),
        done: AtomicBool::new(false),
    });
    let builder = RetryPolicy::builder()
        .with_clock(clock.clone())
        .with_blocking_sleeper(Shared(Arc::clone(&sleeper)));
    let policy = quiet_endpoint(builder, &clock);
    assert!(sleeper.policy.set(policy.clone()).is_ok());
    // the first failure after the quiet minutes is a retry (0.485); during
    // its wait four more calls fail, and the retry is judged again on a run
    // of five before it goes out
    let mut attempts = 0_u32;
    let result = policy.run_blocking("api", |_| {
        attempts += 1;
        Err::<(), _>(HttpStatus(503))
    });
    assert_eq!(attempts, 1, "the retry never went out");
    let Err(RetryErrorKind::Exhausted {
        attempts: 1,
        decision,
        ..
    }) = result.map_err(RetryError::into_kind)
    else {
        panic!("exhausted after one attempt");
    };
    assert_eq!(decision.reason(), Reason::NegativeExpectedValue);
    assert!(
        (decision.probability() - AFTER_FIVE).abs() < 1e-12,
        "{decision:?}"
    );
}
