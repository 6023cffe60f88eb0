//! The default async sleeper needs no particular runtime: inside a tokio
//! runtime it sleeps on tokio's timer, and a call polled by any other executor
//! sleeps on a helper thread instead of panicking for want of tokio's reactor.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

use alloc::sync::Arc;
use alloc::task::Wake;
use core::future::Future;
use core::pin::pin;
use core::task::{Context, Poll, Waker};
use core::time::Duration;
use std::thread::Thread;

use bayesretry_backoff::{Config, Jitter};
use bayesretry_policy::{HttpStatus, RetryPolicy};

/// A classic policy of two attempts with a fixed delay between them, and the
/// default sleepers.
fn one_retry_after(delay: Duration) -> RetryPolicy {
    RetryPolicy::builder()
        .classic()
        .with_max_attempts(2)
        .with_backoff(
            Config::new()
                .with_base_delay(delay)
                .with_max_delay(delay)
                .with_jitter(Jitter::None),
        )
        .with_seed(1)
        .build()
        .unwrap()
}

/// Wakes the thread that polls.
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// The least executor there is: polls on this thread, parks between polls.
/// Bounded by the future's own end; the test's one sleep is a millisecond.
fn block_on<F: Future>(future: F) -> F::Output {
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

#[test]
fn a_call_polled_by_another_executor_sleeps_and_retries() {
    let policy = one_retry_after(Duration::from_millis(1));
    let mut made = 0_u32;
    let result = block_on(policy.run("provider", |attempt| {
        made += 1;
        let outcome = if attempt == 1 {
            Err(HttpStatus(503))
        } else {
            Ok(attempt)
        };
        async move { outcome }
    }));
    assert_eq!(result.ok(), Some(2));
    assert_eq!(made, 2);
}

// without the feature, the default sleeps on a helper thread everywhere
#[cfg(feature = "tokio")]
#[tokio::test(start_paused = true)]
async fn inside_a_tokio_runtime_the_sleep_is_on_tokios_timer() {
    // Tokio's paused clock moves only for its own timers: a minute passes on
    // it, at once, only if the retry's sleep is one of them.
    let policy = one_retry_after(Duration::from_secs(60));
    let start = tokio::time::Instant::now();
    let result = policy
        .run("provider", |attempt| async move {
            if attempt == 1 {
                Err(HttpStatus(503))
            } else {
                Ok(attempt)
            }
        })
        .await;
    assert_eq!(result.ok(), Some(2));
    assert_eq!(start.elapsed(), Duration::from_secs(60));
}
