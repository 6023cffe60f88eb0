//! An async call is lazy, like any Rust future: making it calls nothing; the
//! first poll makes the first attempt; a future dropped before its first poll
//! leaves no trace (no attempt, no breaker evidence); and a finished call
//! polled again neither panics nor attempts again.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::cell::Cell;
use core::future::{Future, ready};
use core::pin::pin;
use core::task::{Context, Poll, Waker};

use bayesretry_policy::{HttpStatus, ManualClock, RetryPolicy, VirtualSleeper};

fn policy() -> RetryPolicy {
    RetryPolicy::builder()
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .build()
        .unwrap()
}

#[test]
fn making_a_call_attempts_nothing_and_the_first_poll_makes_the_first_attempt() {
    let policy = policy();
    let attempts = Cell::new(0_u32);
    let op = |attempt: u32| {
        attempts.set(attempts.get() + 1);
        ready(if attempt < 2 {
            Err(HttpStatus(503))
        } else {
            Ok(attempt)
        })
    };
    let call = policy.run("provider", op);
    assert_eq!(attempts.get(), 0, "making the future called the operation");
    let mut call = pin!(call);
    let mut cx = Context::from_waker(Waker::noop());
    // the first failure's backoff is a virtual sleep, ready at once
    let mut answer = None;
    for _ in 0..10 {
        if let Poll::Ready(out) = call.as_mut().poll(&mut cx) {
            answer = Some(out);
            break;
        }
    }
    assert_eq!(answer.unwrap().ok(), Some(2));
    assert_eq!(attempts.get(), 2);
    // polled again after it finished: still pending, and no new attempt
    assert!(call.as_mut().poll(&mut cx).is_pending());
    assert_eq!(attempts.get(), 2);

    // the same for a call whose first attempt succeeds
    let mut quick = pin!(policy.run("provider", |attempt| {
        attempts.set(attempts.get() + 1);
        ready(Ok::<_, HttpStatus>(attempt))
    }));
    assert!(matches!(quick.as_mut().poll(&mut cx), Poll::Ready(Ok(1))));
    assert!(quick.as_mut().poll(&mut cx).is_pending());
    assert_eq!(attempts.get(), 3);
}

#[test]
fn a_call_dropped_before_its_first_poll_leaves_no_trace() {
    let policy = policy();
    let attempts = Cell::new(0_u32);
    for _ in 0..100 {
        let call = policy.run("down", |_| {
            attempts.set(attempts.get() + 1);
            ready(Err::<(), _>(HttpStatus(503)))
        });
        drop(call);
    }
    assert_eq!(attempts.get(), 0);
    // the breaker saw nothing: the endpoint is as new
    assert_eq!(policy.breaker_state("down"), None);
}
