//! A call's future that panicked inside a poll — its operation, its attempt,
//! a hook — has ended, as one that returned its output has: polled again (a
//! loop that caught the panic and goes on polling), it stays pending and runs
//! nothing again. It never starts the call over, calling the operation
//! again for a request that already went out, nor polls an attempt that
//! panicked, nor runs the failure's hooks twice.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

mod common;

use core::cell::Cell;
use core::future::{Future, ready};
use core::panic::AssertUnwindSafe;
use core::pin::Pin;
use core::sync::atomic::{AtomicU32, Ordering};
use core::task::{Context, Poll, Waker};
use std::panic::catch_unwind;

use bayesretry_policy::{HttpStatus, ManualClock, RetryError, RetryPolicy, VirtualSleeper};

type Out = Result<u32, RetryError<HttpStatus>>;

/// A classic policy of three attempts on virtual time whose async waits are
/// over as they are made.
fn ready_waits() -> RetryPolicy {
    RetryPolicy::builder()
        .classic()
        .with_max_attempts(3)
        .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
        .build()
        .unwrap()
}

/// The same, with async waits that yield once: a call in its backoff is held
/// in its future.
fn yielding_waits() -> RetryPolicy {
    let clock = ManualClock::new(0);
    RetryPolicy::builder()
        .classic()
        .with_max_attempts(3)
        .with_virtual_time(VirtualSleeper::new(clock.clone()))
        .with_sleeper(common::advances_and_yields_once(&clock))
        .build()
        .unwrap()
}

/// Polls `call` once, catching a panic: `None` if it panicked.
fn poll_once(call: &mut Pin<Box<dyn Future<Output = Out> + '_>>) -> Option<Poll<Out>> {
    let mut cx = Context::from_waker(Waker::noop());
    catch_unwind(AssertUnwindSafe(|| call.as_mut().poll(&mut cx))).ok()
}

/// Polls `call` until it panics (at most `polls` times).
fn poll_until_it_panics(call: &mut Pin<Box<dyn Future<Output = Out> + '_>>, polls: usize) {
    for _ in 0..polls {
        match poll_once(call) {
            None => return,
            Some(Poll::Pending) => {}
            Some(Poll::Ready(out)) => panic!("ended without a panic: {out:?}"),
        }
    }
    panic!("never panicked");
}

/// After the panic the call stays pending, however often it is polled, and
/// `made` attempts stay made.
fn stays_ended(call: &mut Pin<Box<dyn Future<Output = Out> + '_>>, made: &Cell<u32>) {
    let before = made.get();
    for _ in 0..3 {
        assert!(
            matches!(poll_once(call), Some(Poll::Pending)),
            "polled again after a panic, the call did not stay pending"
        );
    }
    assert_eq!(made.get(), before, "polled again, the call attempted again");
}

#[test]
fn a_first_attempt_whose_operation_panicked_is_not_made_again() {
    let policy = ready_waits();
    let made = Cell::new(0);
    let mut call: Pin<Box<dyn Future<Output = Out>>> = Box::pin(policy.run("api", |_| {
        made.set(made.get() + 1);
        if made.get() > 0 {
            panic!("the operation panicked");
        }
        ready(Ok(1))
    }));
    poll_until_it_panics(&mut call, 1);
    assert_eq!(made.get(), 1);
    stays_ended(&mut call, &made);
}

/// An attempt that panics at its `panic_at`-th poll, pends before it, and
/// succeeds after it (as a hand-written future may).
struct PanicsAt {
    polls: u32,
    panic_at: u32,
}

impl Future for PanicsAt {
    type Output = Result<u32, HttpStatus>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.polls += 1;
        if self.polls == self.panic_at {
            panic!("the attempt panicked");
        }
        if self.polls < self.panic_at {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        Poll::Ready(Ok(7))
    }
}

#[test]
fn a_first_attempt_that_panicked_at_its_first_poll_is_not_made_again() {
    let policy = ready_waits();
    let made = Cell::new(0);
    let mut call: Pin<Box<dyn Future<Output = Out>>> = Box::pin(policy.run("api", |_| {
        made.set(made.get() + 1);
        PanicsAt {
            polls: 0,
            panic_at: 1,
        }
    }));
    poll_until_it_panics(&mut call, 1);
    stays_ended(&mut call, &made);
}

#[test]
fn a_first_attempt_that_waited_then_panicked_is_not_polled_again() {
    let policy = ready_waits();
    let made = Cell::new(0);
    let mut call: Pin<Box<dyn Future<Output = Out>>> = Box::pin(policy.run("api", |_| {
        made.set(made.get() + 1);
        PanicsAt {
            polls: 0,
            panic_at: 2,
        }
    }));
    poll_until_it_panics(&mut call, 2);
    // the attempt would succeed if polled again: the call must not take that
    // for the first attempt's outcome
    stays_ended(&mut call, &made);
}

#[test]
fn a_retry_whose_operation_panicked_does_not_start_the_call_over() {
    let policy = ready_waits();
    let made = Cell::new(0);
    let mut call: Pin<Box<dyn Future<Output = Out>>> = Box::pin(policy.run("api", |attempt| {
        made.set(made.get() + 1);
        if attempt == 2 {
            panic!("the retry's operation panicked");
        }
        ready(Err(HttpStatus(503)))
    }));
    poll_until_it_panics(&mut call, 1);
    assert_eq!(made.get(), 2);
    stays_ended(&mut call, &made);
}

#[test]
fn a_retry_that_panicked_after_its_backoff_is_not_made_again() {
    let policy = yielding_waits();
    let made = Cell::new(0);
    let mut call: Pin<Box<dyn Future<Output = Out>>> = Box::pin(policy.run("api", |attempt| {
        made.set(made.get() + 1);
        if attempt == 2 {
            panic!("the retry's operation panicked");
        }
        ready(Err(HttpStatus(503)))
    }));
    poll_until_it_panics(&mut call, 3);
    assert_eq!(made.get(), 2);
    stays_ended(&mut call, &made);
}

#[test]
fn a_hook_that_panicked_is_not_run_again_nor_the_call_started_over() {
    let policy = ready_waits();
    let made = Cell::new(0);
    let told = AtomicU32::new(0);
    let mut call: Pin<Box<dyn Future<Output = Out>>> = Box::pin(
        policy
            .call("api")
            .on_failed_attempt(|_| {
                told.fetch_add(1, Ordering::SeqCst);
                panic!("the hook panicked");
            })
            .run(|_| {
                made.set(made.get() + 1);
                ready(Err(HttpStatus(503)))
            }),
    );
    poll_until_it_panics(&mut call, 1);
    stays_ended(&mut call, &made);
    assert_eq!(told.load(Ordering::SeqCst), 1, "the hook ran again");
}

#[test]
fn a_hook_that_panicked_in_a_later_poll_is_not_run_again() {
    let policy = yielding_waits();
    let made = Cell::new(0);
    let told = AtomicU32::new(0);
    let mut call: Pin<Box<dyn Future<Output = Out>>> = Box::pin(
        policy
            .call("api")
            .on_failed_attempt(|info| {
                told.fetch_add(1, Ordering::SeqCst);
                if info.attempt == 2 {
                    panic!("the hook panicked");
                }
            })
            .run(|_| {
                made.set(made.get() + 1);
                ready(Err(HttpStatus(503)))
            }),
    );
    poll_until_it_panics(&mut call, 3);
    assert_eq!(told.load(Ordering::SeqCst), 2);
    stays_ended(&mut call, &made);
    assert_eq!(told.load(Ordering::SeqCst), 2, "the hook ran again");
}
