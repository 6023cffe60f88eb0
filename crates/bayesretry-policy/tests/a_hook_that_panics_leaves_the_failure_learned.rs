//! A hook that panics unwinds to the caller, and what the policy holds is not
//! left half done: the failed attempt has been counted by the breaker and
//! learned by the store before any hook runs — `should_consume_retry`, the
//! first of them, included.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::panic::AssertUnwindSafe;
use std::panic::catch_unwind;

use bayesretry_policy::{
    Context, ErrorClass, HttpStatus, ManualClock, RetryPolicy, VirtualSleeper,
};

/// A learning policy on virtual time.
fn learning() -> RetryPolicy {
    RetryPolicy::builder()
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .build()
        .unwrap()
}

/// The failures learned after a first 503 at `api`: the weight of the
/// posterior's β.
fn failures_after_a_first_503(policy: &RetryPolicy) -> f64 {
    policy
        .posterior(&Context::new("api", 1, ErrorClass::Http(503)))
        .beta()
}

/// Runs `call`, whose hook panics at the retry's failure, on a learning
/// policy: the panic unwinds to the caller, and the store has learned the
/// retry after the first 503 at `api` that was made and failed.
fn the_failure_is_learned_when_the_hook_panics<R>(call: impl FnOnce(&RetryPolicy) -> R) {
    let policy = learning();
    let before = failures_after_a_first_503(&policy);
    let unwound = catch_unwind(AssertUnwindSafe(|| call(&policy)));
    assert!(unwound.is_err(), "a hook's panic is not contained");
    let after = failures_after_a_first_503(&policy);
    assert!(after > before, "β went from {before} to {after}");
}

#[test]
fn the_retry_that_failed_is_learned_before_should_consume_retry_panics() {
    the_failure_is_learned_when_the_hook_panics(|policy| {
        policy
            .call("api")
            .should_consume_retry(|_: &HttpStatus, attempt| {
                assert!(attempt < 2, "the hook panicked at the retry's failure");
                true
            })
            .run_blocking(|_| Err::<(), _>(HttpStatus(503)))
    });
}

#[test]
fn as_it_is_when_on_failed_attempt_panics() {
    the_failure_is_learned_when_the_hook_panics(|policy| {
        policy
            .call("api")
            .on_failed_attempt(|info| {
                assert!(info.attempt < 2, "the hook panicked at the retry's failure");
            })
            .run_blocking(|_| Err::<(), _>(HttpStatus(503)))
    });
}
