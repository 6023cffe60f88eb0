//! A fresh ratio budget counts from its first reading, whatever the clock reads:
//! its words start at zero, and zero is the tag of a bucket too (every 2⁴⁰th).
//! A clock that reads a few buckets short of such a bucket must not take the
//! fresh words for newer buckets, join them, and keep its first attempts and
//! retries in the window longer than a window.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

use bayesretry_budget::{Ratio, RatioBudget, RatioConfig};

/// Buckets of one second: one retry per first attempt, or the floor alone.
fn rules(percent: f64, min_per_sec: u32) -> Ratio {
    RatioConfig::new()
        .with_percent(percent)
        .with_min_per_sec(min_per_sec)
        .build()
        .unwrap()
}

/// Readings to start a fresh budget at: ordinary ones, near the end of the
/// clock, in the upper half of the 40-bit tags, and a few buckets short of a
/// bucket whose tag is zero.
fn starts() -> Vec<u64> {
    let mut starts = vec![0, 1_000, u64::MAX - 3_600_000, ((1 << 39) + 5) * 1_000];
    starts.extend((1..=10).map(|short| ((1_u64 << 40) - short) * 1_000));
    starts.push(((3_u64 << 40) - 2) * 1_000);
    starts
}

#[test]
fn first_attempts_leave_the_window_a_window_later() {
    for start in starts() {
        let budget = RatioBudget::new(rules(100.0, 0));
        for _ in 0..100 {
            budget.deposit(start);
        }
        // eleven seconds on, the first attempts are more than a window old
        let later = start + 11_000;
        let granted = (0..100)
            .filter(|_| budget.try_spend(later, 1).is_ok())
            .count();
        assert_eq!(granted, 0, "started at {start}: {granted} retries granted");
    }
}

#[test]
fn retries_leave_the_window_a_window_later() {
    for start in starts() {
        // the floor alone: 10 retries in any window of 10 s
        let budget = RatioBudget::new(rules(0.0, 1));
        let early = (0..20)
            .filter(|_| budget.try_spend(start, 1).is_ok())
            .count();
        assert_eq!(early, 10, "started at {start}");
        let later = start + 10_000;
        let granted = (0..20)
            .filter(|_| budget.try_spend(later, 1).is_ok())
            .count();
        assert_eq!(granted, 10, "started at {start}: {granted} retries granted");
    }
}
