//! Property: for every schedule, jitter, attempt number, random word and previous
//! delay, the delay is at most the max delay, in the pure form and the iterator.

use core::time::Duration;

use bayesretry_backoff::{Backoff, Config, Constant, Jitter, Linear, Schedule};
use proptest::prelude::*;

mod common;
use common::jitter;

fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        (0..=u64::MAX).prop_map(Duration::from_nanos),
        (0..=u64::MAX, 0..1_000_000_000_u32).prop_map(|(s, n)| Duration::new(s, n)),
        Just(Duration::ZERO),
        Just(Duration::MAX),
    ]
}

fn factor() -> impl Strategy<Value = f64> {
    prop_oneof![
        1.0..=4.0_f64,
        1.0..=1e300_f64,
        Just(1.0),
        Just(1.0 + f64::EPSILON),
        Just(2.0),
    ]
}

fn attempt() -> impl Strategy<Value = u32> {
    prop_oneof![0..=200_u32, any::<u32>(), Just(u32::MAX)]
}

/// A config with base <= max, built or skipped (decorrelated with a zero base).
fn build<S: Schedule>(config: Config<S>) -> Option<Backoff<S>> {
    config.build().ok()
}

fn check<S: Schedule + Clone>(
    backoff: &Backoff<S>,
    attempt: u32,
    random: u64,
    previous: Duration,
    seed: u64,
) -> Result<(), TestCaseError> {
    let max = backoff.config().max_delay();
    let d = backoff.delay(attempt, random);
    prop_assert!(d <= max, "delay {d:?} > max {max:?}");
    let d = backoff.delay_after(attempt, previous, random);
    prop_assert!(d <= max, "delay_after {d:?} > max {max:?}");
    for d in backoff.delays(seed).take(70) {
        prop_assert!(d <= max, "iterator {d:?} > max {max:?}");
    }
    Ok(())
}

fn config(a: Duration, b: Duration, jitter: Jitter) -> Config {
    Config::new()
        .with_base_delay(a.min(b))
        .with_max_delay(a.max(b))
        .with_jitter(jitter)
}

proptest! {
    #[test]
    fn exponential(
        a in duration(), b in duration(), jitter in jitter(), factor in factor(),
        attempt in attempt(), random: u64, previous in duration(), seed: u64,
    ) {
        if let Some(backoff) = build(config(a, b, jitter).with_factor(factor)) {
            check(&backoff, attempt, random, previous, seed)?;
        }
    }

    #[test]
    fn linear(
        a in duration(), b in duration(), jitter in jitter(), step in duration(),
        attempt in attempt(), random: u64, previous in duration(), seed: u64,
    ) {
        if let Some(backoff) = build(config(a, b, jitter).with_schedule(Linear::new(step))) {
            check(&backoff, attempt, random, previous, seed)?;
        }
    }

    #[test]
    fn constant(
        a in duration(), b in duration(), jitter in jitter(),
        attempt in attempt(), random: u64, previous in duration(), seed: u64,
    ) {
        if let Some(backoff) = build(config(a, b, jitter).with_schedule(Constant)) {
            check(&backoff, attempt, random, previous, seed)?;
        }
    }

    #[test]
    fn caller_function(
        a in duration(), b in duration(), jitter in jitter(), scale: u64,
        attempt in attempt(), random: u64, previous in duration(), seed: u64,
    ) {
        // an arbitrary, non-monotone function of the attempt
        let schedule = move |n: u32| {
            Duration::from_nanos(scale.rotate_left(n).wrapping_mul(u64::from(n) | 1))
        };
        if let Some(backoff) = build(config(a, b, jitter).with_schedule(schedule)) {
            check(&backoff, attempt, random, previous, seed)?;
        }
    }
}
