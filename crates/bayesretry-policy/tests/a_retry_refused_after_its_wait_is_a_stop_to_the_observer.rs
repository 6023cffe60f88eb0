//! A retry is decided, told to the observer, and then waits. If, by the end
//! of that wait, the breaker has opened or a server's hold has come that the
//! call cannot wait out, the retry is never sent: the observer (and so an
//! audit log) is told of the stop that ends the call, in the failure's
//! context, so that no retry it heard of is left without an outcome or a
//! stop. Both loops, virtual time throughout.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

use alloc::sync::Arc;
use core::future::ready;
use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;
use std::sync::Mutex;

use bayesretry_breaker::{Admission, FleetView, ProbeRound, Transition};
use bayesretry_policy::{
    Builder, Context, Decision, ErrorClass, HttpStatus, ManualClock, Observer, Reason, RetryError,
    RetryErrorKind, RetryPolicy, VirtualSleeper,
};

mod common;
use common::{Reply, block_on, classify_reply, healthy_minute, held_for, told_to_wait};

/// One decision the observer heard: the context's attempt and class, whether
/// it retries, and why.
type Heard = (u32, ErrorClass, bool, Reason);

/// An observer that keeps every decision it hears.
#[derive(Clone, Default)]
struct Decisions(Arc<Mutex<Vec<Heard>>>);

impl Decisions {
    fn take(&self) -> Vec<Heard> {
        core::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl Observer for Decisions {
    fn on_decision(&self, decision: &Decision, ctx: &Context<'_>) {
        self.0.lock().unwrap().push((
            ctx.attempt(),
            ctx.error_class(),
            decision.retry(),
            decision.reason(),
        ));
    }
}

/// The default policy on virtual time from 1 s, with `decisions` as its
/// observer, as `configure` changes it.
fn observed(decisions: &Decisions, configure: impl FnOnce(Builder) -> Builder) -> RetryPolicy {
    let sleeper = VirtualSleeper::new(ManualClock::new(1_000));
    let builder = RetryPolicy::builder()
        .with_virtual_time(sleeper)
        .with_observer(decisions.clone())
        .with_seed(5);
    configure(builder).build().unwrap()
}

/// The first attempt of a call: meanwhile another call is told to wait 9 s,
/// then this one is answered 429 with a wait of 1 s.
fn first_attempt_meets_a_longer_hold(policy: &RetryPolicy, attempt: u32) -> Result<(), Reply> {
    assert_eq!(attempt, 1, "the retry is never sent");
    told_to_wait(policy, Duration::from_secs(9));
    Err((429, Some(Duration::from_secs(1))))
}

/// What the observer must have heard of the call that met the longer hold:
/// the other call's stop (its own 9 s would cross its deadline), the retry
/// decided on the 429, then that retry's stop.
fn heard_of_the_hold(heard: &[Heard]) {
    let limited = ErrorClass::Http(429);
    assert_eq!(
        heard,
        [
            (1, limited, false, Reason::RetryAfterPastDeadline),
            (1, limited, true, Reason::PositiveExpectedValue),
            (1, limited, false, Reason::RetryAfterPastDeadline),
        ],
    );
}

#[test]
fn a_retry_a_longer_hold_would_carry_past_the_deadline_is_told_as_that_stop() {
    let decisions = Decisions::default();
    let policy = observed(&decisions, |b| b.with_max_elapsed(Duration::from_secs(5)));
    let result = policy
        .call_with("api", classify_reply)
        .run_blocking(|attempt| first_attempt_meets_a_longer_hold(&policy, attempt));
    // the retry waited its own second; the other call's hold has 8 s left
    assert_eq!(
        held_for(&result),
        Some((Duration::from_secs(8), 1)),
        "{result:?}"
    );
    heard_of_the_hold(&decisions.take());

    // the async loop tells the same, on a policy of its own
    let decisions = Decisions::default();
    let policy = observed(&decisions, |b| b.with_max_elapsed(Duration::from_secs(5)));
    let result = block_on(
        policy
            .call_with("api", classify_reply)
            .run(|attempt| ready(first_attempt_meets_a_longer_hold(&policy, attempt))),
    );
    assert_eq!(held_for(&result), Some((Duration::from_secs(8), 1)));
    heard_of_the_hold(&decisions.take());
}

#[test]
fn a_retry_that_waits_out_the_hold_is_told_once_and_goes_out() {
    // no deadline: the hold's 8 s are within the Retry-After limit, so the
    // decided retry waits for it and is sent; the observer hears no stop
    let decisions = Decisions::default();
    let policy = observed(&decisions, |b| b);
    let mut sent = 0;
    let result = policy
        .call_with("api", classify_reply)
        .run_blocking(|attempt| {
            sent += 1;
            if attempt == 1 {
                first_attempt_meets_a_longer_hold(&policy, attempt)
            } else {
                Ok(())
            }
        });
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(sent, 2);
    let heard = decisions.take();
    assert_eq!(heard.len(), 2, "{heard:?}");
    assert!(heard.iter().all(|h| h.3 != Reason::RetryAfterPastDeadline));
}

/// A shared breaker that admits every attempt until it is told the fleet
/// opened, then refuses for 5 s from each ask; it never says it is open
/// when a decision reads it, so the retry is decided, then refused.
#[derive(Default)]
struct OpensLater {
    open: AtomicBool,
}

impl FleetView for OpensLater {
    fn admit(&self, _endpoint: &str, now_ms: u64) -> Admission {
        if self.open.load(Ordering::SeqCst) {
            Admission::Rejected {
                until_ms: now_ms.saturating_add(5_000),
            }
        } else {
            Admission::Allowed
        }
    }

    fn record(&self, _: &str, _: u64, _: bool, _: Option<ProbeRound>) {}

    fn publish(&self, _: &str, _: u64, _: Transition) {}

    fn release_probe(&self, _: &str, _: ProbeRound) {}
}

/// A healthy minute at "api", then a call whose first attempt fails with a
/// 503 as the fleet's breaker opens; the call's result and what the
/// observer heard of it.
fn opens_during_the_wait(
    wait_while_open: Option<Duration>,
    blocking: bool,
) -> (Result<(), RetryError<HttpStatus>>, Vec<Heard>) {
    let decisions = Decisions::default();
    let fleet = Arc::new(OpensLater::default());
    let shared: Arc<dyn FleetView + Send + Sync> = fleet.clone();
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let mut builder = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_shared_breaker(shared)
        .with_observer(decisions.clone())
        .with_seed(5);
    if let Some(wait) = wait_while_open {
        builder = builder.with_wait_while_open(wait);
    }
    let policy = builder.build().unwrap();
    healthy_minute(&policy, sleeper.clock());
    assert!(decisions.take().is_empty(), "no failure, no decision");
    let op = |attempt: u32| {
        assert_eq!(attempt, 1, "the retry is never sent");
        fleet.open.store(true, Ordering::SeqCst);
        Err::<(), _>(HttpStatus(503))
    };
    let result = if blocking {
        policy.run_blocking("api", op)
    } else {
        block_on(policy.run("api", |attempt| ready(op(attempt))))
    };
    (result, decisions.take())
}

#[test]
fn a_retry_a_breaker_opened_during_its_wait_refuses_is_told_as_circuit_open() {
    let unavailable = ErrorClass::Http(503);
    // failing fast, and waiting for at most 2 s when the refusal is for 5 s
    for wait_while_open in [None, Some(Duration::from_secs(2))] {
        for blocking in [true, false] {
            let (result, heard) = opens_during_the_wait(wait_while_open, blocking);
            assert!(
                matches!(
                    result.as_ref().map_err(RetryError::kind),
                    Err(RetryErrorKind::CircuitOpen { attempts: 1, .. })
                ),
                "{result:?}"
            );
            assert_eq!(
                heard,
                [
                    (1, unavailable, true, Reason::PositiveExpectedValue),
                    (1, unavailable, false, Reason::CircuitOpen),
                ],
                "waiting {wait_while_open:?}, blocking {blocking}"
            );
        }
    }
}
