//! The per-attempt timeout: an attempt that never finishes is cut off after
//! exactly the configured time, on the policy's own (here virtual) clock, and the
//! next attempt runs.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::future::{pending, ready};
use core::time::Duration;

use bayesretry_backoff::{Config, Jitter};
use bayesretry_policy::{
    Clock, ErrorClass, HttpStatus, ManualClock, Reason, RetryError, RetryErrorKind, RetryPolicy,
    VirtualSleeper,
};

fn policy(attempts: u32) -> (RetryPolicy, VirtualSleeper) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(attempts)
        .with_backoff(
            Config::new()
                .with_base_delay(Duration::from_millis(100))
                .with_jitter(Jitter::None),
        )
        .with_attempt_timeout(Duration::from_secs(2))
        .with_virtual_time(sleeper.clone())
        .build()
        .unwrap();
    (policy, sleeper)
}

/// Attempt 1 never finishes; attempt 2 answers at once.
async fn hangs_then_answers(attempt: u32) -> Result<u32, HttpStatus> {
    if attempt == 1 {
        pending::<()>().await;
    }
    Ok(attempt)
}

#[tokio::test]
async fn a_hung_attempt_times_out_after_exactly_the_timeout_and_the_next_one_runs() {
    let (policy, sleeper) = policy(3);
    let mut seen = Vec::new();
    let answer = policy
        .call::<HttpStatus>("search")
        .on_failed_attempt(|info| seen.push((info.attempt, info.error.is_none(), info.error_class)))
        .run(hangs_then_answers)
        .await;
    assert_eq!(answer.unwrap(), 2);
    // the timeout, then the backoff before attempt 2
    assert_eq!(
        sleeper.delays(),
        [Duration::from_secs(2), Duration::from_millis(100)]
    );
    assert_eq!(sleeper.clock().now_ms(), 2_100);
    assert_eq!(seen, [(1, true, ErrorClass::Timeout)]);
}

#[tokio::test]
async fn an_attempt_that_finishes_at_once_starts_no_timer() {
    let (policy, sleeper) = policy(3);
    let answer = policy
        .run("search", |_| ready(Ok::<_, HttpStatus>(7)))
        .await;
    assert_eq!(answer.unwrap(), 7);
    assert!(sleeper.delays().is_empty());
    assert_eq!(sleeper.clock().now_ms(), 0);
}

#[tokio::test]
async fn when_every_attempt_times_out_the_call_says_so() {
    let (policy, sleeper) = policy(2);
    let result = policy
        .run("search", |_| pending::<Result<(), HttpStatus>>())
        .await;
    match result.map_err(RetryError::into_kind) {
        Err(RetryErrorKind::AttemptTimedOut {
            timeout,
            attempts,
            decision,
            vetoed,
        }) => {
            assert_eq!(timeout, Duration::from_secs(2));
            assert_eq!(attempts, 2);
            assert_eq!(decision.reason(), Reason::MaxAttempts);
            assert!(!vetoed);
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_eq!(
        sleeper.delays(),
        [
            Duration::from_secs(2),
            Duration::from_millis(100),
            Duration::from_secs(2)
        ]
    );
}

#[tokio::test]
async fn a_veto_after_a_timeout_is_reported_as_such() {
    let (policy, _) = policy(3);
    let result = policy
        .call::<HttpStatus>("search")
        .should_retry(|_| false)
        .run(|_| pending::<Result<(), HttpStatus>>())
        .await;
    match result.map_err(RetryError::into_kind) {
        Err(err @ RetryErrorKind::AttemptTimedOut { vetoed: true, .. }) => {
            assert!(err.to_string().contains("should_retry"), "{err}");
            assert!(err.last_error().is_none());
        }
        other => panic!("expected a vetoed timeout, got {other:?}"),
    }
}
