//! A half-open breaker's probe that the server answers with its wait (a 429
//! with a Retry-After the policy honours) found the endpoint up and asking for
//! time: the breaker does not count it a failure and reopen for a whole
//! cooldown. The probe's slot goes back, the server's hold keeps every call off
//! the endpoint for the time asked, and the first call after it probes again.
//! With holds turned off the probe is a failure, as before. A shared
//! breaker's probe answered so is handed back to it, not told as a failure.
//! Virtual time.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

use alloc::sync::Arc;
use core::time::Duration;
use std::sync::Mutex;

use bayesretry_breaker::{Admission, FleetView, ProbeRound, State, Transition};
use bayesretry_policy::{
    Builder, ManualClock, RetryError, RetryErrorKind, RetryPolicy, VirtualSleeper,
};

mod common;
use common::{Reply, classify_reply};

/// The default policy on virtual time, with a breaker that stays open 30 s
/// (doubling after each failed probe), as `configure` changes it; its clock.
fn built(configure: impl FnOnce(Builder) -> Builder) -> (RetryPolicy, ManualClock) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let clock = sleeper.clock().clone();
    let builder = RetryPolicy::builder()
        .with_virtual_time(sleeper)
        .with_breaker(bayesretry_breaker::Config::new().with_cooldown_ms(30_000))
        .with_max_attempts(1)
        .with_seed(9);
    (configure(builder).build().unwrap(), clock)
}

/// One call at "api" whose every attempt gets `reply`; its result and the
/// attempts it made.
fn call(policy: &RetryPolicy, reply: Reply) -> (Result<(), RetryError<Reply>>, u32) {
    let mut made = 0;
    let result = policy.call_with("api", classify_reply).run_blocking(|_| {
        made += 1;
        Err::<(), Reply>(reply)
    });
    (result, made)
}

/// Calls failing with 503s, 100 ms apart, until the breaker opens; then the
/// clock moves to the end of its cooldown, when the next call probes.
fn opened_and_cooled_down(policy: &RetryPolicy, clock: &ManualClock) {
    for _ in 0..200 {
        let _ = call(policy, (503, None));
        if is_open(policy) {
            break;
        }
        clock.advance(Duration::from_millis(100));
    }
    assert!(is_open(policy));
    let cooldown = cooldown_left(policy);
    assert!(cooldown > Duration::from_secs(20), "{cooldown:?}");
    clock.advance(cooldown);
}

/// What is left of the open breaker's cooldown, as a refused call says.
fn cooldown_left(policy: &RetryPolicy) -> Duration {
    let (result, made) = call(policy, (503, None));
    assert_eq!(made, 0);
    match result.map_err(RetryError::into_kind) {
        Err(RetryErrorKind::CircuitOpen {
            retry_after: Some(left),
            ..
        }) => left,
        other => panic!("an open breaker refuses, saying until when: {other:?}"),
    }
}

/// Whether the breaker of "api" is open.
fn is_open(policy: &RetryPolicy) -> bool {
    matches!(policy.breaker_state("api"), Some(State::Open { .. }))
}

#[test]
fn the_breaker_stays_half_open_and_the_next_call_after_the_wait_probes_and_closes_it() {
    let (policy, clock) = built(|b| b);
    opened_and_cooled_down(&policy, &clock);
    // the probe: the endpoint is up, and asks for 2 s
    let (result, made) = call(&policy, (429, Some(Duration::from_secs(2))));
    assert_eq!(made, 1, "{result:?}");
    assert!(
        matches!(policy.breaker_state("api"), Some(State::HalfOpen { .. })),
        "{:?}",
        policy.breaker_state("api")
    );
    // the next call is held for the server's time, not refused for a cooldown
    let (result, made) = call(&policy, (503, None));
    assert_eq!(made, 0);
    assert!(
        matches!(
            result.as_ref().map_err(RetryError::kind),
            Err(RetryErrorKind::ServerHold { retry_after, .. }) if *retry_after == Duration::from_secs(2)
        ),
        "{result:?}"
    );
    // when the wait is over, a call goes out as the probe, and its success
    // closes the breaker
    clock.advance(Duration::from_secs(2));
    let mut made = 0;
    let result = policy.call_with("api", classify_reply).run_blocking(|_| {
        made += 1;
        Ok::<(), Reply>(())
    });
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(made, 1);
    // 2 s after the probe, where a failed probe keeps it open another minute
    assert_eq!(policy.breaker_state("api"), Some(State::Closed));
}

#[test]
fn with_holds_turned_off_the_probe_is_a_failure_and_the_breaker_reopens() {
    let (policy, clock) = built(Builder::without_server_hold);
    opened_and_cooled_down(&policy, &clock);
    let (_, made) = call(&policy, (429, Some(Duration::from_secs(2))));
    assert_eq!(made, 1);
    assert!(is_open(&policy));
    // refused for the next cooldown, a minute, where the server asked for 2 s
    assert!(cooldown_left(&policy) > Duration::from_secs(50));
}

#[test]
fn a_wait_beyond_the_limit_holds_nothing_and_the_probe_is_a_failure() {
    let (policy, clock) = built(|b| b.with_max_retry_after(Duration::from_secs(1)));
    opened_and_cooled_down(&policy, &clock);
    let (_, made) = call(&policy, (429, Some(Duration::from_secs(2))));
    assert_eq!(made, 1);
    assert!(is_open(&policy));
}

/// A shared breaker whose every admission is a probe of round 3, and which
/// keeps what it is told of its probes: `(success, probe)` for an outcome,
/// `None` for a probe handed back.
#[derive(Default)]
struct Probing(Mutex<Vec<Heard>>);

/// What [`Probing`] was told of one probe.
type Heard = Option<(bool, Option<ProbeRound>)>;

impl FleetView for Probing {
    fn admit(&self, _: &str, _: u64) -> Admission {
        Admission::Probe {
            half_opened: false,
            round: ProbeRound::numbered(3),
        }
    }

    fn record(&self, _: &str, _: u64, success: bool, probe: Option<ProbeRound>) {
        self.0.lock().unwrap().push(Some((success, probe)));
    }

    fn publish(&self, _: &str, _: u64, _: Transition) {}

    fn release_probe(&self, _: &str, round: ProbeRound) {
        assert_eq!(round, ProbeRound::numbered(3));
        self.0.lock().unwrap().push(None);
    }
}

#[test]
fn a_shared_breaker_s_probe_answered_with_a_wait_is_handed_back_to_it() {
    let fleet = Arc::new(Probing::default());
    let shared: Arc<dyn FleetView + Send + Sync> = fleet.clone();
    let (policy, _) = built(|b| b.with_shared_breaker(shared));
    let (_, made) = call(&policy, (429, Some(Duration::from_secs(2))));
    assert_eq!(made, 1);
    let (_, made) = call(&policy, (503, None));
    assert_eq!(made, 0, "held");
    // a probe that failed without a wait is a failure of the probe
    let shared: Arc<dyn FleetView + Send + Sync> = fleet.clone();
    let (policy, _) = built(|b| b.with_shared_breaker(shared));
    let (_, made) = call(&policy, (503, None));
    assert_eq!(made, 1);
    assert_eq!(
        *fleet.0.lock().unwrap(),
        [None, Some((false, Some(ProbeRound::numbered(3))))]
    );
}
