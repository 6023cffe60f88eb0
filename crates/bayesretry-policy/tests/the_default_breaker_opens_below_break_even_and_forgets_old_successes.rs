//! The breaker a builder gives each endpoint by default: it opens when the
//! success rate is credibly below the cost model's break-even, its evidence
//! fades with a 10 s half-life, and its cooldown is paced by the value of a
//! success and the traffic it measured, between 250 ms and 10 s; a run of
//! failures after healthy traffic opens it within ten.

#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "test code: a broken expectation must fail the test"
)]

use core::time::Duration;

use bayesretry_breaker::State;
use bayesretry_cost::CostModel;
use bayesretry_policy::{
    Clock, HttpStatus, ManualClock, RetryError, RetryErrorKind, RetryPolicy, VirtualSleeper,
    default_breaker,
};

/// A policy on virtual time, with `cost` (or the default cost model) and
/// `breaker` (or the default breaker), and the clock it reads.
fn policy(
    cost: Option<CostModel>,
    breaker: Option<bayesretry_breaker::Config>,
) -> (RetryPolicy, ManualClock) {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let clock = sleeper.clock().clone();
    let mut builder = RetryPolicy::builder()
        .with_virtual_time(sleeper)
        .with_max_attempts(1)
        .with_seed(3);
    if let Some(cost) = cost {
        builder = builder.with_cost_model(cost);
    }
    if let Some(breaker) = breaker {
        builder = builder.with_breaker(breaker);
    }
    (builder.build().unwrap(), clock)
}

/// Calls that fail, one attempt each, 100 ms apart, until the breaker refuses
/// one: the number of calls made, if it refused within `limit`.
fn failures_until_open(policy: &RetryPolicy, clock: &ManualClock, limit: u32) -> Option<u32> {
    for made in 0..limit {
        let result: Result<(), _> = policy.run_blocking("api", |_| Err(HttpStatus(500)));
        if let Err(RetryErrorKind::CircuitOpen { .. }) = result.map_err(RetryError::into_kind) {
            return Some(made);
        }
        clock.advance(Duration::from_millis(100));
    }
    None
}

#[test]
fn with_the_default_cost_model_it_opens_sooner_than_the_breaker_crates_own_settings() {
    let (default, clock) = policy(None, None);
    let (crate_own, crate_clock) = policy(None, Some(bayesretry_breaker::Config::new()));
    let default_at = failures_until_open(&default, &clock, 200).unwrap();
    let crate_at = failures_until_open(&crate_own, &crate_clock, 200).unwrap();
    // the default reads the run: on a fresh endpoint nothing before the run
    // says other than the prior's mean, ½, and at the hazard of a run at
    // about ten calls a second (6.2e-4) the 14th failure in a row puts the
    // rate above 0.1 with probability 0.041 (0.065 after 13; mpmath, with the
    // evidence faded as the breaker fades it). The 95 % upper bound of
    // Beta(1, 1 + n) alone is below 0.1 from n = 28 (the default opened at
    // the 31st while the run was weighed against a mean the run had lowered),
    // below 0.05 from n = 58.
    assert_eq!(default_at, 14);
    assert!(crate_at > 50, "{crate_at}");
}

#[test]
fn a_low_value_opens_on_a_poor_endpoint_that_a_high_value_keeps_calling() {
    // one attempt in three succeeds: worth calling at V/c 10, not at V/c 2
    let run = |value: f64| {
        let (policy, clock) = policy(Some(CostModel::new(value, 1.0).unwrap()), None);
        let mut refused = 0;
        for call in 0..300_u32 {
            let result = policy.run_blocking("api", |_| {
                if call % 3 == 0 {
                    Ok(())
                } else {
                    Err(HttpStatus(500))
                }
            });
            if let Err(RetryErrorKind::CircuitOpen { .. }) = result.map_err(RetryError::into_kind) {
                refused += 1;
            }
            clock.advance(Duration::from_millis(100));
        }
        refused
    };
    assert!(run(2.0) > 0, "break-even 0.5: the breaker opens");
    assert_eq!(run(10.0), 0, "break-even 0.1: the breaker stays closed");
}

#[test]
fn minutes_of_successes_do_not_keep_it_closed_once_failures_take_over() {
    let cost = CostModel::new(10.0, 1.0).unwrap();
    let (default, clock) = policy(None, None);
    let (fading, fading_clock) = policy(None, Some(default_breaker(&cost).without_failure_run()));
    let (crate_own, crate_clock) = policy(None, Some(bayesretry_breaker::Config::new()));
    let all = [
        (&default, &clock),
        (&fading, &fading_clock),
        (&crate_own, &crate_clock),
    ];
    for (policy, clock) in all {
        // ten minutes of healthy traffic, ten calls a second
        for _ in 0..6_000 {
            let result = policy.run_blocking("api", |_| Ok::<(), HttpStatus>(()));
            assert!(result.is_ok());
            clock.advance(Duration::from_millis(100));
        }
    }
    // the default reads the run: 6 failures in a row after healthy traffic
    // are 95 % sure to mean a rate below the break-even 0.1 (an endpoint that
    // changed is down, or has a rate of Beta(½, 6½): see bayesretry-beta's
    // `ChangePoint`)
    assert_eq!(failures_until_open(&default, &clock, 600), Some(6));
    // fading evidence alone: within a minute of failures, once the successes
    // have faded below a tenth of the recent evidence
    let fading_at = failures_until_open(&fading, &fading_clock, 600);
    assert!(fading_at.is_some_and(|n| n > 100), "{fading_at:?}");
    assert_eq!(
        failures_until_open(&crate_own, &crate_clock, 600),
        None,
        "6000 successes kept forever hold the crate's own breaker closed"
    );
}

/// How long the breaker of "api" stays open, as it reports: the end of the
/// cooldown minus the time now.
fn cooldown_now(policy: &RetryPolicy, clock: &ManualClock) -> u64 {
    match policy.breaker_state("api") {
        Some(State::Open { until_ms }) => until_ms - clock.now_ms(),
        other => panic!("the breaker is open, not {other:?}"),
    }
}

#[test]
fn its_cooldown_is_shorter_for_a_dearer_success_and_never_above_ten_seconds() {
    // ten calls a second: the breaker measures 0.01 calls per ms, so its first
    // cooldown is sqrt(2 · 10 s / (0.01/ms · (V/c − 1))): 471 ms at V/c 10,
    // 1.41 s at V/c 2; the refused call that shows it open comes 100 ms later
    let first = |value: f64| {
        let (policy, clock) = policy(Some(CostModel::new(value, 1.0).unwrap()), None);
        failures_until_open(&policy, &clock, 200).unwrap();
        (cooldown_now(&policy, &clock), policy, clock)
    };
    let (dear, policy, clock) = first(10.0);
    let (cheap, ..) = first(2.0);
    assert!((300..=450).contains(&dear), "{dear}");
    assert!((1_150..=1_550).contains(&cheap), "{cheap}");

    // probes that keep failing: the cooldown grows as the outage drags on,
    // and stops at 10 s
    let mut previous = dear;
    for _ in 0..2_000 {
        clock.advance(Duration::from_millis(cooldown_now(&policy, &clock)));
        let result: Result<(), _> = policy.run_blocking("api", |_| Err(HttpStatus(500)));
        assert!(
            !matches!(
                result.as_ref().map_err(RetryError::kind),
                Err(RetryErrorKind::CircuitOpen { .. })
            ),
            "the probe is let through: {result:?}"
        );
        let cooldown = cooldown_now(&policy, &clock);
        assert!(cooldown >= previous && cooldown <= 10_000, "{cooldown}");
        previous = cooldown;
        if cooldown == 10_000 {
            break;
        }
    }
    assert_eq!(previous, 10_000);
}

#[test]
fn a_success_worth_a_vanishing_share_of_an_attempt_still_builds_a_policy() {
    for value in [1e-320, 1e-300, f64::MIN_POSITIVE] {
        let cost = CostModel::new(value, 1.0).unwrap();
        let breaker = default_breaker(&cost);
        assert_eq!(breaker.open_below(), 0.9, "V = {value:e}");
        let (policy, clock) = policy(Some(cost), None);
        // no retry pays, and a failing endpoint is shut off as at V/c 1
        assert!(
            failures_until_open(&policy, &clock, 200).is_some(),
            "V = {value:e}"
        );
    }
}
