//! The max delay is a hard bound: jitters that can draw above the schedule
//! (proportional, decorrelated) are capped after they draw, and jitters that draw
//! below it keep their spread once the schedule has reached the cap.

use core::time::Duration;

use bayesretry_backoff::{Config, Constant, Jitter};

const MAX: Duration = Duration::from_secs(10);

#[test]
fn proportional_jitter_at_the_cap_never_exceeds_it() {
    let backoff = Config::new()
        .with_max_delay(MAX)
        .with_jitter(Jitter::Proportional(1.0))
        .build()
        .unwrap();
    // attempt 20: the schedule is far past the cap; the top of ±100 % would be 20 s
    assert_eq!(backoff.scheduled_delay(20), MAX);
    assert_eq!(backoff.delay(20, u64::MAX), MAX);
    assert_eq!(backoff.delay(20, 3 << 62), MAX);
    // the bottom half of the interval is still used
    assert_eq!(backoff.delay(20, 0), Duration::ZERO);
    assert_eq!(backoff.delay(20, 1 << 62), Duration::from_secs(5));
}

#[test]
fn proportional_jitter_below_the_cap_is_capped_only_where_it_crosses() {
    let backoff = Config::new()
        .with_schedule(Constant)
        .with_base_delay(Duration::from_secs(8))
        .with_max_delay(MAX)
        .with_jitter(Jitter::Proportional(0.5))
        .build()
        .unwrap();
    // [4 s, 12 s], capped at 10 s
    assert_eq!(backoff.delay(1, 0), Duration::from_secs(4));
    assert_eq!(backoff.delay(1, 1 << 63), Duration::from_secs(8));
    assert_eq!(backoff.delay(1, u64::MAX), MAX);
}

#[test]
fn decorrelated_jitter_is_capped() {
    let backoff = Config::new()
        .with_base_delay(Duration::from_secs(1))
        .with_max_delay(MAX)
        .with_jitter(Jitter::Decorrelated)
        .build()
        .unwrap();
    // previous 9 s: [1 s, 27 s] would pass the cap, so the draw stops at it
    let previous = Duration::from_secs(9);
    assert!(backoff.delay_after(5, previous, u64::MAX) <= MAX);
    assert!(backoff.delay_after(5, Duration::MAX, u64::MAX) <= MAX);
    for delay in backoff.delays(7).take(1000) {
        assert!(delay <= MAX && delay >= Duration::from_secs(1));
    }
}

#[test]
fn full_jitter_keeps_spreading_clients_once_the_schedule_is_capped() {
    let backoff = Config::new().with_max_delay(MAX).build().unwrap();
    let delays: Vec<Duration> = (0..100u64)
        .map(|client| backoff.delay(40, client.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
        .collect();
    assert!(delays.iter().all(|d| *d <= MAX));
    let below_half = delays.iter().filter(|d| **d < MAX / 2).count();
    assert!(
        (30..=70).contains(&below_half),
        "{below_half} of 100 below 5 s"
    );
}

#[test]
fn every_jitter_respects_a_zero_max_delay() {
    for jitter in [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Proportional(1.0),
        Jitter::hashed("client"),
    ] {
        let backoff = Config::new()
            .with_base_delay(Duration::ZERO)
            .with_max_delay(Duration::ZERO)
            .with_jitter(jitter)
            .build()
            .unwrap();
        assert_eq!(backoff.delay(u32::MAX, u64::MAX), Duration::ZERO);
    }
}
