//! An attempt may see the call's token cancelled before it sends anything (an
//! HTTP client reading what is left of the last failed response first) and
//! stop. Marked with `Call::cancelled_before_sending`, such a failure ends the
//! call as `Cancelled`, as a cancellation before the attempt began would: the
//! retry it was to be is not learned as failed, no decision is made for it,
//! and the retry budget gets its charge back; a half-open breaker neither
//! counts it nor keeps its probe slot. In the async loop as in the blocking one.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use std::sync::Mutex;

use bayesretry_policy::{
    CancelToken, Classification, Classify, Context, Decision, ErrorClass, HttpStatus, Observer,
    RetryErrorKind, RetryPolicy,
};
use common::one_retry_of_budget;

/// An attempt's failure: a status, or stopped before sending anything.
#[derive(Debug, PartialEq)]
enum Failed {
    Status(HttpStatus),
    Unsent,
}

impl Classify for Failed {
    fn classify(&self) -> Classification {
        match self {
            Failed::Status(status) => status.classify(),
            // nothing was sent: nothing to retry
            Failed::Unsent => Classification::Permanent,
        }
    }
}

/// An outcome the observer is told of: the context's attempt and class, and
/// whether the attempt after it succeeded.
type Outcome = (u32, ErrorClass, bool);

/// What the observer is told: decisions, and outcomes learned.
#[derive(Clone, Default)]
struct Told(Arc<Mutex<(Vec<Decision>, Vec<Outcome>)>>);

impl Observer for Told {
    fn on_decision(&self, decision: &Decision, _ctx: &Context<'_>) {
        self.0.lock().unwrap().0.push(*decision);
    }

    fn on_observe(&self, ctx: &Context<'_>, success: bool) {
        let outcome = (ctx.attempt(), ctx.error_class(), success);
        self.0.lock().unwrap().1.push(outcome);
    }
}

impl Told {
    fn decisions(&self) -> usize {
        self.0.lock().unwrap().0.len()
    }

    fn outcomes(&self) -> Vec<Outcome> {
        self.0.lock().unwrap().1.clone()
    }
}

/// A policy of one retry in its budget, and what its observer is told.
fn one_retry_told() -> (RetryPolicy, Told) {
    let told = Told::default();
    let policy = one_retry_of_budget()
        .with_observer(told.clone())
        .build()
        .unwrap();
    (policy, told)
}

/// A call at `api` whose first attempt fails with a 503 and whose second
/// sees `token` cancelled before it sends, and stops, marked or not.
fn unsent_retry(
    policy: &RetryPolicy,
    token: &CancelToken,
    marked: bool,
) -> Result<u32, bayesretry_policy::RetryError<Failed>> {
    let mut call = policy.call::<Failed>("api").with_cancel(token.clone());
    if marked {
        call = call.cancelled_before_sending(|failed| *failed == Failed::Unsent);
    }
    call.run_blocking(|attempt| match attempt {
        1 => Err(Failed::Status(HttpStatus(503))),
        _ => {
            // what the attempt did first, before it would send: the cancel
            token.cancel("shutting down");
            Err(Failed::Unsent)
        }
    })
}

#[test]
fn the_call_ends_cancelled_with_the_unsent_attempt_s_error() {
    let (policy, told) = one_retry_told();
    let token = CancelToken::new();

    let out = unsent_retry(&policy, &token, true);

    match out.map_err(bayesretry_policy::RetryError::into_kind) {
        Err(RetryErrorKind::Cancelled { reason, last_error }) => {
            assert_eq!(reason, "shutting down");
            assert_eq!(last_error, Some(Failed::Unsent));
        }
        other => panic!("not cancelled: {other:?}"),
    }
    // the retry after the 503 was decided and told; the unsent attempt was
    // neither decided on nor learned as that retry's outcome
    assert_eq!(told.decisions(), 1);
    assert_eq!(told.outcomes(), []);
}

#[test]
fn the_unsent_retry_gives_its_budget_charge_back() {
    let policy = one_retry_of_budget().build().unwrap();
    unsent_retry(&policy, &CancelToken::new(), true).unwrap_err();

    // the budget grants one retry in its window: it is there again
    let next = policy.run_blocking("api", common::fails_once);
    assert_eq!(
        next.unwrap(),
        2,
        "the retry was refused: the charge was kept"
    );
}

#[test]
fn a_learning_policy_does_not_learn_the_retry_that_never_went_out() {
    let told = Told::default();
    let policy = RetryPolicy::builder()
        .with_seed(3)
        .with_observer(told.clone())
        .with_virtual_time(bayesretry_policy::VirtualSleeper::new(
            bayesretry_policy::ManualClock::new(0),
        ))
        .build()
        .unwrap();
    let ctx = Context::new("api", 1, ErrorClass::Http(503));
    let before = policy.posterior(&ctx);

    unsent_retry(&policy, &CancelToken::new(), true).unwrap_err();

    assert_eq!(told.outcomes(), []);
    assert_eq!(policy.posterior(&ctx), before);
}

#[test]
fn unmarked_the_unsent_attempt_is_learned_as_the_retry_failing() {
    // what the mark is for: without it the attempt's error is classified
    // (permanent here), and the retry that never went out is learned as failed
    let (policy, told) = one_retry_told();

    let out = unsent_retry(&policy, &CancelToken::new(), false);

    assert!(
        matches!(
            out.map_err(bayesretry_policy::RetryError::into_kind),
            Err(RetryErrorKind::Permanent(Failed::Unsent))
        ),
        "the mark is off"
    );
    assert_eq!(told.outcomes(), [(1, ErrorClass::Http(503), false)]);
}

#[test]
fn a_marked_error_while_the_token_is_not_cancelled_is_an_ordinary_failure() {
    let (policy, told) = one_retry_told();
    let token = CancelToken::new();

    let out = policy
        .call::<Failed>("api")
        .with_cancel(token)
        .cancelled_before_sending(|failed| *failed == Failed::Unsent)
        .run_blocking(|attempt| match attempt {
            1 => Err::<u32, _>(Failed::Status(HttpStatus(503))),
            _ => Err(Failed::Unsent),
        });

    assert!(
        matches!(
            out.map_err(bayesretry_policy::RetryError::into_kind),
            Err(RetryErrorKind::Permanent(Failed::Unsent))
        ),
        "not cancelled: the error is classified as itself"
    );
    assert_eq!(told.outcomes(), [(1, ErrorClass::Http(503), false)]);
}

#[test]
fn the_async_loop_ends_an_unsent_attempt_as_the_blocking_one_does() {
    let (policy, told) = one_retry_told();
    let token = CancelToken::new();
    let pressed = token.clone();

    let out = common::block_on(
        policy
            .call::<Failed>("api")
            .with_cancel(token.clone())
            .cancelled_before_sending(|failed| *failed == Failed::Unsent)
            .run(|attempt| {
                let pressed = pressed.clone();
                async move {
                    match attempt {
                        1 => Err::<u32, _>(Failed::Status(HttpStatus(503))),
                        _ => {
                            pressed.cancel("shutting down");
                            Err(Failed::Unsent)
                        }
                    }
                }
            }),
    );

    match out.map_err(bayesretry_policy::RetryError::into_kind) {
        Err(RetryErrorKind::Cancelled { reason, last_error }) => {
            assert_eq!(reason, "shutting down");
            assert_eq!(last_error, Some(Failed::Unsent));
        }
        other => panic!("not cancelled: {other:?}"),
    }
    assert_eq!(told.decisions(), 1);
    assert_eq!(told.outcomes(), []);
    // the budget's one retry is there again
    let next = policy.run_blocking("api", common::fails_once);
    assert_eq!(next.unwrap(), 2, "the charge was kept");
}

#[test]
fn an_unsent_probe_hands_its_slot_back_and_leaves_the_breaker_half_open() {
    use bayesretry_breaker::State;
    let clock = bayesretry_policy::ManualClock::new(0);
    let policy = RetryPolicy::builder()
        .classic()
        .with_breaker(bayesretry_breaker::Config::new())
        .with_max_attempts(1)
        .with_virtual_time(bayesretry_policy::VirtualSleeper::new(clock.clone()))
        .build()
        .unwrap();
    let mut until = None;
    for _ in 0..100 {
        let _ = policy.run_blocking("api", |_| Err::<(), _>(HttpStatus(503)));
        if let Some(State::Open { until_ms }) = policy.breaker_state("api") {
            until = Some(until_ms);
            break;
        }
    }
    clock.set(until.expect("the breaker never opened"));
    let token = CancelToken::new();

    // the probe stops unsent: neither a success nor a failure of the endpoint
    let probe = policy
        .call::<Failed>("api")
        .with_cancel(token.clone())
        .cancelled_before_sending(|failed| *failed == Failed::Unsent)
        .run_blocking(|_| -> Result<u32, Failed> {
            token.cancel("shutting down");
            Err(Failed::Unsent)
        });
    assert!(
        matches!(
            probe.map_err(bayesretry_policy::RetryError::into_kind),
            Err(RetryErrorKind::Cancelled { .. })
        ),
        "not cancelled"
    );
    assert!(
        matches!(policy.breaker_state("api"), Some(State::HalfOpen { .. })),
        "the breaker counted the unsent probe: {:?}",
        policy.breaker_state("api")
    );

    // the slot is free: the next call probes at once, and closes the breaker
    clock.advance(core::time::Duration::from_millis(1));
    let next = policy.run_blocking("api", |_| Ok::<_, HttpStatus>(7));
    assert_eq!(next.ok(), Some(7));
    assert_eq!(policy.breaker_state("api"), Some(State::Closed));
}
