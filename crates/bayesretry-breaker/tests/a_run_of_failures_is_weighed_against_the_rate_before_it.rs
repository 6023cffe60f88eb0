//! The run of failures is weighed against the success rate the endpoint had
//! before the run began, not against a posterior that already holds the run's
//! own failures. Those would lower the usual rate, raise the likelihood of the
//! run under "nothing changed", `(1 − p₀)^k`, and make the run read as bad
//! luck — most of all on an endpoint with little evidence, such as a quiet
//! one whose evidence fades. Every figure here is from an independent mpmath
//! computation of the rule (SPEC §6), 50 digits:
//! `tests/data/run_of_failures_reference.py`.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a rejected known-good config must fail the test"
)]

use bayesretry_breaker::{Breaker, Config, Transition};

/// Records `outcomes` one every `step_ms` from `start_ms`; returns the index
/// (from 0) of the outcome that first opens the breaker, if any.
fn first_opening(
    breaker: &mut Breaker,
    start_ms: u64,
    step_ms: u64,
    outcomes: impl IntoIterator<Item = bool>,
) -> Option<usize> {
    outcomes.into_iter().enumerate().find_map(|(i, ok)| {
        let now = start_ms + step_ms * i as u64;
        matches!(breaker.record(now, ok), Some(Transition::Opened { .. })).then_some(i)
    })
}

#[test]
fn a_few_successes_then_an_outage_open_the_breaker_at_the_seventh_failure() {
    // no half-life: the hazard is 1 % per run. After 3 successes on the
    // uniform prior the usual rate is 4/5; after k failures the posterior is
    // Beta(4, 1 + k). The mixture puts the rate above 0.1 with probability
    // 0.0558 after 6 failures and 0.0394 after 7: the 7th opens it (the
    // credible bound alone needs far more: its cdf at 0.1 is 0.019 after 7).
    // Weighed against the posterior's mean, (4 / (5 + k)), it took 68.
    let config = Config::new().with_open_below(0.1).with_failure_run();
    let mut breaker = config.build().unwrap();
    let outcomes = (0..200).map(|i| i < 3);
    assert_eq!(first_opening(&mut breaker, 0, 1_000, outcomes), Some(3 + 6));
    assert_eq!(breaker.failure_run(), 7);

    // five successes: usual rate 6/7, and the 6th failure opens it, the
    // shortest run that can (mixture 0.0475 after 6, 0.0666 after 5); it took
    // 80 against the posterior's mean
    let mut breaker = config.build().unwrap();
    let outcomes = (0..200).map(|i| i < 5);
    assert_eq!(first_opening(&mut breaker, 0, 1_000, outcomes), Some(5 + 5));
}

#[test]
fn a_quiet_endpoints_outage_opens_its_breaker_as_soon_as_a_busy_ones() {
    // the default policy's breaker at V / c = 10: evidence halves every 10 s.
    // One call a second, every one a success for two minutes: when the
    // first failure comes, a second after the last success, the faded
    // evidence is about 14 successes (Σ 2^(−j/10), j = 1…120, = 13.93), a
    // usual rate of 14.93 / 15.93 = 0.9372. Then the endpoint goes down:
    // against that rate the 6th failure opens the breaker, as at ten calls a
    // second (the hazard is capped at 1 % per run at this call rate); against
    // the posterior's mean, which the run and the fading pull down together,
    // it took the 110th, 109 s into the outage.
    let config = Config::new()
        .with_open_below(0.1)
        .with_half_life_ms(10_000)
        .with_cooldown_ms(250)
        .with_max_cooldown_ms(10_000)
        .with_failure_run();
    let mut breaker = config.build().unwrap();
    let healthy = (0..120).map(|_| true);
    assert_eq!(first_opening(&mut breaker, 0, 1_000, healthy), None);
    let down = (0..200).map(|_| false);
    assert_eq!(first_opening(&mut breaker, 120_000, 1_000, down), Some(5));
    let usual = breaker.run_reading(125_000).usual_success_rate;
    assert!((usual - 0.937_22).abs() < 1e-5, "{usual}");
}
