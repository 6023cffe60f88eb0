//! A cancellation from another thread ends a pending 60-second blocking sleep of
//! `run_blocking` at once, with the reason and the last error.
//!
//! The call runs on the real thread sleeper; the test waits for the call to end
//! (it would take the whole minute if the sleep could not be interrupted) and
//! checks what it returned, never how long it took.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::time::Duration;
use std::sync::mpsc;
use std::thread;

use bayesretry_backoff::{Config, Jitter};
use bayesretry_policy::{CancelToken, HttpStatus, RetryError, RetryPolicy};

#[test]
fn a_cancellation_from_another_thread_ends_the_blocking_sleep() {
    let policy = RetryPolicy::builder()
        .classic()
        .with_backoff(
            Config::new()
                .with_base_delay(Duration::from_secs(60))
                .with_max_delay(Duration::from_secs(60))
                .with_jitter(Jitter::None),
        )
        .build()
        .unwrap();
    let token = CancelToken::new();
    let canceller = token.clone();
    let (failed_tx, failed_rx) = mpsc::channel();

    let cancelling = thread::spawn(move || {
        // the call has failed once and is about to sleep 60 s
        failed_rx.recv().unwrap();
        canceller.cancel("shutting down");
    });
    let mut attempts = 0;
    let result = policy
        .call("slow")
        .with_cancel(token)
        .on_failed_attempt(move |info| {
            assert_eq!(info.next_delay, Some(Duration::from_secs(60)));
            failed_tx.send(()).unwrap();
        })
        .run_blocking(|_| {
            attempts += 1;
            Err::<(), _>(HttpStatus(503))
        });
    cancelling.join().unwrap();

    assert_eq!(attempts, 1);
    match result {
        Err(RetryError::Cancelled { reason, last_error }) => {
            assert_eq!(reason, "shutting down");
            assert_eq!(last_error, Some(HttpStatus(503)));
        }
        other => panic!("expected a cancellation, got {other:?}"),
    }
}
