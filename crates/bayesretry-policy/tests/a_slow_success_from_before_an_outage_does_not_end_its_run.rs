//! A slow call that began before an outage and succeeds inside it (an LLM
//! request served just before the provider fell over) does not end the run of
//! failures the outage began: the breaker opens after as many failures as it
//! would have without it. A call that began inside the outage and succeeds
//! does end the run. Virtual time throughout.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

use alloc::sync::Arc;
use core::future::Future;
use core::pin::{Pin, pin};
use core::sync::atomic::{AtomicBool, Ordering};
use core::task::{Context, Poll, Waker};
use core::time::Duration;

use bayesretry_breaker::State;
use bayesretry_policy::{HttpStatus, ManualClock, RetryPolicy, VirtualSleeper};

mod common;
use common::healthy_minute;

/// An attempt that stays pending until `done` is set, then succeeds.
struct Slow(Arc<AtomicBool>);

impl Future for Slow {
    type Output = Result<(), HttpStatus>;
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        match self.0.load(Ordering::Acquire) {
            true => Poll::Ready(Ok(())),
            false => Poll::Pending,
        }
    }
}

/// The default policy on virtual time, after a minute of healthy traffic.
fn warmed() -> (RetryPolicy, ManualClock) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let clock = sleeper.clock().clone();
    let policy = RetryPolicy::builder()
        .with_virtual_time(sleeper)
        .with_seed(5)
        .build()
        .unwrap();
    healthy_minute(&policy, &clock);
    (policy, clock)
}

/// One call into the outage: every attempt fails with a 503.
fn outage_call(policy: &RetryPolicy, clock: &ManualClock) {
    let _ = policy.run_blocking("api", |_| Err::<(), _>(HttpStatus(503)));
    clock.advance(Duration::from_millis(100));
}

/// One ordinary failure, ended by the retry's success (an endpoint that
/// fails one call in a hundred does this now and then).
fn a_blip(policy: &RetryPolicy, clock: &ManualClock) {
    let result = policy.run_blocking("api", |attempt| match attempt {
        1 => Err(HttpStatus(503)),
        _ => Ok(()),
    });
    assert!(result.is_ok());
    clock.advance(Duration::from_millis(100));
}

/// Where the slow call begins, if there is one.
#[derive(Clone, Copy, PartialEq)]
enum SlowCall {
    None,
    BeforeTheBlip,
    AfterTheOutageBegan,
}

/// Outage calls until the breaker opens, with the slow call succeeding after
/// the outage's third call.
fn calls_until_open(slow: SlowCall) -> usize {
    let (policy, clock) = warmed();
    let done = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&done);
    let mut slow_call = pin!(policy.run("api", move |_| Slow(Arc::clone(&flag))));
    let mut cx = Context::from_waker(Waker::noop());
    if slow == SlowCall::BeforeTheBlip {
        assert!(slow_call.as_mut().poll(&mut cx).is_pending());
    }
    a_blip(&policy, &clock);
    let mut calls = 0;
    while policy.breaker_state("api") == Some(State::Closed) {
        assert!(calls < 200, "the outage opens the breaker");
        if calls == 1 && slow == SlowCall::AfterTheOutageBegan {
            assert!(slow_call.as_mut().poll(&mut cx).is_pending());
        }
        if calls == 3 && slow != SlowCall::None {
            done.store(true, Ordering::Release);
            assert!(matches!(
                slow_call.as_mut().poll(&mut cx),
                Poll::Ready(Ok(()))
            ));
        }
        outage_call(&policy, &clock);
        calls += 1;
    }
    calls
}

#[test]
fn a_success_begun_before_the_outage_does_not_delay_the_breaker() {
    let without = calls_until_open(SlowCall::None);
    assert!(without > 3, "the slow call lands inside the run: {without}");
    assert_eq!(calls_until_open(SlowCall::BeforeTheBlip), without);
}

#[test]
fn a_success_begun_inside_the_outage_starts_the_count_again() {
    let without = calls_until_open(SlowCall::None);
    let with = calls_until_open(SlowCall::AfterTheOutageBegan);
    assert!(with > without + 1, "{with} vs {without}");
}
