//! Learning in the run loop: a hard-down endpoint stops getting retries after a
//! handful of calls and its breaker opens; a transient one keeps being retried;
//! the hierarchical prior makes a new endpoint's first 429 a retry.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod common;

use bayesretry_cost::CostModel;
use bayesretry_policy::{
    Context, ErrorClass, HttpStatus, ManualClock, RetryError, RetryErrorKind, RetryPolicy,
    VirtualSleeper,
};
use bayesretry_store::StoreConfig;

fn virtual_policy() -> RetryPolicy {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    RetryPolicy::builder()
        .with_virtual_time(sleeper)
        .with_seed(7)
        .build()
        .unwrap()
}

#[test]
fn a_hard_down_endpoint_stops_getting_retries_and_its_breaker_opens() {
    let policy = virtual_policy();
    let mut attempts_per_call = Vec::new();
    let mut opened_at_call = None;
    for call in 0..200 {
        let mut made = 0;
        let result: Result<(), _> = policy.run_blocking("down", |_| {
            made += 1;
            Err(HttpStatus(500))
        });
        attempts_per_call.push(made);
        if let Err(RetryErrorKind::CircuitOpen { attempts, .. }) =
            result.as_ref().map_err(RetryError::kind)
        {
            // the error counts the attempts the call made before the refusal
            assert_eq!(*attempts, made, "{result:?}");
            opened_at_call = Some(call);
            break;
        }
    }
    assert_eq!(
        attempts_per_call[0], 4,
        "a fresh endpoint is retried to the cap"
    );
    let first_single = attempts_per_call.iter().position(|&n| n == 1).unwrap();
    assert!(
        first_single <= 5,
        "retries stop after a handful of calls: {attempts_per_call:?}"
    );
    // after it, no retry goes out before the breaker opens: the posterior of
    // a retry after the first attempt settles at about the break-even (0.1 at
    // V/c 10), and the run holds the retry below it. The run is weighed
    // against the rate before it — on this endpoint, down from its first
    // call, the prior's ½ — which its own failures do not lower, so it does
    // not weigh less as it grows (weighed against the breaker's posterior
    // mean, which every failure lowered, it did, and a retry went out again
    // at 24 in a row); and the breaker opens on the run within a few calls.
    let retried_later = attempts_per_call[first_single..]
        .iter()
        .filter(|&&n| n > 1)
        .count();
    assert_eq!(retried_later, 0, "{attempts_per_call:?}");
    assert!(
        opened_at_call.is_some(),
        "the breaker opens: {attempts_per_call:?}"
    );
    // once open, a call fails fast: no attempt at all
    let mut made = 0;
    let result: Result<(), _> = policy.run_blocking("down", |_| {
        made += 1;
        Err(HttpStatus(500))
    });
    assert_eq!(made, 0);
    match result.map_err(RetryError::into_kind) {
        Err(RetryErrorKind::CircuitOpen {
            endpoint,
            retry_after,
            last_error,
            attempts,
        }) => {
            assert_eq!(endpoint, "down");
            assert!(retry_after.is_some() && last_error.is_none());
            assert_eq!(attempts, 0);
        }
        other => panic!("expected a fail-fast, got {other:?}"),
    }
}

#[test]
fn a_transient_endpoint_keeps_being_retried() {
    let policy = virtual_policy();
    for _ in 0..100 {
        let result = policy.run_blocking("flaky", common::fails_once);
        assert_eq!(result.ok(), Some(2));
    }
    let ctx = Context::new("flaky", 1, ErrorClass::Http(503));
    assert!(policy.should_retry(&ctx).retry());
}

#[test]
fn the_hierarchical_prior_makes_a_new_endpoints_first_429_a_retry() {
    // worth retrying only above p = 0.6: the uniform prior alone (0.5) says no
    let strict = CostModel::new(10.0, 6.0).unwrap();
    let with_hierarchy = RetryPolicy::builder()
        .with_cost_model(strict)
        .build()
        .unwrap();
    let without = RetryPolicy::builder()
        .with_cost_model(strict)
        .with_store_config(StoreConfig::new().with_hierarchical_priors(false))
        .build()
        .unwrap();
    for policy in [&with_hierarchy, &without] {
        for endpoint in ["openai", "anthropic", "mistral"] {
            for _ in 0..10 {
                policy.observe(&Context::new(endpoint, 1, ErrorClass::Http(429)), true);
            }
        }
    }
    let fresh = Context::new("brand-new", 1, ErrorClass::Http(429));
    assert!(with_hierarchy.should_retry(&fresh).retry());
    assert!(!without.should_retry(&fresh).retry());
}
