//! Property: the first delays a backoff works out when it is built are exactly
//! the delays its schedule gives when asked on the spot — for every jitter, every
//! random word, and the attempts on both sides of the table's end. A delay worked
//! out ahead takes the 64-bit path under no, full and equal jitter, and the one
//! asked on the spot the general 128-bit one: they agree to the nanosecond.

use core::time::Duration;

use bayesretry_backoff::{Config, Exponential, Schedule};
use proptest::prelude::*;

mod common;
use common::jitter;

fn duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        (0..=60_000_000_000_u64).prop_map(Duration::from_nanos),
        (0..=u64::MAX).prop_map(Duration::from_nanos),
        Just(Duration::MAX),
    ]
}

proptest! {
    #[test]
    fn a_built_in_schedule_gives_what_the_same_schedule_asked_each_time_gives(
        a in duration(),
        b in duration(),
        factor in prop_oneof![1.0..=4.0_f64, Just(2.0), Just(3.0)],
        jitter in jitter(),
        attempt in 0..=12_u32,
        random: u64,
    ) {
        let (base, max) = (a.min(b), a.max(b));
        let exponential = Exponential::new(factor);
        let ahead = Config::new()
            .with_base_delay(base)
            .with_max_delay(max)
            .with_schedule(exponential)
            .with_jitter(jitter)
            .build()
            .unwrap();
        // the same schedule as a closure: not worked out ahead
        let asked = Config::new()
            .with_base_delay(base)
            .with_max_delay(max)
            .with_schedule(move |n: u32| exponential.delay(base, n))
            .with_jitter(jitter)
            .build()
            .unwrap();
        prop_assert_eq!(ahead.scheduled_delay(attempt), asked.scheduled_delay(attempt));
        prop_assert_eq!(ahead.delay(attempt, random), asked.delay(attempt, random));
    }
}
