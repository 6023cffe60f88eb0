//! `on_exhausted` is told once when a call gives up after a retryable
//! failure, and an attempt cut off by its timeout is one: when the breaker
//! refuses the retry that follows it (other calls opened the breaker during
//! the backoff), the hook sees the `CircuitOpen` the call ends with, as it
//! does after an attempt that failed with an error.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::future::{Future, pending, ready};
use core::pin::{Pin, pin};
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::sync::Mutex;

use bayesretry_breaker::State;
use bayesretry_policy::{
    HttpStatus, ManualClock, RetryError, RetryErrorKind, RetryPolicy, VirtualSleeper,
};

/// A classic policy with the breaker crate's default breaker, a 2 s
/// per-attempt timeout, and a sleeper that yields once.
fn policy(clock: &ManualClock) -> RetryPolicy {
    RetryPolicy::builder()
        .classic()
        .with_breaker(bayesretry_breaker::Config::new())
        .with_max_attempts(3)
        .with_attempt_timeout(Duration::from_secs(2))
        .with_clock(clock.clone())
        .with_blocking_sleeper(VirtualSleeper::new(clock.clone()))
        .with_sleeper(common::advances_and_yields_once(clock))
        .build()
        .unwrap()
}

/// Polls the call whose first attempt `fail` makes `polls` times, which
/// leaves it asleep before its retry; opens the breaker with other calls;
/// then lets the call go on. What it ended with, and what `on_exhausted` saw.
fn refused_after<F>(polls: usize, fail: F) -> (Result<u32, RetryError<HttpStatus>>, Vec<String>)
where
    F: Fn(u32) -> Pin<Box<dyn Future<Output = Result<u32, HttpStatus>> + Send>>,
{
    let clock = ManualClock::new(0);
    let policy = policy(&clock);
    let told = Arc::new(Mutex::new(Vec::new()));
    let hook = Arc::clone(&told);
    let mut call = pin!(
        policy
            .call::<HttpStatus>("api")
            .on_exhausted(move |err| hook.lock().unwrap().push(err.to_string()))
            .run(fail)
    );
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..polls {
        assert!(call.as_mut().poll(&mut cx).is_pending());
    }
    for _ in 0..100 {
        if matches!(policy.breaker_state("api"), Some(State::Open { .. })) {
            break;
        }
        let _ = policy
            .call::<HttpStatus>("api")
            .should_retry(|_| false)
            .run_blocking(|_| Err::<u32, _>(HttpStatus(503)));
    }
    assert!(matches!(
        policy.breaker_state("api"),
        Some(State::Open { .. })
    ));
    let mut out = None;
    for _ in 0..4 {
        if let Poll::Ready(result) = call.as_mut().poll(&mut cx) {
            out = Some(result);
            break;
        }
    }
    let out = out.unwrap();
    assert!(
        matches!(
            out.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::CircuitOpen { attempts: 1, .. })
        ),
        "{out:?}"
    );
    let told = told.lock().unwrap().clone();
    (out, told)
}

#[test]
fn after_an_attempt_that_failed_with_an_error() {
    // the attempt fails at once, and the call sleeps
    let (out, told) = refused_after(1, |_| Box::pin(ready(Err(HttpStatus(503)))));
    assert_eq!(told, [out.unwrap_err().to_string()]);
}

#[test]
fn after_an_attempt_cut_off_by_its_timeout() {
    // one poll to start the attempt's timer, one to see it run out
    let (out, told) = refused_after(2, |_| Box::pin(pending()));
    assert_eq!(told, [out.unwrap_err().to_string()]);
}
