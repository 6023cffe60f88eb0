//! Delays saturate at the max delay, whatever the attempt number: a schedule that
//! would overflow a `Duration` never wraps to a small delay or panics.

use core::time::Duration;

use bayesretry_backoff::{Config, Exponential, Jitter, Linear, Schedule};

const MAX: Duration = Duration::from_secs(30);

#[test]
fn attempt_sixty_with_factor_two_gives_the_max_delay() {
    let backoff = Config::new()
        .with_factor(2.0)
        .with_max_delay(MAX)
        .with_jitter(Jitter::None)
        .build()
        .unwrap();
    assert_eq!(backoff.delay(60, 0), MAX);
    assert_eq!(backoff.delay(61, 0), MAX);
    assert_eq!(backoff.delay(64, 0), MAX);
    assert_eq!(backoff.delay(65, 0), MAX);
    assert_eq!(backoff.delay(u32::MAX, 0), MAX);
}

#[test]
fn every_attempt_number_is_fine_for_every_schedule() {
    for attempt in [0, 1, 2, 31, 32, 33, 63, 64, 65, 127, 128, 1 << 31, u32::MAX] {
        for factor in [1.0, 1.0 + f64::EPSILON, 1.5, 2.0, 10.0, 1e300] {
            let backoff = Config::new()
                .with_factor(factor)
                .with_max_delay(MAX)
                .with_jitter(Jitter::None)
                .build()
                .unwrap();
            let d = backoff.delay(attempt, 0);
            assert!(d <= MAX, "factor {factor}, attempt {attempt}: {d:?}");
            assert!(d >= backoff.config().base_delay());
        }
        let linear = Config::new()
            .with_schedule(Linear::new(Duration::MAX))
            .with_max_delay(MAX)
            .with_jitter(Jitter::None)
            .build()
            .unwrap();
        let d = linear.delay(attempt, 0);
        assert!(d <= MAX && d >= Duration::from_millis(500));
    }
}

#[test]
fn the_schedules_themselves_saturate_at_the_longest_duration() {
    let base = Duration::from_secs(1);
    assert_eq!(Exponential::new(2.0).delay(base, 200), Duration::MAX);
    assert_eq!(Exponential::new(1.5).delay(base, u32::MAX), Duration::MAX);
    assert_eq!(
        Linear::new(Duration::MAX).delay(base, u32::MAX),
        Duration::MAX
    );
    assert_eq!(Exponential::new(2.0).delay(Duration::MAX, 2), Duration::MAX);
}

#[test]
fn with_no_cap_to_speak_of_the_delay_is_the_longest_duration() {
    let backoff = Config::new()
        .with_max_delay(Duration::MAX)
        .with_jitter(Jitter::Proportional(1.0))
        .build()
        .unwrap();
    assert_eq!(backoff.delay(u32::MAX, u64::MAX), Duration::MAX);
    assert!(backoff.delay(u32::MAX, 0) < Duration::MAX);
}

#[test]
fn a_custom_schedule_returning_the_longest_duration_is_capped() {
    let backoff = Config::new()
        .with_schedule(|_attempt: u32| Duration::MAX)
        .with_max_delay(MAX)
        .with_jitter(Jitter::Equal)
        .build()
        .unwrap();
    let d = backoff.delay(1, u64::MAX);
    assert!(d <= MAX && d >= MAX / 2);
}

#[test]
fn the_iterator_keeps_yielding_the_cap_past_the_last_attempt_number() {
    let backoff = Config::new()
        .with_max_delay(MAX)
        .with_jitter(Jitter::None)
        .build()
        .unwrap();
    let mut delays = backoff.delays(0);
    assert_eq!(delays.nth(99), Some(MAX));
    assert_eq!(delays.retries(), 100);
    assert_eq!(delays.size_hint(), (usize::MAX, None));
}
