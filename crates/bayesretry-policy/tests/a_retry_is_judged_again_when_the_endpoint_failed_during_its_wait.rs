//! A retry is decided on the evidence at the failure, then waits for its
//! backoff. If other calls to the endpoint fail during that wait, the failure
//! run the retry was judged on has grown, and the retry is judged again before
//! it goes out: in the first seconds of an outage, a retry that looked good at
//! the first failure is no longer sent once the run says the endpoint is down.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use core::time::Duration;
use std::sync::{Mutex, OnceLock};

use bayesretry_policy::{
    BlockingSleeper, Context, Decision, HttpStatus, ManualClock, Observer, Reason, RetryError,
    RetryErrorKind, RetryPolicy,
};

mod common;
use common::healthy_minute;

/// A sleeper that moves a manual clock; on the first wait of the outer call,
/// when told to, it runs `others` failing calls to the same endpoint (their
/// own waits pass without side effects).
struct Busy {
    clock: ManualClock,
    policy: OnceLock<RetryPolicy>,
    others: u32,
    /// Time that passes after the others, during the same wait.
    overshoot: Duration,
    busy: AtomicBool,
    sleeps: AtomicU32,
}

impl BlockingSleeper for Busy {
    fn sleep_blocking(&self, delay: Duration) {
        self.clock.advance(delay);
        if self.busy.swap(true, Ordering::SeqCst) {
            return;
        }
        self.sleeps.fetch_add(1, Ordering::SeqCst);
        if let Some(policy) = self.policy.get() {
            for _ in 0..self.others {
                let _ = policy.run_blocking("api", |_| Err::<(), _>(HttpStatus(503)));
                self.clock.advance(Duration::from_millis(10));
            }
        }
        self.clock.advance(self.overshoot);
        self.busy.store(false, Ordering::SeqCst);
    }
}

/// The stop decisions the observer was told of.
#[derive(Clone, Default)]
struct Stops(Arc<Mutex<Vec<Reason>>>);

impl Observer for Stops {
    fn on_decision(&self, decision: &Decision, _ctx: &Context<'_>) {
        if !decision.retry() {
            self.0.lock().unwrap().push(decision.reason());
        }
    }
}

/// The default policy after a healthy minute on "api", whose outer call's
/// first wait runs `others` failing calls; the outer call's result, its
/// attempts and the stops the observer saw.
fn outer_call(others: u32) -> (Result<(), RetryError<HttpStatus>>, u32, Vec<Reason>) {
    outer_call_with(others, Duration::ZERO, None)
}

/// [`outer_call`], with `overshoot` more passing during the first wait and
/// the policy's `max_elapsed`.
fn outer_call_with(
    others: u32,
    overshoot: Duration,
    max_elapsed: Option<Duration>,
) -> (Result<(), RetryError<HttpStatus>>, u32, Vec<Reason>) {
    let clock = ManualClock::new(0);
    let sleeper = Arc::new(Busy {
        clock: clock.clone(),
        policy: OnceLock::new(),
        others,
        overshoot,
        busy: AtomicBool::new(false),
        sleeps: AtomicU32::new(0),
    });
    let stops = Stops::default();
    let mut builder = RetryPolicy::builder()
        .with_clock(clock.clone())
        .with_blocking_sleeper(Shared(Arc::clone(&sleeper)))
        .with_observer(stops.clone())
        .with_seed(5);
    if let Some(max_elapsed) = max_elapsed {
        builder = builder.with_max_elapsed(max_elapsed);
    }
    let policy = builder.build().unwrap();
    healthy_minute(&policy, &clock);
    assert!(sleeper.policy.set(policy.clone()).is_ok());
    stops.0.lock().unwrap().clear();
    let mut attempts: u32 = 0;
    let result = policy.run_blocking("api", |_| {
        attempts += 1;
        Err::<(), _>(HttpStatus(503))
    });
    // every wait of the outer call is counted (the inner calls' are not)
    assert_eq!(
        sleeper.sleeps.load(Ordering::SeqCst),
        attempts.saturating_sub(1).max(1)
    );
    let stops = stops.0.lock().unwrap().clone();
    (result, attempts, stops)
}

/// `Arc<Busy>` as the policy's sleeper.
struct Shared(Arc<Busy>);

impl BlockingSleeper for Shared {
    fn sleep_blocking(&self, delay: Duration) {
        self.0.sleep_blocking(delay);
    }
}

#[test]
fn a_run_that_grew_during_the_wait_stops_the_retry_before_it_goes_out() {
    let (result, attempts, stops) = outer_call(6);
    // the first failure after a healthy minute: a retry, decided and waited
    // for; meanwhile six more calls failed, and the run now says down
    assert_eq!(attempts, 1, "the retry never went out");
    let Err(RetryErrorKind::Exhausted {
        attempts: 1,
        decision,
        ..
    }) = result.map_err(RetryError::into_kind)
    else {
        panic!("exhausted after one attempt");
    };
    assert_eq!(decision.reason(), Reason::NegativeExpectedValue);
    assert!(decision.probability() < 0.1, "{decision:?}");
    // the observer heard of the stop: the inner calls' and the outer one's
    assert_eq!(stops.last(), Some(&Reason::NegativeExpectedValue));
}

#[test]
fn a_quiet_wait_lets_the_retry_go_out_as_decided() {
    let (result, attempts, _) = outer_call(0);
    // nothing failed meanwhile: the retry goes out, and so do the ones after
    // it until the call's own run says down or the cap is reached
    assert!(attempts >= 2, "{attempts}");
    assert!(result.is_err());
}

#[test]
fn a_deadline_that_passed_during_the_wait_ends_the_call_as_a_deadline() {
    // as above, and the call's 2 s deadline passes during the wait
    let (result, attempts, _) =
        outer_call_with(6, Duration::from_secs(3), Some(Duration::from_secs(2)));
    assert_eq!(attempts, 1, "the retry never went out");
    match result.map_err(RetryError::into_kind) {
        Err(RetryErrorKind::DeadlineExceeded {
            attempts: 1,
            decision,
            ..
        }) => assert_eq!(decision.reason(), Reason::Deadline),
        other => panic!("expected the deadline, got {other:?}"),
    }
}

#[test]
fn a_retry_after_a_timed_out_attempt_is_judged_again_too() {
    // as the first test, with the outer call's attempt cut off by its timeout:
    // the retry that follows a timeout waits as long, on evidence as stale
    let clock = ManualClock::new(0);
    let policy_slot: Arc<OnceLock<RetryPolicy>> = Arc::default();
    let waits = Arc::new(AtomicU32::new(0));
    let sleeper = {
        let (clock, policy_slot, waits) =
            (clock.clone(), Arc::clone(&policy_slot), Arc::clone(&waits));
        move |delay: Duration| {
            clock.advance(delay);
            // the first wait is the attempt's timer; the second, the backoff
            if waits.fetch_add(1, Ordering::SeqCst) == 1 {
                if let Some(policy) = policy_slot.get() {
                    for _ in 0..6 {
                        let _ = policy
                            .call::<HttpStatus>("api")
                            .should_retry(|_| false)
                            .run_blocking(|_| Err::<(), _>(HttpStatus(503)));
                        clock.advance(Duration::from_millis(10));
                    }
                }
            }
            core::future::ready(())
        }
    };
    let policy = RetryPolicy::builder()
        .with_clock(clock.clone())
        .with_sleeper(sleeper)
        .with_blocking_sleeper(bayesretry_policy::VirtualSleeper::new(clock.clone()))
        .with_attempt_timeout(Duration::from_secs(2))
        .with_seed(5)
        .build()
        .unwrap();
    healthy_minute(&policy, &clock);
    assert!(policy_slot.set(policy.clone()).is_ok());
    let mut attempts: u32 = 0;
    let result = common::block_on(policy.run("api", |_| {
        attempts += 1;
        core::future::pending::<Result<(), HttpStatus>>()
    }));
    assert_eq!(attempts, 1, "the retry never went out");
    assert_eq!(waits.load(Ordering::SeqCst), 2, "a timer and a backoff");
    let Err(RetryErrorKind::AttemptTimedOut {
        timeout,
        attempts: 1,
        decision,
        vetoed: false,
    }) = result.map_err(RetryError::into_kind)
    else {
        panic!("a timed-out attempt, not retried");
    };
    assert_eq!(timeout, Duration::from_secs(2));
    assert_eq!(decision.reason(), Reason::NegativeExpectedValue);
}
