//! A cancellation from another thread ends a pending one-hour blocking sleep of
//! `run_blocking` at once, with the reason and the last error.
//!
//! The call sleeps on the real thread sleeper, through a wrapper that fails the
//! test if the loop ever sleeps without its token (an uninterruptible sleep).
//! The test waits for the call to end and checks what it returned, never how
//! long it took; the sleep is an hour, not a minute, so that a sleep the
//! cancellation could not end would hang the test for all to see rather than
//! pass a minute late.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::time::Duration;
use std::sync::mpsc;
use std::thread;

use bayesretry_backoff::{Config, Jitter};
use bayesretry_policy::{
    BlockingSleeper, CancelToken, HttpStatus, RetryError, RetryErrorKind, RetryPolicy,
    ThreadSleeper,
};

const AN_HOUR: Duration = Duration::from_secs(3_600);

/// The thread sleeper, allowed to sleep only where a cancellation can end it.
struct OnlyCancellable;

impl BlockingSleeper for OnlyCancellable {
    fn sleep_blocking(&self, delay: Duration) {
        panic!("the loop slept {delay:?} where a cancellation cannot end it");
    }

    fn sleep_blocking_cancellable(&self, delay: Duration, cancel: &CancelToken) {
        ThreadSleeper.sleep_blocking_cancellable(delay, cancel);
    }
}

#[test]
fn a_cancellation_from_another_thread_ends_the_blocking_sleep() {
    let policy = RetryPolicy::builder()
        .classic()
        .with_backoff(
            Config::new()
                .with_base_delay(AN_HOUR)
                .with_max_delay(AN_HOUR)
                .with_jitter(Jitter::None),
        )
        .with_blocking_sleeper(OnlyCancellable)
        .build()
        .unwrap();
    let token = CancelToken::new();
    let canceller = token.clone();
    let (failed_tx, failed_rx) = mpsc::channel();

    let cancelling = thread::spawn(move || {
        // the call has failed once and is about to sleep an hour
        failed_rx.recv().unwrap();
        canceller.cancel("shutting down");
    });
    let mut attempts = 0;
    let result = policy
        .call("slow")
        .with_cancel(token)
        .on_failed_attempt(move |info| {
            assert_eq!(info.next_delay, Some(AN_HOUR));
            failed_tx.send(()).unwrap();
        })
        .run_blocking(|_| {
            attempts += 1;
            Err::<(), _>(HttpStatus(503))
        });
    cancelling.join().unwrap();

    assert_eq!(attempts, 1);
    match result.map_err(RetryError::into_kind) {
        Err(RetryErrorKind::Cancelled { reason, last_error }) => {
            assert_eq!(reason, "shutting down");
            assert_eq!(last_error, Some(HttpStatus(503)));
        }
        other => panic!("expected a cancellation, got {other:?}"),
    }
}
