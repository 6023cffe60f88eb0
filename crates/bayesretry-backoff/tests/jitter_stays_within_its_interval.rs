//! Property: each jitter draws from the interval its documentation states, for any
//! base, cap, attempt number, random word and previous delay. `d` is the
//! schedule's delay capped at the max delay (`Backoff::scheduled_delay`).

use core::time::Duration;

use bayesretry_backoff::{Backoff, Config, Jitter};
use proptest::prelude::*;

fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        (0..=3_600_000_000_000_u64).prop_map(Duration::from_nanos),
        (0..=u64::MAX).prop_map(Duration::from_nanos),
        Just(Duration::MAX),
    ]
}

fn attempt() -> impl Strategy<Value = u32> {
    prop_oneof![0..=100_u32, any::<u32>()]
}

fn backoff(a: Duration, b: Duration, factor: f64, jitter: Jitter) -> Option<Backoff> {
    Config::new()
        .with_base_delay(a.min(b))
        .with_max_delay(a.max(b))
        .with_factor(factor)
        .with_jitter(jitter)
        .build()
        .ok()
}

proptest! {
    #[test]
    fn full_jitter_is_within_zero_and_the_scheduled_delay(
        a in duration(), b in duration(), factor in 1.0..4.0_f64, attempt in attempt(), random: u64,
    ) {
        let backoff = backoff(a, b, factor, Jitter::Full).unwrap();
        let d = backoff.delay(attempt, random);
        prop_assert!(d <= backoff.scheduled_delay(attempt));
    }

    #[test]
    fn equal_jitter_is_within_half_and_all_of_the_scheduled_delay(
        a in duration(), b in duration(), factor in 1.0..4.0_f64, attempt in attempt(), random: u64,
    ) {
        let backoff = backoff(a, b, factor, Jitter::Equal).unwrap();
        let d = backoff.delay(attempt, random);
        let scheduled = backoff.scheduled_delay(attempt);
        prop_assert!(scheduled / 2 <= d && d <= scheduled);
    }

    #[test]
    fn hashed_jitter_is_within_half_and_all_of_the_scheduled_delay(
        a in duration(), b in duration(), key: u64, attempt in attempt(), random: u64,
    ) {
        let backoff = backoff(a, b, 2.0, Jitter::Hashed { key }).unwrap();
        let d = backoff.delay(attempt, random);
        let scheduled = backoff.scheduled_delay(attempt);
        prop_assert!(scheduled / 2 <= d && d <= scheduled);
        prop_assert_eq!(d, backoff.delay(attempt, random.wrapping_add(1)));
    }

    #[test]
    fn decorrelated_jitter_stays_within_base_and_max(
        a in duration(), b in duration(), attempt in attempt(), random: u64,
        previous in duration(), seed: u64,
    ) {
        let Some(backoff) = backoff(a, b, 2.0, Jitter::Decorrelated) else {
            // a zero base is rejected for decorrelated jitter
            prop_assert!(a.min(b).is_zero());
            return Ok(());
        };
        let (base, max) = (backoff.config().base_delay(), backoff.config().max_delay());
        let d = backoff.delay_after(attempt, previous, random);
        prop_assert!(base <= d && d <= max, "{d:?} outside [{base:?}, {max:?}]");
        let top = previous.saturating_mul(3).max(base);
        prop_assert!(d <= top, "{d:?} above 3 x {previous:?}");
        let d = backoff.delay(attempt, random);
        prop_assert!(base <= d && d <= max);
        for d in backoff.delays(seed).take(100) {
            prop_assert!(base <= d && d <= max, "iterator {d:?} outside [{base:?}, {max:?}]");
        }
    }

    #[test]
    fn proportional_jitter_is_within_the_spread_then_capped(
        a in duration(), b in duration(), spread in 0.0..=1.0_f64, attempt in attempt(), random: u64,
    ) {
        let backoff = backoff(a, b, 2.0, Jitter::Proportional(spread)).unwrap();
        let d = backoff.delay(attempt, random).as_secs_f64();
        let scheduled = backoff.scheduled_delay(attempt).as_secs_f64();
        let max = backoff.config().max_delay().as_secs_f64();
        // 1e-9 relative slack for the float rounding of `d · spread`, plus 1 ns
        let slack = scheduled * 1e-9 + 1e-9;
        prop_assert!(d >= scheduled * (1.0 - spread) - slack, "{d} below {scheduled} x (1 - {spread})");
        prop_assert!(d <= (scheduled * (1.0 + spread)).min(max) + slack, "{d} above the spread");
    }

    #[test]
    fn no_jitter_is_the_scheduled_delay(
        a in duration(), b in duration(), factor in 1.0..4.0_f64, attempt in attempt(), random: u64,
    ) {
        let backoff = backoff(a, b, factor, Jitter::None).unwrap();
        prop_assert_eq!(backoff.delay(attempt, random), backoff.scheduled_delay(attempt));
    }
}
