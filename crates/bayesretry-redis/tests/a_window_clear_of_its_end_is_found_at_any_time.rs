//! The budget tests take their window's length from the Redis server's time
//! (`common::window_clear_of_its_end`), so that a lease is never held across
//! the window's end. The length must be found at any time, for every length
//! the tests ask for — a minute, an hour, a day — or those tests fail at some
//! times of day for no fault of the code.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod common;

/// 2025-12-02 00:00 UTC, in ms since the Unix epoch.
const DAY: u64 = 1_764_633_600_000;

fn check(now: u64, want: u64) {
    let Some(window) = common::window_clear_of(now, want) else {
        panic!("no window of {want} ms left at {now}");
    };
    assert!(
        window >= want.saturating_mul(2),
        "{window} at {now} for {want}"
    );
    assert!(
        window - now % window >= want,
        "{window} at {now} for {want}"
    );
}

#[test]
fn a_day_long_window_is_found_at_a_time_a_search_near_two_days_misses() {
    // windows of two days and up to 1000 ms more all have less than a day left
    check(DAY + 27 * 3_600_000, 86_400_000);
}

#[test]
fn a_window_is_found_every_few_minutes_of_four_days_for_each_length_asked() {
    for want in [1, 1_000, 60_000, 3_600_000, 86_400_000] {
        for step in 0..(4 * 24 * 60 / 7) {
            check(DAY + step * 7 * 60_000 + step % 1_000, want);
        }
    }
}
