//! An explicit cancellation ends a pending 60-second sleep at once, with the
//! reason, and dropping the call's future cancels it too.
//!
//! The sleeps are tokio's, on a paused clock: tokio moves the clock only when
//! every task waits, so a sleep the cancellation did not end shows as 60
//! virtual seconds gone, and no real time is measured.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test, and helpers outside #[test] panic too"
)]

use core::time::Duration;

use bayesretry_backoff::{Config, Jitter};
use bayesretry_policy::{CancelToken, HttpStatus, RetryError, RetryErrorKind, RetryPolicy};

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn cancellation_ends_a_60_second_sleep_at_once() {
    let policy = RetryPolicy::builder()
        .classic()
        .with_backoff(
            Config::new()
                .with_base_delay(Duration::from_secs(60))
                .with_max_delay(Duration::from_secs(60))
                .with_jitter(Jitter::None),
        )
        .with_sleeper(tokio::time::sleep)
        .build()
        .unwrap();
    let token = CancelToken::new();
    let canceller = token.clone();
    let started = tokio::time::Instant::now();
    let call = policy
        .call("slow")
        .with_cancel(token)
        .run(|_| async { Err::<(), _>(HttpStatus(503)) });
    let cancel = async move {
        tokio::task::yield_now().await;
        canceller.cancel("user pressed stop");
    };
    let (result, ()) = tokio::join!(call, cancel);
    assert_eq!(started.elapsed(), Duration::ZERO);
    match result.map_err(RetryError::into_kind) {
        Err(RetryErrorKind::Cancelled { reason, last_error }) => {
            assert_eq!(reason, "user pressed stop");
            assert_eq!(last_error, Some(HttpStatus(503)));
        }
        other => panic!("expected a cancellation, got {other:?}"),
    }
    let err: RetryError<HttpStatus> = RetryErrorKind::Cancelled {
        reason: "user pressed stop".into(),
        last_error: Some(HttpStatus(503)),
    }
    .into();
    assert_eq!(err.to_string(), "cancelled: user pressed stop");
}

#[tokio::test(flavor = "current_thread")]
async fn a_token_cancelled_before_the_call_prevents_every_attempt() {
    let token = CancelToken::new();
    token.cancel("shutdown");
    let mut made = 0;
    let result = RetryPolicy::new()
        .call("x")
        .with_cancel(token)
        .run(|_| {
            made += 1;
            async { Ok::<_, HttpStatus>(()) }
        })
        .await;
    assert_eq!(made, 0);
    assert!(matches!(
        result.map_err(RetryError::into_kind),
        Err(RetryErrorKind::Cancelled { .. })
    ));
}
