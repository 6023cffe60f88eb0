//! A `VirtualSleeper` records the delays it is asked for, in order, for a
//! test to assert on; a long simulated run (millions of sleeps) must not grow
//! that record without bound. It keeps the first delays up to a documented
//! cap, and counts every sleep and the time slept exactly, however many there
//! were.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

use core::time::Duration;

use bayesretry_policy::{BlockingSleeper, Clock, ManualClock, Sleeper, VirtualSleeper};

/// More sleeps than any test asserts on one by one: a long simulated run.
const SLEEPS: u32 = 300_000;

/// The `i`-th delay of the run: 1 to 7 ms, so that the order shows.
fn delay(i: u32) -> Duration {
    Duration::from_millis(u64::from(i % 7 + 1))
}

#[test]
fn a_long_run_keeps_a_bounded_record_of_its_first_delays() {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    for i in 0..SLEEPS {
        sleeper.sleep_blocking(delay(i));
    }
    let kept = sleeper.delays();
    assert!(
        kept.len() <= 1 << 16,
        "{} delays kept of {SLEEPS}",
        kept.len()
    );
    // what is kept is the run's beginning, in order
    assert!(!kept.is_empty());
    for (i, d) in (0..).zip(&kept) {
        assert_eq!(*d, delay(i));
    }
}

#[test]
fn the_cap_is_what_is_kept_and_the_totals_count_every_sleep() {
    let clock = ManualClock::new(0);
    let sleeper = VirtualSleeper::new(clock.clone());
    let mut total = Duration::ZERO;
    for i in 0..SLEEPS {
        // both faces of the sleeper record alike
        if i % 2 == 0 {
            sleeper.sleep_blocking(delay(i));
        } else {
            drop(Sleeper::sleep(&sleeper, delay(i)));
        }
        total += delay(i);
    }
    assert_eq!(sleeper.delays().len(), VirtualSleeper::MAX_KEPT_DELAYS);
    assert_eq!(sleeper.sleeps(), u64::from(SLEEPS));
    assert_eq!(sleeper.slept(), total);
    assert_eq!(
        Duration::from_millis(clock.now_ms()),
        total,
        "the clock moved by every delay"
    );
}

#[test]
fn a_short_run_keeps_every_delay() {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    assert_eq!(sleeper.sleeps(), 0);
    assert_eq!(sleeper.slept(), Duration::ZERO);
    sleeper.sleep_blocking(Duration::from_secs(1));
    sleeper.sleep_blocking(Duration::from_secs(2));
    assert_eq!(
        sleeper.delays(),
        [Duration::from_secs(1), Duration::from_secs(2)]
    );
    assert_eq!(sleeper.sleeps(), 2);
    assert_eq!(sleeper.slept(), Duration::from_secs(3));
}

#[test]
fn clones_share_the_record_and_the_totals() {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    let clone = sleeper.clone();
    clone.sleep_blocking(Duration::from_millis(5));
    assert_eq!(sleeper.delays(), [Duration::from_millis(5)]);
    assert_eq!(sleeper.sleeps(), 1);
    assert_eq!(sleeper.slept(), Duration::from_millis(5));
}

#[test]
fn the_time_slept_saturates_rather_than_overflow() {
    let sleeper = VirtualSleeper::new(ManualClock::new(0));
    sleeper.sleep_blocking(Duration::MAX);
    sleeper.sleep_blocking(Duration::from_secs(1));
    assert_eq!(sleeper.slept(), Duration::MAX);
    assert_eq!(sleeper.sleeps(), 2);
}
