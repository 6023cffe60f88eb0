//! Property: before jitter, the constant, linear and exponential schedules never
//! give a shorter delay for a later attempt, for any base, cap, step or factor,
//! including exponential factors a hair above 1 and attempts near `u32::MAX`.

use core::time::Duration;

use bayesretry_backoff::{Backoff, Config, Constant, Linear, Schedule};
use proptest::prelude::*;

fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        (0..=3_600_000_000_000_u64).prop_map(Duration::from_nanos),
        (0..=u64::MAX).prop_map(Duration::from_nanos),
        Just(Duration::MAX),
    ]
}

fn factor() -> impl Strategy<Value = f64> {
    prop_oneof![
        1.0..=3.0_f64,
        1.0..=1e12_f64,
        (1..=64_u64).prop_map(|k| 1.0 + k as f64 * f64::EPSILON),
        (1..=1_000_000_u64).prop_map(|k| 1.0 + k as f64 * 1e-12),
    ]
}

fn attempt() -> impl Strategy<Value = u32> {
    prop_oneof![0..=100_u32, any::<u32>(), (u32::MAX - 100)..u32::MAX]
}

fn non_decreasing<S: Schedule>(
    backoff: &Backoff<S>,
    attempt: u32,
    gap: u32,
) -> Result<(), TestCaseError> {
    let now = backoff.scheduled_delay(attempt);
    let next = backoff.scheduled_delay(attempt.saturating_add(1));
    let later = backoff.scheduled_delay(attempt.saturating_add(gap));
    prop_assert!(now <= next, "attempt {attempt}: {now:?} then {next:?}");
    prop_assert!(
        now <= later,
        "attempt {attempt} + {gap}: {now:?} then {later:?}"
    );
    Ok(())
}

fn config(a: Duration, b: Duration) -> Config {
    Config::new()
        .with_base_delay(a.min(b))
        .with_max_delay(a.max(b))
}

proptest! {
    #[test]
    fn exponential(a in duration(), b in duration(), factor in factor(), attempt in attempt(), gap: u32) {
        let backoff = config(a, b).with_factor(factor).build().unwrap();
        non_decreasing(&backoff, attempt, gap)?;
    }

    #[test]
    fn exponential_without_a_cap(base in duration(), factor in factor(), attempt in attempt(), gap: u32) {
        let backoff = config(base, Duration::MAX).with_factor(factor).build().unwrap();
        non_decreasing(&backoff, attempt, gap)?;
    }

    #[test]
    fn linear(a in duration(), b in duration(), step in duration(), attempt in attempt(), gap: u32) {
        let backoff = config(a, b).with_schedule(Linear::new(step)).build().unwrap();
        non_decreasing(&backoff, attempt, gap)?;
    }

    #[test]
    fn constant(a in duration(), b in duration(), attempt in attempt(), gap: u32) {
        let backoff = config(a, b).with_schedule(Constant).build().unwrap();
        non_decreasing(&backoff, attempt, gap)?;
        prop_assert_eq!(backoff.scheduled_delay(attempt), a.min(b));
    }
}
