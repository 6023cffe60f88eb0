//! `Config::with_failure_run`: a run of failures that begins an outage opens the
//! breaker within seconds, where decayed evidence of the good times would hold
//! it closed; runs that are ordinary for the endpoint do not; and the run only
//! ever hastens an opening.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a rejected known-good config must fail the test"
)]

use bayesretry_breaker::{Breaker, Config, State, Transition};
use proptest::prelude::*;

/// The default policy's breaker at `V / c = 10`, with or without the run.
fn config() -> Config {
    Config::new()
        .with_open_below(0.1)
        .with_half_life_ms(10_000)
        .with_cooldown_ms(250)
        .with_max_cooldown_ms(10_000)
}

fn build(config: Config) -> Breaker {
    config.build().unwrap()
}

/// Records `outcomes` one every `step_ms` from `start_ms`; returns the time of
/// the first opening, if any.
fn feed(
    breaker: &mut Breaker,
    start_ms: u64,
    step_ms: u64,
    outcomes: impl IntoIterator<Item = bool>,
) -> Option<u64> {
    let mut opened = None;
    for (i, ok) in outcomes.into_iter().enumerate() {
        let now = start_ms + step_ms * i as u64;
        if let Some(Transition::Opened { .. }) = breaker.record(now, ok) {
            opened.get_or_insert(now);
        }
    }
    opened
}

#[test]
fn an_outage_after_healthy_traffic_opens_within_ten_failures() {
    let mut reading = build(config().with_failure_run());
    let mut plain = build(config());
    // two minutes at ten calls a second, one failure in twenty
    let healthy = (0..1_200).map(|i| i % 20 != 7);
    assert_eq!(feed(&mut reading, 0, 100, healthy.clone()), None);
    assert_eq!(feed(&mut plain, 0, 100, healthy), None);
    // then every call fails
    let down = core::iter::repeat_n(false, 600);
    let reading_at = feed(&mut reading, 120_000, 100, down.clone());
    let plain_at = feed(&mut plain, 120_000, 100, down);
    let reading_at = reading_at.map(|t| t - 120_000);
    let plain_at = plain_at.map(|t| t - 120_000);
    // 95 % sure the changed rate is below 0.1 takes 6 failures (a change
    // down with probability D / (D + (1 − D)·m_k), Jeffreys' otherwise): the
    // 6th is recorded 0.5 s into the outage
    assert_eq!(reading_at, Some(500));
    // the decayed evidence alone needs far longer
    assert!(plain_at.is_some_and(|t| t > 15_000), "{plain_at:?}");
}

#[test]
fn runs_that_are_ordinary_for_a_flaky_endpoint_do_not_open_it() {
    let mut reading = build(config().with_failure_run());
    // a poor endpoint (30 % success): for a minute its failures come in runs
    // of at most three, and the breaker learns its rate
    let learning = (0..600).map(|i| matches!(i % 10, 0 | 3 | 6));
    assert_eq!(feed(&mut reading, 0, 100, learning), None);
    // then they come in runs of 21, longer than the 6 that open the breaker
    // after healthy traffic: at its rate such runs are common, and say little
    // of a change (each is weighed against a usual rate of about a third,
    // the mean just after the 9 successes before it — 0.342 for the first;
    // the mixture above 0.1 never falls below 0.26, mpmath)
    let stream = (0..6_000).map(|i| i % 30 < 9);
    assert_eq!(feed(&mut reading, 60_000, 100, stream), None);
    assert_eq!(reading.state(), State::Closed);
}

#[test]
fn a_fresh_breaker_cannot_know_that_a_long_run_is_ordinary() {
    // the same runs of 21, on a breaker that has seen only the 9 successes
    // before the first: nothing it knows says the endpoint is flaky, the run
    // is weighed against a usual rate of 10/11, and its 6th failure (1.4 s
    // in) opens it, as mpmath has it. Weighed against the posterior's mean,
    // which the run itself lowers, it did not open at all.
    let mut reading = build(config().with_failure_run());
    let stream = (0..6_000).map(|i| i % 30 < 9);
    assert_eq!(feed(&mut reading, 0, 100, stream), Some(1_400));
}

#[test]
fn without_the_setting_the_run_is_not_read() {
    assert!(!Config::new().reads_failure_run());
    assert!(Config::new().with_failure_run().reads_failure_run());
    assert!(
        !Config::new()
            .with_failure_run()
            .without_failure_run()
            .reads_failure_run()
    );
}

proptest! {
    /// Reading the run only ever opens the breaker sooner: on any stream of
    /// outcomes, it is open at every point the plain breaker is open on the
    /// same stream, up to the plain breaker's first opening.
    #[test]
    fn the_run_only_ever_hastens_an_opening(
        outcomes in proptest::collection::vec(proptest::bool::weighted(0.6), 1..400),
        step in 1_u64..500,
    ) {
        let mut reading = build(config().with_failure_run());
        let mut plain = build(config());
        let mut reading_opened = false;
        for (i, &ok) in outcomes.iter().enumerate() {
            let now = step * i as u64;
            let r = reading.record(now, ok);
            let p = plain.record(now, ok);
            reading_opened |= matches!(r, Some(Transition::Opened { .. }));
            if matches!(p, Some(Transition::Opened { .. })) {
                // the plain breaker opened: the reading one opened by now too
                prop_assert!(reading_opened);
                break;
            }
            if reading_opened {
                break;
            }
        }
    }
}
