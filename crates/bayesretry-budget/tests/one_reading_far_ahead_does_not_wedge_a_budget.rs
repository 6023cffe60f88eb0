//! One clock reading far ahead — a clock that jumped forward and was set right,
//! a timestamp from elsewhere — leaves a budget as it was, give or take one
//! window: it is not trusted as the new time, so the spends of the real time are
//! neither charged to its far window nor judged on it. Nor does a caller whose
//! own clock is far behind erase what the real time has spent.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

use bayesretry_budget::{FixedWindowBudget, FixedWindowConfig, RatioBudget, RatioConfig};

/// A day, in milliseconds.
const DAY_MS: u64 = 86_400_000;

/// Ten minutes of five retries a second (half the default floor of ten a second)
/// and no first attempts, after `poison` (one spend at that time, if any):
/// how many of the 3 000 retries are refused.
fn ratio_refusals(poison: Option<u64>) -> usize {
    let budget = RatioBudget::new(RatioConfig::new().build().unwrap());
    if let Some(at) = poison {
        let _ = budget.try_spend(at, 1);
    }
    (1_000..601_000_u64)
        .step_by(200)
        .filter(|&t| budget.try_spend(t, 1).is_err())
        .count()
}

#[test]
fn one_ratio_spend_a_day_ahead_does_not_wedge_the_budget() {
    assert_eq!(ratio_refusals(None), 0, "control");
    for ahead in [3 * 1_000 * 10, 3_600_000, DAY_MS, 365 * DAY_MS] {
        let refused = ratio_refusals(Some(1_000 + ahead));
        assert_eq!(
            refused, 0,
            "{ahead} ms ahead: {refused} of 3000 retries refused at half the floor"
        );
    }
}

#[test]
fn a_ratio_caller_far_behind_does_not_erase_the_spends_of_the_real_time() {
    // the floor alone: 10 retries in any window of 10 s, buckets of 1 s
    let budget = RatioBudget::new(
        RatioConfig::new()
            .with_percent(0.0)
            .with_min_per_sec(1)
            .build()
            .unwrap(),
    );
    let now = 100_000; // bucket 100
    let granted = (0..20).filter(|_| budget.try_spend(now, 1).is_ok()).count();
    assert_eq!(granted, 10);
    // a caller whose clock reads 20 s behind (bucket 80, the same slot): it may
    // not take that slot over and lose the ten retries in it
    for _ in 0..5 {
        let _ = budget.try_spend(now - 20_000, 1);
        assert!(
            budget.try_spend(now + 500, 1).is_err(),
            "the window is full"
        );
    }
    assert!(budget.balance(now + 500) <= 0);
}

/// Ten minutes of one retry a second against the default fixed window (100 per
/// minute), after `poison` (one spend at that time, if any): how many of the 600
/// retries are refused.
fn fixed_window_refusals(poison: Option<u64>) -> usize {
    let budget = FixedWindowBudget::new(FixedWindowConfig::new().build().unwrap());
    if let Some(at) = poison {
        let _ = budget.try_spend(at, 1);
    }
    (0..600_000_u64)
        .step_by(1_000)
        .filter(|&t| budget.try_spend(t, 1).is_err())
        .count()
}

#[test]
fn one_fixed_window_spend_a_day_ahead_does_not_wedge_the_budget() {
    assert_eq!(fixed_window_refusals(None), 0, "control");
    for ahead in [3 * 60_000, 3_600_000, DAY_MS] {
        let refused = fixed_window_refusals(Some(ahead));
        assert_eq!(
            refused, 0,
            "{ahead} ms ahead: {refused} of 600 retries refused at 60 % of the cap"
        );
    }
}

#[test]
fn a_fixed_window_spent_far_ahead_is_carried_into_one_window_only() {
    let budget = FixedWindowBudget::new(
        FixedWindowConfig::new()
            .with_max_cost_per_window(10)
            .with_window_ms(1_000)
            .build()
            .unwrap(),
    );
    // a clock an hour ahead spends the whole cap
    assert!(budget.try_spend(3_600_000, 10).is_ok());
    // set right: its window's spending counts in the present one, and only there
    assert_eq!(budget.remaining(500), 0);
    assert!(budget.try_spend(500, 1).is_err());
    assert_eq!(budget.remaining(1_000), 10);
    assert!(budget.try_spend(1_000, 10).is_ok());
}

#[test]
fn a_fixed_window_caller_far_behind_does_not_reset_the_window_of_the_real_time() {
    let budget = FixedWindowBudget::new(
        FixedWindowConfig::new()
            .with_max_cost_per_window(4)
            .with_window_ms(1_000)
            .build()
            .unwrap(),
    );
    let now = 2_000_000; // window 2 000
    let behind = now - 1_000_000; // a thousand windows behind
    let mut granted = 0;
    for _ in 0..10 {
        granted += u32::from(budget.try_spend(now, 1).is_ok());
        granted += u32::from(budget.try_spend(behind, 1).is_ok());
    }
    assert_eq!(
        granted, 4,
        "both clocks together were granted {granted} with a cap of 4"
    );
    // the spending carried back and forth is kept for one more window of the
    // real time at most (the clock far behind had the last word)
    let _ = budget.try_spend(now + 1_000, 1);
    assert_eq!(budget.remaining(now + 2_000), 4);
}
