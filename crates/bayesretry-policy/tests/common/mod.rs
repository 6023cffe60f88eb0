//! What several tests share.
#![allow(dead_code, reason = "each test file uses only some of these helpers")]

use core::future::Future;
use core::pin::{Pin, pin};
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use bayesretry_budget::{FixedWindowBudget, FixedWindowConfig};
use bayesretry_policy::{
    Builder, CancelToken, Classification, ErrorClass, HttpStatus, ManualClock, RetryError,
    RetryErrorKind, RetryPolicy, Sleeper, VirtualSleeper,
};

/// A minute of healthy traffic at endpoint `api`: ten calls a second, each
/// succeeding at its first attempt, on the manual `clock`.
pub(crate) fn healthy_minute(policy: &RetryPolicy, clock: &ManualClock) {
    healthy_calls(policy, clock, 600, Duration::from_millis(100));
}

/// Five minutes of a quiet endpoint's healthy traffic at `api`: a call every
/// 5 s, each succeeding at its first attempt, on the manual `clock`.
pub(crate) fn quiet_five_minutes(policy: &RetryPolicy, clock: &ManualClock) {
    healthy_calls(policy, clock, 60, Duration::from_secs(5));
}

/// `calls` calls at endpoint `api`, one every `every` on the manual `clock`,
/// each succeeding at its first attempt.
fn healthy_calls(policy: &RetryPolicy, clock: &ManualClock, calls: u32, every: Duration) {
    for _ in 0..calls {
        assert!(
            policy
                .run_blocking("api", |_| Ok::<(), HttpStatus>(()))
                .is_ok()
        );
        clock.advance(every);
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

/// An operation whose first attempt fails with a 503 and whose second answers
/// its attempt number.
pub(crate) fn fails_once(attempt: u32) -> Result<u32, HttpStatus> {
    if attempt == 1 {
        Err(HttpStatus(503))
    } else {
        Ok(attempt)
    }
}

/// A classic policy of three attempts on virtual time, whose budget grants
/// exactly one retry in the (long) window: what is left to set, then build.
#[expect(clippy::unwrap_used, reason = "the window's rules are valid")]
pub(crate) fn one_retry_of_budget() -> Builder {
    let rules = FixedWindowConfig::new()
        .with_max_cost_per_window(1)
        .with_window_ms(3_600_000)
        .build()
        .unwrap();
    RetryPolicy::builder()
        .classic()
        .with_max_attempts(3)
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .with_budget(FixedWindowBudget::new(rules))
}

/// A blocking call at `api` whose attempt fails with a 503 while the call is
/// cancelled, "shutting down": the signal comes while the attempt is under way.
pub(crate) fn cancelled_during_its_attempt(
    policy: &RetryPolicy,
) -> Result<u32, RetryError<HttpStatus>> {
    let token = CancelToken::new();
    let cancel = token.clone();
    policy.call("api").with_cancel(token).run_blocking(|_| {
        cancel.cancel("shutting down");
        Err::<u32, _>(HttpStatus(503))
    })
}

/// A sleep that yields once before it ends, so that the call waiting on it is
/// held in its future: the test acts between the two polls.
pub(crate) struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// A sleeper that advances `clock` by the delay when the sleep is made, and
/// whose sleep yields once before it ends.
pub(crate) fn advances_and_yields_once(clock: &ManualClock) -> impl Sleeper {
    let clock = clock.clone();
    move |delay: Duration| {
        clock.advance(delay);
        YieldOnce(false)
    }
}

/// A server's reply to an attempt: its status, and the wait it asked for
/// (Retry-After), if it sent one.
pub(crate) type Reply = (u16, Option<Duration>);

/// Classifies a [`Reply`]: retryable by its status, with the server's wait.
pub(crate) fn classify_reply(reply: &Reply) -> Classification {
    let class = Classification::Retryable(ErrorClass::Http(reply.0));
    match reply.1 {
        Some(wait) => class.with_retry_after(wait),
        None => class,
    }
}

/// A call to "api" answered 429 with a wait of `wait`, which its caller does
/// not retry (a `should_retry` hook declines): the endpoint is held for `wait`.
pub(crate) fn told_to_wait(policy: &RetryPolicy, wait: Duration) {
    let result = policy
        .call_with("api", classify_reply)
        .should_retry(|_| false)
        .run_blocking(|_| Err::<(), Reply>((429, Some(wait))));
    assert!(result.is_err(), "{result:?}");
}

/// The time a server's hold had left, and the attempts made, if the call
/// ended on the hold.
pub(crate) fn held_for<T>(result: &Result<T, RetryError<Reply>>) -> Option<(Duration, u32)> {
    match result.as_ref().map_err(RetryError::kind) {
        Err(RetryErrorKind::ServerHold {
            retry_after,
            attempts,
            ..
        }) => Some((*retry_after, *attempts)),
        _ => None,
    }
}
