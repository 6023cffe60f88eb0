//! One clock reading far ahead — a clock that jumped forward and was set right,
//! a timestamp from elsewhere — leaves a budget as it was, give or take one
//! window: it is not trusted as the new time, so the spends of the real time are
//! neither charged to its far window nor judged on it. Nor does a caller whose
//! own clock is far behind erase what the real time has spent.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

use bayesretry_budget::{RatioBudget, RatioConfig};

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
