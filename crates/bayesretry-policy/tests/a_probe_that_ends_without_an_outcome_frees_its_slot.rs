//! A half-open breaker lets one probe through and refuses every other call
//! until the probe reports. A probe that ends without telling whether the
//! endpoint is back hands its slot back, so the next call is let through at
//! once instead of being refused until the probe round is given up, a
//! cooldown later:
//!
//! - an attempt that ends in a permanent error (a 404, say): the breaker
//!   neither closes nor reopens on it;
//! - a call dropped while its probe attempt was in flight (an outer timeout,
//!   say);
//! - a blocking operation that panicked in its probe;
//! - an async probe whose operation panicked, in making the attempt's future
//!   or in polling it (a task that panics, caught by its runtime, drops the
//!   call);
//! - a probe whose error the call's classifier panicked on, in either loop:
//!   the breaker had not counted the failure yet.
//!
//! The slot goes back to the probe's own round: a call dropped in a probe of a
//! round the breaker has given up on frees no slot of the round that followed.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

mod common;

use core::future::{Future, Ready, pending};
use core::panic::AssertUnwindSafe;
use core::pin::Pin;
use core::task::Poll;
use core::task::{Context, Waker};
use core::time::Duration;
use std::panic::catch_unwind;

use bayesretry_breaker::State;
use bayesretry_policy::{
    HttpStatus, ManualClock, RetryError, RetryErrorKind, RetryPolicy, VirtualSleeper,
};

/// A classic policy with the breaker crate's default breaker, on `clock`, and
/// the end of the cooldown after a hard-down spell opened the breaker.
fn opened(clock: &ManualClock) -> (RetryPolicy, u64) {
    let policy = RetryPolicy::builder()
        .classic()
        .with_breaker(bayesretry_breaker::Config::new())
        .with_max_attempts(1)
        .with_virtual_time(VirtualSleeper::new(clock.clone()))
        .build()
        .unwrap();
    for _ in 0..100 {
        let _ = policy.run_blocking("api", |_| Err::<(), _>(HttpStatus(503)));
        if let Some(State::Open { until_ms }) = policy.breaker_state("api") {
            return (policy, until_ms);
        }
    }
    panic!("the breaker never opened");
}

/// Whether a call now is refused by the breaker.
fn refused(policy: &RetryPolicy) -> bool {
    let out = policy.run_blocking("api", |_| Ok::<_, HttpStatus>(0));
    matches!(
        out.as_ref().map_err(RetryError::kind),
        Err(RetryErrorKind::CircuitOpen { .. })
    )
}

/// A millisecond later, the next call is let through, and its success closes
/// the breaker.
fn the_next_call_probes_and_closes(policy: &RetryPolicy, clock: &ManualClock) {
    clock.advance(Duration::from_millis(1));
    let next = policy.run_blocking("api", |_| Ok::<_, HttpStatus>(7));
    assert_eq!(next.ok(), Some(7));
    assert_eq!(policy.breaker_state("api"), Some(State::Closed));
}

#[test]
fn the_next_call_is_admitted_after_a_probe_ends_in_a_permanent_error() {
    let clock = ManualClock::new(0);
    let (policy, until) = opened(&clock);

    // the cooldown passes; the probe gets a permanent error
    clock.set(until);
    let probe = policy.run_blocking("api", |_| Err::<(), _>(HttpStatus(404)));
    assert!(
        matches!(
            probe.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::Permanent(HttpStatus(404)))
        ),
        "{probe:?}"
    );

    the_next_call_probes_and_closes(&policy, &clock);
}

#[test]
fn a_call_dropped_during_its_probe_lets_the_next_call_probe() {
    let clock = ManualClock::new(0);
    let (policy, until) = opened(&clock);
    clock.set(until);
    let mut probe = Box::pin(policy.run("api", |_| pending::<Result<u32, HttpStatus>>()));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(probe.as_mut().poll(&mut cx).is_pending());
    assert!(matches!(
        policy.breaker_state("api"),
        Some(State::HalfOpen { .. })
    ));
    // the probe is out: any other call is refused
    assert!(refused(&policy));

    drop(probe);
    the_next_call_probes_and_closes(&policy, &clock);
}

#[test]
fn a_probe_whose_operation_panics_lets_the_next_call_probe() {
    let clock = ManualClock::new(0);
    let (policy, until) = opened(&clock);
    clock.set(until);
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        policy.run_blocking("api", |_| -> Result<u32, HttpStatus> {
            panic!("the operation panicked in its probe")
        })
    }));
    assert!(unwound.is_err());

    the_next_call_probes_and_closes(&policy, &clock);
}

/// An attempt that panics when polled.
struct Panics;

impl Future for Panics {
    type Output = Result<u32, HttpStatus>;

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Self::Output> {
        panic!("the attempt panicked in its probe")
    }
}

/// Polls `call` to its end, or until it unwinds; whether it unwound.
fn unwinds<F: Future>(call: F) -> bool {
    let mut call = Box::pin(call);
    let mut cx = Context::from_waker(Waker::noop());
    catch_unwind(AssertUnwindSafe(|| {
        // bounded: every wait here is virtual or a single yield
        for _ in 0..100 {
            if call.as_mut().poll(&mut cx).is_ready() {
                return;
            }
        }
    }))
    .is_err()
}

#[test]
fn an_async_probe_whose_attempt_panics_lets_the_next_call_probe() {
    let clock = ManualClock::new(0);
    let (policy, until) = opened(&clock);
    clock.set(until);
    assert!(unwinds(policy.run("api", |_| Panics)));

    the_next_call_probes_and_closes(&policy, &clock);
}

#[test]
fn an_async_probe_whose_operation_panics_lets_the_next_call_probe() {
    let clock = ManualClock::new(0);
    let (policy, until) = opened(&clock);
    clock.set(until);
    assert!(unwinds(
        policy.run("api", |_| -> Ready<Result<u32, HttpStatus>> {
            panic!("the operation panicked in its probe")
        })
    ));

    the_next_call_probes_and_closes(&policy, &clock);
}

/// A classic policy with `breaker`, on `clock`, that waits out a cooldown in
/// the call's future (whose sleep yields once), after a hard-down spell opened
/// the breaker.
fn opened_waiting_while_open(
    clock: &ManualClock,
    breaker: bayesretry_breaker::Config,
) -> RetryPolicy {
    let policy = RetryPolicy::builder()
        .classic()
        .with_breaker(breaker)
        .with_max_attempts(1)
        .with_clock(clock.clone())
        .with_blocking_sleeper(VirtualSleeper::new(clock.clone()))
        .with_sleeper(common::advances_and_yields_once(clock))
        .with_wait_while_open(Duration::from_secs(60))
        .build()
        .unwrap();
    for _ in 0..100 {
        let _ = policy.run_blocking("api", |_| Err::<(), _>(HttpStatus(503)));
        if matches!(policy.breaker_state("api"), Some(State::Open { .. })) {
            break;
        }
    }
    policy
}

#[test]
fn a_probe_that_panics_after_its_call_waited_for_the_breaker_lets_the_next_call_probe() {
    let clock = ManualClock::new(0);
    let policy = opened_waiting_while_open(&clock, bayesretry_breaker::Config::new());
    assert!(matches!(
        policy.breaker_state("api"),
        Some(State::Open { .. })
    ));
    // the call waits out the cooldown in its future, then is the probe
    assert!(unwinds(
        policy.run("api", |_| -> Ready<Result<u32, HttpStatus>> {
            panic!("the operation panicked in its probe")
        })
    ));
    // its slot is free at once, without waiting out the round
    assert!(
        matches!(
            policy.breaker_state("api"),
            Some(State::HalfOpen { probes: 0, .. })
        ),
        "{:?}",
        policy.breaker_state("api")
    );

    the_next_call_probes_and_closes(&policy, &clock);
}

#[test]
fn a_call_dropped_in_a_probe_of_a_round_given_up_frees_no_slot_of_the_next() {
    let clock = ManualClock::new(0);
    let (policy, until) = opened(&clock);
    let mut cx = Context::from_waker(Waker::noop());
    clock.set(until);
    let mut hung = Box::pin(policy.run("api", |_| pending::<Result<u32, HttpStatus>>()));
    assert!(hung.as_mut().poll(&mut cx).is_pending());

    // it never answers: a cooldown later its round is given up, and the next
    // call is the new round's probe
    clock.advance(Duration::from_millis(
        bayesretry_breaker::Config::new().cooldown_ms(),
    ));
    let mut current = Box::pin(policy.run("api", |_| pending::<Result<u32, HttpStatus>>()));
    assert!(current.as_mut().poll(&mut cx).is_pending());
    assert!(refused(&policy), "one probe at a time");

    // an outer timeout drops the old probe's call at last: no slot is freed
    drop(hung);
    assert!(
        refused(&policy),
        "a second probe went out beside the current one: {:?}",
        policy.breaker_state("api")
    );

    drop(current);
    the_next_call_probes_and_closes(&policy, &clock);
}

/// A classifier that panics on every error.
fn panics_on(_: &u16) -> bayesretry_policy::Classification {
    panic!("the classifier panicked on the probe's error")
}

#[test]
fn a_blocking_probe_whose_classifier_panics_lets_the_next_call_probe() {
    let clock = ManualClock::new(0);
    let (policy, until) = opened(&clock);
    clock.set(until);
    let unwound = catch_unwind(AssertUnwindSafe(|| {
        policy
            .call_with("api", panics_on)
            .run_blocking(|_| Err::<u32, _>(503))
    }));
    assert!(unwound.is_err());

    the_next_call_probes_and_closes(&policy, &clock);
}

#[test]
fn an_async_probe_whose_classifier_panics_lets_the_next_call_probe() {
    let clock = ManualClock::new(0);
    let (policy, until) = opened(&clock);
    clock.set(until);
    assert!(unwinds(
        policy
            .call_with("api", panics_on)
            .run(|_| core::future::ready(Err::<u32, _>(503)))
    ));

    the_next_call_probes_and_closes(&policy, &clock);
}

#[test]
fn a_probe_whose_classifier_panicked_polled_again_and_dropped_frees_its_slot_once() {
    let clock = ManualClock::new(0);
    let policy =
        opened_waiting_while_open(&clock, bayesretry_breaker::Config::new().with_max_probes(2));
    let probes = || match policy.breaker_state("api") {
        Some(State::HalfOpen { probes, .. }) => probes,
        other => panic!("expected half-open, got {other:?}"),
    };
    // the call waits out the cooldown in its future, then is a probe whose
    // classifier panics
    let mut call = Box::pin(
        policy
            .call_with("api", panics_on)
            .run(|_| core::future::ready(Err::<u32, _>(503))),
    );
    let mut cx = Context::from_waker(Waker::noop());
    assert!(call.as_mut().poll(&mut cx).is_pending());
    assert!(catch_unwind(AssertUnwindSafe(|| call.as_mut().poll(&mut cx))).is_err());
    assert_eq!(probes(), 0, "the probe's slot went back");
    // another call takes a slot
    let mut other = Box::pin(policy.run("api", |_| pending::<Result<u32, HttpStatus>>()));
    assert!(other.as_mut().poll(&mut cx).is_pending());
    assert_eq!(probes(), 1);
    // polled again, the call (ended by its panic) stays pending, and drops:
    // the other call's slot stays taken
    assert!(matches!(
        catch_unwind(AssertUnwindSafe(|| call.as_mut().poll(&mut cx))),
        Ok(Poll::Pending)
    ));
    drop(call);
    assert_eq!(probes(), 1, "a slot went back twice");
}
