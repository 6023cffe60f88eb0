//! The fixed window's behaviour through time, on a clock the test moves by hand.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

use bayesretry_budget::{Budget, FixedWindowBudget, FixedWindowConfig, FixedWindowLedger, Reason};

fn budget(cap: u32, window_ms: u64) -> FixedWindowBudget {
    FixedWindowBudget::new(
        FixedWindowConfig::new()
            .with_max_cost_per_window(cap)
            .with_window_ms(window_ms)
            .build()
            .unwrap(),
    )
}

#[test]
fn a_spent_window_refuses_until_the_next_one_begins() {
    let budget = budget(3, 1_000);
    assert_eq!(budget.remaining(0), 3);
    assert!(budget.try_spend(100, 2).is_ok());
    assert!(budget.try_spend(200, 1).is_ok());
    assert_eq!(budget.remaining(300), 0);

    let denied = budget.try_spend(300, 1).unwrap_err();
    assert_eq!(denied.reason(), Reason::Exhausted);
    assert_eq!(denied.retry_at_ms(), Some(1_000));
    assert!(budget.try_spend(999, 1).is_err());

    assert_eq!(budget.remaining(1_000), 3);
    assert!(budget.try_spend(1_000, 3).is_ok());
    assert!(budget.try_spend(1_999, 1).is_err());
}

#[test]
fn a_refused_spend_costs_nothing() {
    let budget = budget(5, 1_000);
    assert!(budget.try_spend(0, 4).is_ok());
    assert!(budget.try_spend(0, 2).is_err());
    assert!(budget.try_spend(0, 1).is_ok());
    assert_eq!(budget.remaining(0), 0);
}

#[test]
fn a_caller_whose_clock_lags_is_charged_to_the_newer_window() {
    let budget = budget(2, 1_000);
    assert!(budget.try_spend(1_000, 2).is_ok());
    // Another thread read 999 just before the window turned: it is not given the
    // old window's room, it is charged to the current one.
    let denied = budget.try_spend(999, 1).unwrap_err();
    assert_eq!(denied.retry_at_ms(), Some(2_000));
}

#[test]
fn a_long_idle_gap_starts_a_fresh_window() {
    let budget = budget(2, 10);
    assert!(budget.try_spend(0, 2).is_ok());
    for now in [1 << 20, 1 << 36, (1 << 42) + 5, u64::MAX] {
        assert_eq!(budget.remaining(now), 2, "at {now}");
        assert!(budget.try_spend(now, 2).is_ok(), "at {now}");
        assert!(budget.try_spend(now, 1).is_err(), "at {now}");
    }
}

#[test]
fn oversized_and_free_spends_are_answered_at_once() {
    let budget = budget(2, 10);
    let denied = budget.try_spend(0, 3).unwrap_err();
    assert_eq!(denied.reason(), Reason::Oversized);
    assert_eq!(denied.retry_at_ms(), None);
    assert!(budget.try_spend(0, 0).is_ok());
    assert_eq!(budget.remaining(0), 2);
}

#[test]
fn deposits_do_not_change_a_fixed_window() {
    let budget = budget(1, 10);
    for _ in 0..100 {
        Budget::deposit(&budget, 0);
    }
    assert_eq!(budget.remaining(0), 1);
}

#[test]
fn the_ledger_follows_the_same_rules() {
    let rules = FixedWindowConfig::new()
        .with_max_cost_per_window(3)
        .with_window_ms(1_000)
        .build()
        .unwrap();
    let mut ledger = FixedWindowLedger::new(rules);
    let shared = FixedWindowBudget::new(rules);
    for (now, cost) in [
        (0, 1),
        (10, 2),
        (20, 1),
        (999, 1),
        (1_000, 3),
        (998, 1),
        (5_000, 2),
    ] {
        assert_eq!(
            ledger.try_spend(now, cost),
            shared.try_spend(now, cost),
            "{now} {cost}"
        );
        assert_eq!(ledger.remaining(now), shared.remaining(now));
    }
}
