//! The default store's evidence fades (a ten-minute half-life): a context whose
//! first retries all failed, and which the greedy rule therefore stopped
//! retrying, is retried again within minutes; with a store that never forgets
//! it would never be retried again. Virtual time throughout.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

use core::time::Duration;

use bayesretry_policy::{
    Context, DEFAULT_EVIDENCE_HALF_LIFE, ErrorClass, ManualClock, RetryPolicy, default_store,
};
use bayesretry_store::StoreConfig;

/// A policy on `clock` (no breaker: only the store's evidence decides), with
/// the default store or the one given.
fn policy(clock: &ManualClock, store: Option<StoreConfig>) -> RetryPolicy {
    let mut builder = RetryPolicy::builder()
        .with_clock(clock.clone())
        .without_breaker()
        .with_seed(3);
    if let Some(store) = store {
        builder = builder.with_store_config(store);
    }
    builder.build().unwrap()
}

/// Ten failed retries of a 503 at attempt 1, then whether the context is
/// retried now, after `minutes`, and after a further hour.
fn retried_after(store: Option<StoreConfig>, minutes: u64) -> (bool, bool, bool) {
    let clock = ManualClock::new(0);
    let policy = policy(&clock, store);
    let ctx = Context::new("provider", 1, ErrorClass::Http(503));
    for _ in 0..10 {
        policy.observe(&ctx, false);
        clock.advance(Duration::from_millis(200));
    }
    let now = policy.should_retry(&ctx).retry();
    clock.advance(Duration::from_secs(60 * minutes));
    let later = policy.should_retry(&ctx).retry();
    clock.advance(Duration::from_secs(3_600));
    (now, later, policy.should_retry(&ctx).retry())
}

#[test]
fn the_default_store_tries_a_stopped_context_again_within_minutes() {
    assert_eq!(DEFAULT_EVIDENCE_HALF_LIFE, Duration::from_secs(600));
    let (now, in_a_minute, _) = retried_after(None, 1);
    assert!(!now, "ten failures in a row stop the retries");
    assert!(!in_a_minute, "a minute later the evidence still says stop");
    let (_, in_five, _) = retried_after(None, 5);
    assert!(in_five, "five minutes (half a half-life) are enough here");
    // default_store() is the builder's default
    assert_eq!(
        retried_after(Some(default_store()), 1),
        retried_after(None, 1)
    );
    assert_eq!(
        retried_after(Some(default_store()), 5),
        retried_after(None, 5)
    );
}

#[test]
fn a_store_that_never_forgets_never_tries_it_again() {
    let never = StoreConfig::new().with_hierarchical_priors(true);
    let (now, in_five, later) = retried_after(Some(never), 5);
    assert!(!now && !in_five && !later);
}
