//! Hash jitter draws from a hash of a caller's key and the attempt number: the same
//! key gets the same schedule every time, whatever randomness or seed is passed,
//! and different keys spread out across the jitter interval.

#![allow(
    clippy::unwrap_used,
    reason = "the helpers build fixed, known-good values"
)]

use core::time::Duration;

use bayesretry_backoff::{Backoff, Config, Jitter};

fn keyed(key: u64) -> Backoff {
    Config::new()
        .with_base_delay(Duration::from_secs(1))
        .with_max_delay(Duration::from_secs(60))
        .with_jitter(Jitter::Hashed { key })
        .build()
        .unwrap()
}

#[test]
fn the_same_key_gets_the_same_delays_whatever_the_randomness() {
    let a = keyed(17);
    let b = keyed(17);
    for attempt in 1..=20 {
        let d = a.delay(attempt, 0);
        assert_eq!(d, a.delay(attempt, u64::MAX));
        assert_eq!(d, b.delay(attempt, 12345));
    }
    let first: Vec<Duration> = a.delays(1).take(20).collect();
    let second: Vec<Duration> = b.delays(99).take(20).collect();
    assert_eq!(first, second);
}

#[test]
fn a_named_key_is_stable_across_runs() {
    let backoff = Config::new()
        .with_base_delay(Duration::from_secs(1))
        .with_jitter(Jitter::hashed("worker-17"))
        .build()
        .unwrap();
    // Pinned: a change to the hash or the mixer changes every client's schedule,
    // which would be a breaking change.
    assert_eq!(
        backoff.delay(1, 0),
        Duration::from_nanos(PINNED_FIRST_DELAY_NS)
    );
}

/// The delay after attempt 1 for `Jitter::hashed("worker-17")` and a 1 s base,
/// computed independently from the published FNV-1a and SplitMix64 definitions.
const PINNED_FIRST_DELAY_NS: u64 = 916_299_396;

#[test]
fn the_delays_stay_within_half_to_all_of_the_schedule() {
    for key in 0..200 {
        let backoff = keyed(key);
        for attempt in 1..=8 {
            let d = backoff.delay(attempt, 0);
            let scheduled = backoff.scheduled_delay(attempt);
            assert!(d <= scheduled && d >= scheduled / 2, "key {key}: {d:?}");
        }
    }
}

#[test]
fn different_keys_spread_evenly_across_the_interval() {
    // attempt 3: scheduled 4 s, so delays in [2 s, 4 s]; ten bins of 200 ms
    let mut bins = [0_u32; 10];
    let keys = 2000;
    for key in 0..keys {
        let d = keyed(key).delay(3, 0);
        let offset = d.saturating_sub(Duration::from_secs(2)).as_nanos();
        let bin = (offset / Duration::from_millis(200).as_nanos()).min(9) as usize;
        bins[bin] += 1;
    }
    // each bin expects 200; a fair spread stays well within ±30 %
    for (i, count) in bins.iter().enumerate() {
        assert!(
            (140..=260).contains(count),
            "bin {i}: {count} of {keys}: {bins:?}"
        );
    }
}

#[test]
fn consecutive_attempts_of_one_key_are_not_locked_together() {
    let backoff = keyed(5);
    // the position within [d/2, d] varies from attempt to attempt
    let positions: Vec<f64> = (1..=8)
        .map(|attempt| {
            let d = backoff.delay(attempt, 0).as_secs_f64();
            let s = backoff.scheduled_delay(attempt).as_secs_f64();
            (d - s / 2.0) / (s / 2.0)
        })
        .collect();
    let first = positions[0];
    assert!(
        positions.iter().any(|p| (p - first).abs() > 0.1),
        "{positions:?}"
    );
}
