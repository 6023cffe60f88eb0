//! What several tests share.
#![allow(dead_code, reason = "each test file uses only some of these helpers")]

use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use bayesretry_policy::{HttpStatus, ManualClock, RetryPolicy};

/// A minute of healthy traffic at endpoint `api`: ten calls a second, each
/// succeeding at its first attempt, on the manual `clock`.
pub(crate) fn healthy_minute(policy: &RetryPolicy, clock: &ManualClock) {
    for _ in 0..600 {
        assert!(
            policy
                .run_blocking("api", |_| Ok::<(), HttpStatus>(()))
                .is_ok()
        );
        clock.advance(Duration::from_millis(100));
    }
}

/// Polls a future whose every wait is virtual (ready at once) to its end; a
/// future still pending after a thousand polls fails the test.
#[expect(clippy::panic, reason = "a test fails by panicking")]
pub(crate) fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    // bounded: a virtual-time call finishes within a few polls
    for _ in 0..1_000 {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return out;
        }
    }
    panic!("a virtual-time call did not finish");
}
