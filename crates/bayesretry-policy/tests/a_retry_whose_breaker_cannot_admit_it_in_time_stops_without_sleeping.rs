//! Under `Builder::with_wait_while_open`, a failure that finds the breaker
//! open is retried and the retry waits for the breaker — but only when the
//! breaker can admit it within what is left of the `max_wait` and before the
//! deadline. When it cannot, the call stops at once on the open breaker, as a
//! first attempt refused then does: it does not sleep its backoff first, only
//! to be refused after it. Virtual time throughout.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::future::ready;
use core::time::Duration;

use bayesretry_breaker::State;
use bayesretry_cost::CostModel;
use bayesretry_policy::{
    Builder, Clock, HttpStatus, ManualClock, RetryError, RetryErrorKind, RetryPolicy,
    VirtualSleeper, default_breaker,
};

mod common;
use common::block_on;

/// The breaker's cooldown in these tests: 20 s, every time it opens.
const COOLDOWN_MS: u64 = 20_000;

/// A policy on virtual time whose breaker cools down for 20 s, as
/// `configure` changes it, with "api" healthy for a while and then down until
/// its breaker opened, and the clock at the end of that cooldown: the next
/// call is the breaker's probe. Its sleeper.
fn probing(configure: impl FnOnce(Builder) -> Builder) -> (RetryPolicy, VirtualSleeper) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let breaker = default_breaker(&CostModel::new(10.0, 1.0).unwrap())
        .with_cooldown_ms(COOLDOWN_MS)
        .with_max_cooldown_ms(COOLDOWN_MS);
    let builder = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_breaker(breaker)
        .with_seed(9);
    let policy = configure(builder).build().unwrap();
    for _ in 0..200 {
        policy
            .run_blocking("api", |_| Ok::<(), HttpStatus>(()))
            .unwrap();
        sleeper.clock().advance(Duration::from_millis(10));
    }
    for _ in 0..1_000 {
        let _ = policy.run_blocking("api", |_| Err::<(), _>(HttpStatus(503)));
        if let Some(State::Open { until_ms }) = policy.breaker_state("api") {
            sleeper.clock().set(until_ms);
            return (policy, sleeper);
        }
        sleeper.clock().advance(Duration::from_millis(100));
    }
    panic!("a dead endpoint opens the breaker");
}

/// The call ended refused by the breaker after `attempts`, with how long
/// until it may admit one.
fn refused_after<T>(result: &Result<T, RetryError<HttpStatus>>) -> Option<(u32, Duration)> {
    match result.as_ref().map_err(RetryError::kind) {
        Err(RetryErrorKind::CircuitOpen {
            attempts,
            retry_after: Some(left),
            ..
        }) => Some((*attempts, *left)),
        _ => None,
    }
}

#[test]
fn a_probe_that_fails_when_the_cooldown_is_longer_than_the_wait_stops_at_once() {
    let (policy, sleeper) = probing(|b| b.with_wait_while_open(Duration::from_secs(1)));
    let before = sleeper.clock().now_ms();
    let mut attempts = 0;
    let result = policy.run_blocking("api", |_| {
        attempts += 1;
        Err::<(), _>(HttpStatus(503))
    });
    assert_eq!(attempts, 1);
    assert_eq!(
        refused_after(&result),
        Some((1, Duration::from_millis(COOLDOWN_MS))),
        "{result:?}"
    );
    assert_eq!(
        sleeper.clock().now_ms(),
        before,
        "no backoff slept before a refusal it could not escape"
    );
}

#[test]
fn the_async_loop_stops_at_once_too() {
    let (policy, sleeper) = probing(|b| b.with_wait_while_open(Duration::from_secs(1)));
    let before = sleeper.clock().now_ms();
    let result = block_on(policy.run("api", |_| ready(Err::<(), _>(HttpStatus(503)))));
    assert_eq!(
        refused_after(&result),
        Some((1, Duration::from_millis(COOLDOWN_MS))),
        "{result:?}"
    );
    assert_eq!(sleeper.clock().now_ms(), before);
}

#[test]
fn a_cooldown_that_ends_past_the_deadline_stops_at_once() {
    let (policy, sleeper) = probing(|b| {
        b.with_wait_while_open(Duration::from_secs(60))
            .with_max_elapsed(Duration::from_secs(5))
    });
    let before = sleeper.clock().now_ms();
    let result = policy.run_blocking("api", |_| Err::<(), _>(HttpStatus(503)));
    assert_eq!(
        refused_after(&result).map(|(made, _)| made),
        Some(1),
        "{result:?}"
    );
    assert_eq!(sleeper.clock().now_ms(), before);
}

#[test]
fn a_cooldown_within_the_wait_is_still_waited_out_by_the_retry() {
    let (policy, sleeper) = probing(|b| b.with_wait_while_open(Duration::from_secs(60)));
    let before = sleeper.clock().now_ms();
    let mut made = Vec::new();
    let result = policy.run_blocking("api", |attempt| {
        made.push(sleeper.clock().now_ms() - before);
        if attempt == 1 {
            Err(HttpStatus(503))
        } else {
            Ok(())
        }
    });
    assert!(result.is_ok(), "{result:?}");
    // the retry went out as the next probe, when the new cooldown ended
    assert_eq!(made, [0, COOLDOWN_MS]);
}
