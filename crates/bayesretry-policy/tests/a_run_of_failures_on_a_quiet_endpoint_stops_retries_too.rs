//! An agent's endpoint: one call every five seconds. Under the default
//! breaker's 10 s half-life its evidence is a handful of outcomes (the breaker
//! never gathers the strength to open), and a run of failures must be weighed
//! against the success rate before the run: a posterior mean that holds the
//! run's own failures falls with every one of them, and reads the run as bad
//! luck on exactly such an endpoint. Virtual time.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test code: a broken expectation must fail the test"
)]

mod common;

use core::time::Duration;

use bayesretry_breaker::State;
use bayesretry_policy::{HttpStatus, ManualClock, RetryPolicy, VirtualSleeper};

/// The probability the default policy's decision acts on after each of
/// twelve calls into an outage, each failing its first attempt, and whether it
/// would retry. Before them, five minutes of successes, a call every 5 s.
fn decisions_into_an_outage() -> Vec<(f64, bool)> {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let clock = sleeper.clock().clone();
    let policy = RetryPolicy::builder()
        .with_virtual_time(sleeper)
        .with_seed(5)
        .build()
        .unwrap();
    common::quiet_five_minutes(&policy, &clock);
    (0..12)
        .map(|_| {
            let mut decided = None;
            // the retry is vetoed: every call adds one failure to the run, and
            // no retry context learns (each decision reads a context at its
            // uniform prior, ½)
            let _ = policy
                .call::<HttpStatus>("api")
                .on_failed_attempt(|failed| decided = Some(failed.decision))
                .should_retry(|_| false)
                .run_blocking(|_| Err::<(), _>(HttpStatus(503)));
            assert_eq!(policy.breaker_state("api"), Some(State::Closed));
            clock.advance(Duration::from_secs(5));
            let decision = decided.unwrap();
            (decision.probability(), decision.retry())
        })
        .collect()
}

#[test]
fn the_fifth_failure_in_a_row_stops_the_retries() {
    let decisions = decisions_into_an_outage();
    // The breaker counts the successes without its lock and folds them in
    // at the first failure (t = 300 s), as if spread evenly since the first
    // (folded at t = 0): 2^(−30) + 59·(1 − 2^(−30)) / (30 ln 2) = 2.8373
    // successes of faded evidence, a usual rate before the run of
    // 3.8373 / 4.8373 = 0.793273. The hazard is capped at 1 % a run (a call
    // every 5 s). Against that rate, the change-point mixture at V/c = 10
    // (SPEC §5, computed with mpmath by bayesretry-breaker's
    // tests/data/run_of_failures_reference.py) is:
    let expected = [
        0.485_270_523_714_731_29,
        0.436_462_617_475_000_48,
        0.298_421_128_261_793_47,
        0.127_306_793_302_523_03,
        0.043_824_908_751_777_971,
        0.019_210_005_624_002_119,
        0.012_113_330_552_467_593,
        0.009_390_036_959_315_216_4,
    ];
    for (k, (&(probability, _), want)) in decisions.iter().zip(expected).enumerate() {
        assert!(
            (probability - want).abs() < 1e-12,
            "failure {}: {probability} against {want}",
            k + 1
        );
    }
    // below the break-even 0.1 from the fifth failure in a row on. Weighed
    // against the posterior's mean — 0.657 after the first failure, 0.310
    // after the fifth, 0.196 after the twelfth — the mixture stayed above
    // 0.46 throughout, and every call retried.
    let retried: Vec<bool> = decisions.iter().map(|&(_, retry)| retry).collect();
    assert_eq!(retried[..4], [true; 4]);
    assert!(retried[4..].iter().all(|&retry| !retry), "{retried:?}");
}
