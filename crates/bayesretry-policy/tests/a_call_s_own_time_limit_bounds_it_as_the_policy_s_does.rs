//! `Call::with_max_elapsed`: a call's own deadline, for a caller that knows
//! how long it has. It bounds the call as the policy's `max_elapsed` does (no
//! attempt starts after it, no wait crosses it, a server's wait past it ends
//! the call at once), the earlier of the two holds, and it is the call's
//! alone: the policy's other calls keep their own time.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

mod common;

use core::time::Duration;

use bayesretry_backoff::{Config, Jitter};
use bayesretry_policy::{
    Builder, Classification, Clock, ErrorClass, HttpStatus, ManualClock, Reason, RetryError,
    RetryErrorKind, RetryPolicy, VirtualSleeper,
};

/// Waits of 1 s, 2 s, 4 s, 8 s... (no jitter), up to ten attempts, in
/// virtual time; `max_elapsed` is the policy's own limit, if any.
fn classic(max_elapsed: Option<Duration>) -> (RetryPolicy, VirtualSleeper) {
    classic_with(|builder| match max_elapsed {
        Some(limit) => builder.with_max_elapsed(limit),
        None => builder,
    })
}

/// [`classic`]'s policy, with what `more` adds to its builder.
fn classic_with(more: impl FnOnce(Builder) -> Builder) -> (RetryPolicy, VirtualSleeper) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let builder = RetryPolicy::builder()
        .classic()
        .with_max_attempts(10)
        .with_backoff(
            Config::new()
                .with_base_delay(Duration::from_secs(1))
                .with_jitter(Jitter::None),
        )
        .with_virtual_time(sleeper.clone());
    (more(builder).build().unwrap(), sleeper)
}

/// The server's answer in these tests: a 429 that asks for 30 s.
fn asks_for_30_s(_: &u16) -> Classification {
    Classification::Retryable(ErrorClass::Http(429)).with_retry_after(Duration::from_secs(30))
}

/// The call ended at once, after its first attempt, because the server's
/// wait would have crossed its deadline.
fn stopped_for_the_server_s_wait(result: Result<(), RetryError<u16>>) {
    match result.map_err(RetryError::into_kind) {
        Err(RetryErrorKind::DeadlineExceeded {
            attempts,
            decision,
            retry_after,
            ..
        }) => {
            assert_eq!(attempts, 1);
            assert_eq!(decision.reason(), Reason::RetryAfterPastDeadline);
            assert_eq!(retry_after, Some(Duration::from_secs(30)));
        }
        other => panic!("expected the deadline, got {other:?}"),
    }
}

fn secs(s: &[u64]) -> Vec<Duration> {
    s.iter().copied().map(Duration::from_secs).collect()
}

/// The attempts made before the call ended at its deadline.
fn deadline_attempts<T: core::fmt::Debug>(result: Result<T, RetryError<HttpStatus>>) -> u32 {
    match result.map_err(RetryError::into_kind) {
        Err(RetryErrorKind::DeadlineExceeded {
            attempts,
            decision,
            last_error,
            ..
        }) => {
            assert_eq!(decision.reason(), Reason::Deadline);
            assert_eq!(last_error, HttpStatus(503));
            attempts
        }
        other => panic!("expected the deadline, got {other:?}"),
    }
}

#[test]
fn a_blocking_call_stops_before_a_wait_that_would_cross_its_own_limit() {
    let (policy, sleeper) = classic(None);
    let result: Result<(), _> = policy
        .call("db")
        .with_max_elapsed(Duration::from_secs(5))
        .run_blocking(|_| Err(HttpStatus(503)));
    // 1 s then 2 s (t = 3 s); the next 4 s would end at 7 s, past 5 s
    assert_eq!(deadline_attempts(result), 3);
    assert_eq!(sleeper.delays(), secs(&[1, 2]));
    assert_eq!(sleeper.clock().now_ms(), 3_000);
}

#[test]
fn an_async_call_stops_before_a_wait_that_would_cross_its_own_limit() {
    let (policy, sleeper) = classic(None);
    let result: Result<(), _> = common::block_on(
        policy
            .call("db")
            .with_max_elapsed(Duration::from_secs(8))
            .run(|_| core::future::ready(Err(HttpStatus(503)))),
    );
    // 1 + 2 + 4 = 7 s; the next 8 s would end at 15 s, past 8 s
    assert_eq!(deadline_attempts(result), 4);
    assert_eq!(sleeper.delays(), secs(&[1, 2, 4]));
}

#[test]
fn the_earlier_of_the_call_s_limit_and_the_policy_s_holds() {
    // the call's 5 s is shorter than the policy's 60 s
    let (policy, sleeper) = classic(Some(Duration::from_secs(60)));
    let result: Result<(), _> = policy
        .call("db")
        .with_max_elapsed(Duration::from_secs(5))
        .run_blocking(|_| Err(HttpStatus(503)));
    assert_eq!(deadline_attempts(result), 3);
    assert_eq!(sleeper.delays(), secs(&[1, 2]));

    // the policy's 5 s is shorter than the call's 60 s
    let (policy, sleeper) = classic(Some(Duration::from_secs(5)));
    let result: Result<(), _> = policy
        .call("db")
        .with_max_elapsed(Duration::from_secs(60))
        .run_blocking(|_| Err(HttpStatus(503)));
    assert_eq!(deadline_attempts(result), 3);
    assert_eq!(sleeper.delays(), secs(&[1, 2]));
}

#[test]
fn the_limit_counts_from_the_call_s_start_and_is_the_call_s_alone() {
    let (policy, sleeper) = classic(None);
    // a call made an hour in is timed from its own start
    sleeper.clock().advance(Duration::from_secs(3_600));
    let result: Result<(), _> = policy
        .call("db")
        .with_max_elapsed(Duration::from_secs(5))
        .run_blocking(|_| Err(HttpStatus(503)));
    assert_eq!(deadline_attempts(result), 3);

    // the next call, without a limit, runs to the attempt cap
    let before = sleeper.delays().len();
    let result: Result<(), _> = policy.run_blocking("db", |_| Err(HttpStatus(503)));
    assert!(
        matches!(
            result.map_err(RetryError::into_kind),
            Err(RetryErrorKind::Exhausted { attempts: 10, .. })
        ),
        "a call without a limit is bounded by the attempt cap alone"
    );
    assert_eq!(sleeper.delays().len() - before, 9);
}

#[test]
fn a_learning_call_does_not_wait_for_a_server_past_its_own_limit() {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_seed(7)
        .build()
        .unwrap();
    let result = policy
        .call_with("provider", asks_for_30_s)
        .with_max_elapsed(Duration::from_secs(10))
        .run_blocking(|_| Err(429));
    assert!(sleeper.delays().is_empty(), "{:?}", sleeper.delays());
    stopped_for_the_server_s_wait(result);
    // the server's wait holds the endpoint for every call until it runs out
    sleeper.clock().advance(Duration::from_secs(30));
    // the same call with room for the server's wait waits for it
    let result = policy
        .call_with("provider", asks_for_30_s)
        .with_max_elapsed(Duration::from_secs(45))
        .run_blocking(|attempt| if attempt == 1 { Err(429) } else { Ok(attempt) });
    assert_eq!(result.ok(), Some(2));
    assert_eq!(sleeper.delays(), [Duration::from_secs(30)]);
}

#[test]
fn a_call_that_cannot_take_the_fast_first_attempt_is_bounded_too() {
    // a per-attempt timeout sends every call through the general loop from
    // its first attempt: the limit is read there as well
    let (policy, sleeper) =
        classic_with(|builder| builder.with_attempt_timeout(Duration::from_secs(60)));
    let result: Result<(), _> = policy
        .call("db")
        .with_max_elapsed(Duration::from_secs(5))
        .run_blocking(|_| Err(HttpStatus(503)));
    assert_eq!(deadline_attempts(result), 3);
    let result: Result<(), _> = common::block_on(
        policy
            .call("db")
            .with_max_elapsed(Duration::from_secs(8))
            .run(|_| core::future::ready(Err(HttpStatus(503)))),
    );
    assert_eq!(deadline_attempts(result), 4);
    assert_eq!(sleeper.delays(), secs(&[1, 2, 1, 2, 4]));
}

#[test]
fn a_call_s_debug_shows_its_own_limit() {
    let (policy, _) = classic(None);
    let call = policy
        .call::<HttpStatus>("db")
        .with_max_elapsed(Duration::from_secs(5));
    let shown = format!("{call:?}");
    assert!(shown.contains("max_elapsed: Some(5s)"), "{shown}");
    let shown = format!("{:?}", policy.call::<HttpStatus>("db"));
    assert!(shown.contains("max_elapsed: None"), "{shown}");
}

#[test]
fn a_classic_call_does_not_wait_for_a_server_past_its_own_limit() {
    let (policy, sleeper) = classic(None);
    let result = common::block_on(
        policy
            .call_with("provider", asks_for_30_s)
            .with_max_elapsed(Duration::from_secs(10))
            .run(|_| core::future::ready(Err(429))),
    );
    assert!(sleeper.delays().is_empty(), "{:?}", sleeper.delays());
    stopped_for_the_server_s_wait(result);
}
