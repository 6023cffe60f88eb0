//! What several tests share.

use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};

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
