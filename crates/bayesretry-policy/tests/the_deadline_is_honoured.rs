//! The deadline (`max_elapsed`): no sleep that would cross it, and a server's
//! Retry-After counts toward it. It bounds when attempts start: an attempt
//! under way is bounded by its own timeout, not by the deadline.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

mod common;

use core::time::Duration;

use bayesretry_backoff::{Config, Jitter};
use bayesretry_policy::{
    Classification, Clock, ErrorClass, ManualClock, Reason, RetryError, RetryErrorKind,
    RetryPolicy, VirtualSleeper,
};

fn policy(max_elapsed: Duration) -> (RetryPolicy, VirtualSleeper) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(10)
        .with_backoff(
            Config::new()
                .with_base_delay(Duration::from_secs(1))
                .with_jitter(Jitter::None),
        )
        .with_max_elapsed(max_elapsed)
        .with_virtual_time(sleeper.clone())
        .build()
        .unwrap();
    (policy, sleeper)
}

#[test]
fn no_sleep_crosses_the_deadline() {
    let (policy, sleeper) = policy(Duration::from_secs(5));
    let mut made = 0;
    let result: Result<(), RetryError<std::io::Error>> = policy.run_blocking("db", |_| {
        made += 1;
        Err(std::io::ErrorKind::TimedOut.into())
    });
    // 1 s then 2 s (t = 3 s); the next 4 s would end at 7 s > 5 s: stop now
    assert_eq!(
        sleeper.delays(),
        [Duration::from_secs(1), Duration::from_secs(2)]
    );
    assert_eq!(made, 3);
    assert_eq!(sleeper.clock().now_ms(), 3_000);
    assert!(
        matches!(
            result.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::DeadlineExceeded { attempts: 3, .. })
        ),
        "{result:?}"
    );
}

#[test]
fn a_retry_after_beyond_the_deadline_is_not_waited_for() {
    let (policy, sleeper) = policy(Duration::from_secs(10));
    let result: Result<(), RetryError<u16>> = policy
        .call_with("api", |_: &u16| {
            Classification::Retryable(ErrorClass::Http(429))
                .with_retry_after(Duration::from_secs(30))
        })
        .run_blocking(|_| Err(429));
    assert!(sleeper.delays().is_empty());
    let err = result.unwrap_err();
    assert!(
        err.to_string()
            .contains("the server asked for 30 s, past the deadline"),
        "{err}"
    );
    match err.into_kind() {
        RetryErrorKind::DeadlineExceeded {
            attempts,
            decision,
            retry_after,
            ..
        } => {
            assert_eq!(attempts, 1);
            // the backoff alone would have started the retry in time
            assert_eq!(decision.reason(), Reason::RetryAfterPastDeadline);
            assert_eq!(retry_after, Some(Duration::from_secs(30)));
        }
        other => panic!("expected the deadline, got {other:?}"),
    }
}

#[test]
fn a_retry_after_longer_than_the_backoff_is_honoured() {
    let (policy, sleeper) = policy(Duration::from_secs(60));
    let result = policy
        .call_with("api", |_: &u16| {
            Classification::Retryable(ErrorClass::Http(429))
                .with_retry_after(Duration::from_secs(7))
        })
        .run_blocking(|attempt| if attempt == 1 { Err(429) } else { Ok(attempt) });
    assert_eq!(result.ok(), Some(2));
    assert_eq!(sleeper.delays(), [Duration::from_secs(7)]);
}

#[test]
fn a_retry_after_beyond_the_limit_is_reported_with_the_wait_asked_for() {
    let (policy, sleeper) = policy(Duration::from_secs(3_600));
    let result: Result<(), RetryError<u16>> = policy
        .call_with("api", |_: &u16| {
            Classification::Retryable(ErrorClass::Http(429))
                .with_retry_after(Duration::from_secs(300))
        })
        .run_blocking(|_| Err(429));
    assert!(sleeper.delays().is_empty());
    let err = result.unwrap_err();
    assert!(
        err.to_string().contains("the server asked for 5 min"),
        "{err}"
    );
    match err.into_kind() {
        RetryErrorKind::Exhausted {
            decision,
            retry_after,
            ..
        } => {
            // the default limit on a server's wait is a minute
            assert_eq!(decision.reason(), Reason::RetryAfterBeyondLimit);
            assert_eq!(retry_after, Some(Duration::from_secs(300)));
        }
        other => panic!("expected the limit, got {other:?}"),
    }
}

#[test]
fn an_attempt_under_way_runs_to_its_own_timeout_and_no_retry_follows() {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(10)
        .with_max_elapsed(Duration::from_secs(1))
        .with_attempt_timeout(Duration::from_secs(10))
        .with_virtual_time(sleeper.clone())
        .build()
        .unwrap();
    let mut made = 0;
    let result = common::block_on(policy.run("db", |_| {
        made += 1;
        core::future::pending::<Result<(), std::io::Error>>()
    }));
    assert_eq!(made, 1);
    assert_eq!(sleeper.clock().now_ms(), 10_000, "the whole timeout");
    match result.map_err(RetryError::into_kind) {
        Err(RetryErrorKind::AttemptTimedOut {
            timeout, decision, ..
        }) => {
            assert_eq!(timeout, Duration::from_secs(10));
            assert_eq!(decision.reason(), Reason::Deadline);
        }
        other => panic!("expected the attempt's timeout, got {other:?}"),
    }
}
