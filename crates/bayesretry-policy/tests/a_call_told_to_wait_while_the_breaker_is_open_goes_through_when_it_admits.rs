//! `Builder::with_wait_while_open`: a call the breaker refuses waits for it,
//! within its `max_wait` and the deadline, instead of failing fast — and fails
//! fast as before when the admission cannot come in time. Virtual time
//! throughout.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::future::ready;
use core::time::Duration;

use bayesretry_breaker::State;
use bayesretry_cost::CostModel;
use bayesretry_policy::{
    Clock, HttpStatus, ManualClock, RetryError, RetryErrorKind, RetryPolicy, VirtualSleeper,
    WAIT_WHILE_OPEN_POLL,
};

mod common;
use common::block_on;

/// The default policy on virtual time, waiting up to `wait` while open (if
/// given), with a 30 s deadline; its sleeper.
fn policy(wait: Option<Duration>) -> (RetryPolicy, VirtualSleeper) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let mut builder = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_max_elapsed(Duration::from_secs(30))
        .with_seed(9);
    if let Some(wait) = wait {
        builder = builder.with_wait_while_open(wait);
    }
    (builder.build().unwrap(), sleeper)
}

/// Fails calls to "api", 100 ms apart, until its breaker opens; the time
/// left of the cooldown, in ms.
fn open_it(policy: &RetryPolicy, sleeper: &VirtualSleeper) -> u64 {
    for _ in 0..1_000 {
        let _ = policy.run_blocking("api", |_| Err::<(), _>(HttpStatus(503)));
        if let Some(State::Open { until_ms }) = policy.breaker_state("api") {
            return until_ms - sleeper.clock().now_ms();
        }
        sleeper.clock().advance(Duration::from_millis(100));
    }
    panic!("a dead endpoint opens the breaker");
}

/// Whether the call ended refused by the breaker.
fn refused<T>(result: &Result<T, RetryError<HttpStatus>>) -> bool {
    matches!(
        result.as_ref().map_err(RetryError::kind),
        Err(RetryErrorKind::CircuitOpen { .. })
    )
}

#[test]
fn without_the_setting_a_refused_call_fails_at_once() {
    let (policy, sleeper) = policy(None);
    open_it(&policy, &sleeper);
    let before = sleeper.clock().now_ms();
    let result = policy.run_blocking("api", |_| Ok::<(), HttpStatus>(()));
    assert!(refused(&result), "{result:?}");
    assert_eq!(sleeper.clock().now_ms(), before, "no time passed");
}

#[test]
fn a_waiting_call_sleeps_out_the_cooldown_and_goes_through_as_the_probe() {
    let (policy, sleeper) = policy(Some(Duration::from_secs(10)));
    let left = open_it(&policy, &sleeper);
    assert!(left > 0);
    let before = sleeper.clock().now_ms();
    let slept = sleeper.delays().len();
    let mut attempts = 0;
    let result = policy.run_blocking("api", |_| {
        attempts += 1;
        Ok::<(), HttpStatus>(())
    });
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(attempts, 1);
    // one wait, exactly to the end of the cooldown; the probe's success closed it
    assert_eq!(sleeper.delays()[slept..], [Duration::from_millis(left)]);
    assert_eq!(sleeper.clock().now_ms(), before + left);
    assert_eq!(policy.breaker_state("api"), Some(State::Closed));
}

#[test]
fn the_async_loop_waits_the_same_way() {
    let (policy, sleeper) = policy(Some(Duration::from_secs(10)));
    let left = open_it(&policy, &sleeper);
    let slept = sleeper.delays().len();
    let result = block_on(policy.run("api", |_| ready(Ok::<u32, HttpStatus>(7))));
    assert_eq!(result.ok(), Some(7));
    assert_eq!(sleeper.delays()[slept..], [Duration::from_millis(left)]);
}

#[test]
fn a_cooldown_longer_than_the_wait_allowed_fails_at_once() {
    let (policy, sleeper) = policy(Some(Duration::from_millis(1)));
    let left = open_it(&policy, &sleeper);
    assert!(left > 1, "the cooldown is at least 250 ms");
    let before = sleeper.clock().now_ms();
    let result = policy.run_blocking("api", |_| Ok::<(), HttpStatus>(()));
    let Err(RetryErrorKind::CircuitOpen { retry_after, .. }) =
        result.map_err(RetryError::into_kind)
    else {
        panic!("refused");
    };
    assert_eq!(retry_after, Some(Duration::from_millis(left)));
    assert_eq!(
        sleeper.clock().now_ms(),
        before,
        "no wait that cannot end in an admission"
    );
}

#[test]
fn a_cooldown_past_the_deadline_fails_at_once() {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_max_elapsed(Duration::from_millis(1))
        .with_wait_while_open(Duration::from_secs(60))
        .with_seed(9)
        .build()
        .unwrap();
    open_it(&policy, &sleeper);
    let before = sleeper.clock().now_ms();
    let result = policy.run_blocking("api", |_| Ok::<(), HttpStatus>(()));
    assert!(refused(&result), "{result:?}");
    assert_eq!(sleeper.clock().now_ms(), before);
}

#[test]
fn while_another_calls_probe_is_out_a_waiting_call_looks_again_every_poll() {
    let (policy, sleeper) = policy(Some(Duration::from_millis(450)));
    let left = open_it(&policy, &sleeper);
    sleeper.clock().advance(Duration::from_millis(left));
    let mut inner = None;
    // the outer call is the probe; while it is out, an inner call waits
    let outer = policy.run_blocking("api", |_| {
        let slept = sleeper.delays().len();
        let result = policy.run_blocking("api", |_| Ok::<(), HttpStatus>(()));
        inner = Some((result, sleeper.delays()[slept..].to_vec()));
        Ok::<(), HttpStatus>(())
    });
    assert!(outer.is_ok());
    let (result, delays) = inner.unwrap();
    // four looks 100 ms apart fit in 450 ms, a fifth would not: then it fails
    assert_eq!(delays, [WAIT_WHILE_OPEN_POLL; 4]);
    assert!(refused(&result), "{result:?}");
}

/// The default policy at `V/c = value`, waiting up to 10 s while open, with
/// a 30 s deadline; its sleeper.
fn valued(value: f64) -> (RetryPolicy, VirtualSleeper) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let policy = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_cost_model(CostModel::new(value, 1.0).unwrap())
        .with_max_elapsed(Duration::from_secs(30))
        .with_wait_while_open(Duration::from_secs(10))
        .with_seed(9)
        .build()
        .unwrap();
    (policy, sleeper)
}

/// Whether a call to the open "api" waited (rather than failing at once).
fn waits(policy: &RetryPolicy, sleeper: &VirtualSleeper) -> bool {
    let before = sleeper.clock().now_ms();
    let result = policy.run_blocking("api", |_| Ok::<(), HttpStatus>(()));
    let waited = sleeper.clock().now_ms() > before;
    assert_eq!(result.is_ok(), waited, "{result:?}");
    waited
}

#[test]
fn a_call_whose_attempt_would_not_pay_fails_at_once() {
    // at V = c no attempt pays: waiting would only lead to one
    let (policy, sleeper) = valued(1.0);
    open_it(&policy, &sleeper);
    assert!(!waits(&policy, &sleeper));
}

#[test]
fn the_wait_is_judged_at_the_call_s_own_price() {
    // at V/c 10 the attempt waited for pays; a call priced at V = c does not
    // wait for one that cannot pay, and an endpoint priced so neither
    let (policy, sleeper) = valued(10.0);
    open_it(&policy, &sleeper);
    let before = sleeper.clock().now_ms();
    let cheap = policy
        .call("api")
        .with_cost_model(CostModel::new(1.0, 1.0).unwrap())
        .run_blocking(|_| Ok::<(), HttpStatus>(()));
    assert!(refused(&cheap), "{cheap:?}");
    assert_eq!(sleeper.clock().now_ms(), before, "it failed at once");
    assert!(waits(&policy, &sleeper), "the policy's price waits");

    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let priced = RetryPolicy::builder()
        .with_virtual_time(sleeper.clone())
        .with_endpoint_cost("api", CostModel::new(1.0, 1.0).unwrap())
        .with_max_elapsed(Duration::from_secs(30))
        .with_wait_while_open(Duration::from_secs(10))
        .with_seed(9)
        .build()
        .unwrap();
    open_it(&priced, &sleeper);
    assert!(!waits(&priced, &sleeper));
}

/// Calls to "api", 100 ms apart for 20 s, that succeed `in_ten` times in ten.
fn history(policy: &RetryPolicy, sleeper: &VirtualSleeper, in_ten: u32) {
    for i in 0..200_u32 {
        let _ = policy.run_blocking("api", |_| match i % 10 < in_ten {
            true => Ok::<(), HttpStatus>(()),
            false => Err(HttpStatus(503)),
        });
        sleeper.clock().advance(Duration::from_millis(100));
    }
}

#[test]
fn the_wait_is_judged_at_the_rate_the_endpoint_had_before_its_outage() {
    // at V/c 2 an attempt pays above a success rate of one half: worth waiting
    // for an endpoint that succeeded nine times in ten, not for one that
    // succeeded three times in ten — however long the outage has faded the
    // breaker's evidence
    let (usually_up, sleeper) = valued(2.0);
    history(&usually_up, &sleeper, 9);
    open_it(&usually_up, &sleeper);
    assert!(waits(&usually_up, &sleeper));

    let (mostly_down, sleeper) = valued(2.0);
    history(&mostly_down, &sleeper, 3);
    open_it(&mostly_down, &sleeper);
    assert!(!waits(&mostly_down, &sleeper));
}

/// A call to "api" whose first attempt meets a 503 and whose retry succeeds:
/// its result and the attempts it made.
fn failing_once(policy: &RetryPolicy) -> (Result<(), RetryError<HttpStatus>>, u32) {
    let mut attempts = 0;
    let result = policy.run_blocking("api", |attempt| {
        attempts = attempt;
        if attempt == 1 {
            Err(HttpStatus(503))
        } else {
            Ok(())
        }
    });
    (result, attempts)
}

#[test]
fn a_waiting_call_whose_probe_fails_waits_for_the_next_probe() {
    let (policy, sleeper) = policy(Some(Duration::from_secs(10)));
    // an endpoint whose 503s pass on a retry, a call a second, until it goes down
    for _ in 0..40 {
        let (result, _) = failing_once(&policy);
        assert!(result.is_ok(), "{result:?}");
        sleeper.clock().advance(Duration::from_secs(1));
    }
    let left = open_it(&policy, &sleeper);
    let slept = sleeper.delays().len();
    // it is back, but the waiting call's probe meets the odd failure, and
    // the probe's failure opens the breaker again
    let (result, attempts) = failing_once(&policy);
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(
        attempts, 2,
        "the call waited for the next probe and made it"
    );
    let waits = &sleeper.delays()[slept..];
    assert_eq!(waits.first(), Some(&Duration::from_millis(left)));
    assert!(waits.len() >= 2, "{waits:?}");
    assert_eq!(policy.breaker_state("api"), Some(State::Closed));
}
