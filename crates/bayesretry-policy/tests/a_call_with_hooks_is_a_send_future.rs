//! A call's future is `Send` whatever it holds — hooks (which are `Send` but
//! not `Sync`), a cancellation token, a wait for the breaker — so a
//! multi-threaded runtime can move it between threads. A compile-time check:
//! the test fails to build if a change makes the future hold a reference to
//! something that is not `Sync` across an await.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

use core::future::{Future, ready};
use core::time::Duration;

use bayesretry_policy::{CancelToken, HttpStatus, RetryPolicy};

fn send<F: Future + Send>(future: F) -> F {
    future
}

#[test]
fn a_call_with_every_hook_a_token_and_a_wait_is_send() {
    let policy = RetryPolicy::builder()
        .with_wait_while_open(Duration::from_secs(1))
        .build()
        .unwrap();
    let token = CancelToken::new();
    let future = send(
        policy
            .call::<HttpStatus>("api")
            .with_cancel(token)
            .should_consume_retry(|_, _| true)
            .on_failed_attempt(|_| {})
            .should_retry(|_| true)
            .on_exhausted(|_| {})
            .run(|_| ready(Ok::<u32, HttpStatus>(1))),
    );
    drop(future);
}
