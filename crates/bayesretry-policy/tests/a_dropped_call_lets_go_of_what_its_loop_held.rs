//! A call dropped while its retry loop waits lets go of everything the loop
//! held: the sleep it was waiting on and the last attempt's error. The loop's
//! state is dropped by hand when the call's future is (it is not left to the
//! compiler's drop glue), so this is what would leak if that were forgotten.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

use alloc::sync::Arc;
use core::future::{Future, pending};
use core::pin::Pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use bayesretry_policy::{Classification, ErrorClass, ManualClock, RetryPolicy};

/// A sleep that never ends and holds a share of `held` while it lives.
struct HeldSleep {
    _held: Arc<()>,
}

impl Future for HeldSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        Poll::Pending
    }
}

/// An error that holds a share of its `Arc` while it lives.
#[derive(Debug)]
struct HeldError(#[expect(dead_code, reason = "held only to be counted")] Arc<()>);

fn classify(_: &HeldError) -> Classification {
    Classification::Retryable(ErrorClass::Http(503))
}

#[test]
fn a_call_dropped_in_its_sleep_drops_the_sleep_and_the_last_error() {
    let sleeps = Arc::new(());
    let errors = Arc::new(());
    let sleeps_in_policy = Arc::clone(&sleeps);
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(4)
        .with_clock(ManualClock::new(0))
        .with_seed(1)
        .with_sleeper(move |_: Duration| HeldSleep {
            _held: Arc::clone(&sleeps_in_policy),
        })
        .build()
        .unwrap();
    let call = policy.call_with("provider", classify);
    let errors_in_call = Arc::clone(&errors);
    let mut fut = Box::pin(call.run(move |_| {
        let error = HeldError(Arc::clone(&errors_in_call));
        async move { Err::<u32, _>(error) }
    }));
    let mut cx = Context::from_waker(Waker::noop());
    // the first attempt fails, and the loop waits in its first sleep
    assert!(fut.as_mut().poll(&mut cx).is_pending());
    assert!(fut.as_mut().poll(&mut cx).is_pending());
    // besides the test's own share, the policy's sleeper holds one and the
    // pending sleep another; the operation holds one of `errors`, the failed
    // attempt's error another
    assert_eq!(Arc::strong_count(&sleeps), 3);
    assert_eq!(Arc::strong_count(&errors), 3);
    drop(fut);
    assert_eq!(
        Arc::strong_count(&sleeps),
        2,
        "the pending sleep was dropped"
    );
    assert_eq!(Arc::strong_count(&errors), 1, "the last error was dropped");
}

#[test]
fn a_call_dropped_in_an_attempt_that_waits_drops_it_and_the_last_error() {
    let attempts = Arc::new(());
    let policy = RetryPolicy::builder()
        .classic()
        .with_max_attempts(4)
        .with_clock(ManualClock::new(0))
        .with_sleeper(|_: Duration| core::future::ready(()))
        .build()
        .unwrap();
    let call = policy.call_with("provider", classify);
    let attempts_in_call = Arc::clone(&attempts);
    let mut fut = Box::pin(call.run(move |n| {
        let held = Arc::clone(&attempts_in_call);
        async move {
            if n == 1 {
                return Err(HeldError(held));
            }
            // the second attempt waits for good, holding its share
            let _held = held;
            pending::<()>().await;
            Ok(n)
        }
    }));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(fut.as_mut().poll(&mut cx).is_pending());
    // the test's own share, the operation's, the second attempt's, and the
    // first attempt's error, kept as the last error
    assert_eq!(Arc::strong_count(&attempts), 4);
    drop(fut);
    // the attempt is a field of the call's future; the last error lives in the
    // loop's state, which the future drops by hand
    assert_eq!(Arc::strong_count(&attempts), 1);
}
