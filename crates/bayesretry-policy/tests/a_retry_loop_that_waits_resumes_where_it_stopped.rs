//! The retry loop runs on a state made on the stack and moves it into a box
//! the first time it must wait: a call whose sleeps and attempts each wait
//! once, at every step of the loop, still ends with the right answer after the
//! right number of attempts, and one whose waits are all ready ends in a
//! single poll. With a per-attempt timeout, the timer that each attempt makes
//! moves into the box with the rest of the state and still guards the attempt.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::cell::Cell;
use core::future::{Future, ready};
use core::pin::{Pin, pin};
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use bayesretry_policy::{HttpStatus, ManualClock, RetryError, RetryErrorKind, RetryPolicy};

/// A future that is pending at its first poll and ready with `value` at the
/// next.
struct PendOnce<T> {
    value: Option<T>,
    polled: bool,
}

impl<T> PendOnce<T> {
    fn new(value: T) -> Self {
        PendOnce {
            value: Some(value),
            polled: false,
        }
    }
}

impl<T: Unpin> Future for PendOnce<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        if !self.polled {
            self.polled = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        match self.value.take() {
            Some(value) => Poll::Ready(value),
            None => Poll::Pending,
        }
    }
}

/// Classic mode, four attempts; each sleep waits once if `waiting_sleeps`,
/// else is ready at once.
fn policy(waiting_sleeps: bool) -> RetryPolicy {
    let builder = RetryPolicy::builder()
        .classic()
        .with_max_attempts(4)
        .with_clock(ManualClock::new(0));
    let builder = if waiting_sleeps {
        builder.with_sleeper(|_: Duration| PendOnce::new(()))
    } else {
        builder.with_sleeper(|_: Duration| ready(()))
    };
    builder.build().unwrap()
}

/// Polls `fut` until it is ready, at most 100 times; its output and the
/// number of polls.
fn poll_to_end<F: Future>(fut: F) -> (F::Output, u32) {
    let mut fut = pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    for polls in 1..=100 {
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return (out, polls);
        }
    }
    panic!("the call did not finish in 100 polls");
}

#[test]
fn a_call_that_waits_at_every_step_ends_as_one_that_never_waits() {
    for (waiting_sleeps, waiting_attempts) in
        [(false, false), (true, false), (false, true), (true, true)]
    {
        let policy = policy(waiting_sleeps);
        let attempts = Cell::new(0_u32);
        let op = |attempt: u32| {
            attempts.set(attempts.get() + 1);
            let outcome = if attempt < 4 {
                Err(HttpStatus(503))
            } else {
                Ok(attempt)
            };
            let mut answer = PendOnce::new(outcome);
            // marked as polled already, it answers at its first poll
            answer.polled = !waiting_attempts;
            answer
        };
        let (out, polls) = poll_to_end(policy.run("provider", op));
        let case = (waiting_sleeps, waiting_attempts);
        assert_eq!(out.ok(), Some(4), "{case:?}");
        assert_eq!(attempts.get(), 4, "{case:?}");
        // one poll, and one more for each wait: three sleeps, four attempts
        let waits = if waiting_sleeps { 3 } else { 0 } + if waiting_attempts { 4 } else { 0 };
        assert_eq!(polls, 1 + waits, "{case:?}");
    }
}

/// A sleep that is pending `polls` times and then ready; `None`: never ready.
struct Sleep {
    polls: Option<u32>,
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.polls {
            Some(0) => Poll::Ready(()),
            Some(n) => {
                self.polls = Some(n - 1);
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            None => Poll::Pending,
        }
    }
}

#[test]
fn an_attempt_timer_made_before_the_state_is_boxed_still_guards_its_attempt() {
    const HOUR: Duration = Duration::from_secs(3600);
    for limit in [HOUR, Duration::from_millis(250)] {
        // backoff sleeps wait once; an attempt's timer for its hour never
        // ends, and one for 250 ms is over at once, so an attempt that is not
        // ready at its first poll times out
        let policy = RetryPolicy::builder()
            .classic()
            .with_max_attempts(4)
            .with_clock(ManualClock::new(0))
            .with_attempt_timeout(limit)
            .with_sleeper(|delay: Duration| Sleep {
                polls: match delay {
                    d if d == HOUR => None,
                    d if d == Duration::from_millis(250) => Some(0),
                    _ => Some(1),
                },
            })
            .build()
            .unwrap();
        let attempts = Cell::new(0_u32);
        let op = |attempt: u32| {
            attempts.set(attempts.get() + 1);
            PendOnce::new(if attempt < 4 {
                Err(HttpStatus(503))
            } else {
                Ok(attempt)
            })
        };
        let (out, polls) = poll_to_end(policy.run("provider", op));
        assert_eq!(attempts.get(), 4, "{limit:?}");
        if limit == HOUR {
            assert_eq!(out.ok(), Some(4));
            // one poll, one more for each of three sleeps and four attempts
            assert_eq!(polls, 8);
        } else {
            // every attempt timed out, the fourth ending the call
            match out.map_err(RetryError::into_kind) {
                Err(RetryErrorKind::AttemptTimedOut {
                    timeout, attempts, ..
                }) => assert_eq!((timeout, attempts), (limit, 4)),
                other => panic!("expected a timed-out call, got {other:?}"),
            }
        }
    }
}
