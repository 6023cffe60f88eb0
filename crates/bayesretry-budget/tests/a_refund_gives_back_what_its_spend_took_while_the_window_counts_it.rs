//! A granted spend whose retry was not made is handed back with `refund`: the
//! room it took is granted again, in the window (or bucket) it was spent in, and
//! only while that window still counts it. A refund never leaves a budget with
//! more room than it would have had without the spend, and the forwarding impls
//! (`&B`, `Arc<B>`) pass it on. Checked on examples, then against a model over
//! arbitrary streams of deposits, spends, refunds and clock moves.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

extern crate alloc;

use alloc::sync::Arc;
use core::sync::atomic::{AtomicU32, Ordering};

use bayesretry_budget::{
    Budget, FixedWindow, FixedWindowBudget, FixedWindowConfig, FixedWindowLedger, Ratio,
    RatioBudget, RatioConfig, RatioLedger,
};
use proptest::prelude::*;

/// Two units of cost per second-long window.
fn two_per_second() -> FixedWindow {
    FixedWindowConfig::new()
        .with_max_cost_per_window(2)
        .with_window_ms(1_000)
        .build()
        .unwrap()
}

/// Half a retry per first attempt, no floor, over a 10 s window of 1 s buckets.
fn half_of_first_attempts() -> Ratio {
    RatioConfig::new()
        .with_percent(50.0)
        .with_min_per_sec(0)
        .build()
        .unwrap()
}

#[test]
fn a_fixed_window_refund_is_granted_again_in_the_same_window() {
    let mut ledger = FixedWindowLedger::new(two_per_second());
    assert!(ledger.try_spend(100, 2).is_ok());
    assert!(ledger.try_spend(200, 1).is_err());
    ledger.refund(100, 1);
    assert_eq!(ledger.remaining(300), 1);
    assert!(ledger.try_spend(300, 1).is_ok());
    assert!(ledger.try_spend(400, 1).is_err());
}

#[test]
fn a_fixed_window_refund_never_adds_room_beyond_the_cap() {
    let mut ledger = FixedWindowLedger::new(two_per_second());
    assert!(ledger.try_spend(100, 1).is_ok());
    ledger.refund(100, 1);
    ledger.refund(100, 1);
    ledger.refund(100, 5);
    assert_eq!(ledger.remaining(100), 2);
    assert!(ledger.try_spend(100, 2).is_ok());
    assert!(ledger.try_spend(100, 1).is_err());
}

#[test]
fn a_fixed_window_refund_after_its_window_rolled_gives_the_new_one_nothing() {
    let mut ledger = FixedWindowLedger::new(two_per_second());
    assert!(ledger.try_spend(900, 2).is_ok());
    // the next window fills, then the spend of the old one is handed back
    assert!(ledger.try_spend(1_100, 2).is_ok());
    ledger.refund(900, 2);
    assert_eq!(ledger.remaining(1_100), 0);
    assert!(ledger.try_spend(1_200, 1).is_err());
}

#[test]
fn a_shared_fixed_window_takes_refunds_through_every_handle() {
    let budget = Arc::new(FixedWindowBudget::new(two_per_second()));
    assert!(budget.try_spend(0, 2).is_ok());
    Budget::refund(&budget, 0, 1);
    assert_eq!(budget.remaining(0), 1);
    Budget::refund(&&*budget, 0, 1);
    assert_eq!(budget.remaining(0), 2);
}

#[test]
fn a_ratio_refund_is_granted_again_while_its_bucket_is_in_the_window() {
    let mut ledger = RatioLedger::new(half_of_first_attempts());
    for _ in 0..4 {
        ledger.deposit(0);
    }
    assert!(ledger.try_spend(500, 1).is_ok());
    assert!(ledger.try_spend(1_500, 1).is_ok());
    assert!(ledger.try_spend(2_500, 1).is_err());
    ledger.refund(500, 1);
    assert_eq!(ledger.balance(2_500), 1);
    assert!(ledger.try_spend(2_500, 1).is_ok());
    assert!(ledger.try_spend(2_600, 1).is_err());
}

#[test]
fn a_ratio_refund_never_adds_room_beyond_the_allowance() {
    let mut ledger = RatioLedger::new(half_of_first_attempts());
    for _ in 0..4 {
        ledger.deposit(0);
    }
    assert!(ledger.try_spend(0, 1).is_ok());
    ledger.refund(0, 1);
    ledger.refund(0, 1);
    ledger.refund(0, 3);
    assert_eq!(ledger.balance(0), 2);
    assert!(ledger.try_spend(0, 2).is_ok());
    assert!(ledger.try_spend(0, 1).is_err());
}

#[test]
fn a_ratio_refund_after_its_bucket_left_the_window_gives_nothing() {
    let mut ledger = RatioLedger::new(half_of_first_attempts());
    for _ in 0..2 {
        ledger.deposit(0);
    }
    assert!(ledger.try_spend(0, 1).is_ok());
    // ten seconds on, the slot of bucket 0 holds bucket 10
    for _ in 0..2 {
        ledger.deposit(10_000);
    }
    assert!(ledger.try_spend(10_000, 1).is_ok());
    ledger.refund(0, 1);
    assert_eq!(ledger.balance(10_000), 0);
    assert!(ledger.try_spend(10_000, 1).is_err());
}

#[test]
fn a_shared_ratio_budget_takes_refunds_through_every_handle() {
    let budget = Arc::new(RatioBudget::new(half_of_first_attempts()));
    for _ in 0..4 {
        budget.deposit(0);
    }
    assert!(budget.try_spend(0, 2).is_ok());
    Budget::refund(&budget, 0, 1);
    assert_eq!(budget.balance(0), 1);
    Budget::refund(&&*budget, 0, 1);
    assert_eq!(budget.balance(0), 2);
}

/// A budget of this crate's callers that knows nothing of refunds: the
/// provided `refund` keeps the spend.
struct Counting(AtomicU32);

impl Budget for Counting {
    fn try_spend(&self, _now_ms: u64, _cost: u32) -> Result<(), bayesretry_budget::Denied> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn deposit(&self, _now_ms: u64) {}
}

#[test]
fn a_budget_without_a_refund_of_its_own_keeps_the_spend() {
    let budget = Counting(0.into());
    assert!(budget.try_spend(0, 1).is_ok());
    budget.refund(0, 1);
    assert_eq!(budget.0.load(Ordering::Relaxed), 1);
}

#[derive(Clone, Debug)]
enum Op {
    Advance(u64),
    Deposit(u8),
    Spend(u32),
    /// Refund the granted spend of this index (modulo their number), once.
    Refund(usize),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        2 => (0_u64..3_000).prop_map(Op::Advance),
        3 => (0_u8..20).prop_map(Op::Deposit),
        5 => (0_u32..6).prop_map(Op::Spend),
        3 => any::<usize>().prop_map(Op::Refund),
    ];
    proptest::collection::vec(op, 1..400)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_fixed_window_with_refunds_grants_exactly_what_its_window_has_left(
        cap in 1_u32..50,
        window_ms in 1_u64..5_000,
        start in 0_u64..1_000_000,
        ops in ops(),
    ) {
        let rules = FixedWindowConfig::new()
            .with_max_cost_per_window(cap)
            .with_window_ms(window_ms)
            .build()
            .unwrap();
        let mut ledger = FixedWindowLedger::new(rules);
        let mut now = start;
        let mut model_window = now / window_ms;
        let mut model_spent = 0_u32;
        // granted spends not refunded yet: (when, cost)
        let mut granted: Vec<(u64, u32)> = Vec::new();
        for op in ops {
            match op {
                Op::Advance(ms) => now += ms,
                Op::Deposit(_) => {}
                Op::Spend(cost) => {
                    if now / window_ms != model_window {
                        model_window = now / window_ms;
                        model_spent = 0;
                    }
                    let fits = model_spent + cost <= cap;
                    let answer = ledger.try_spend(now, cost);
                    prop_assert_eq!(answer.is_ok(), fits, "cost {} spent {}", cost, model_spent);
                    if answer.is_ok() {
                        model_spent += cost;
                        granted.push((now, cost));
                    }
                }
                Op::Refund(i) => {
                    if granted.is_empty() {
                        continue;
                    }
                    let (at, cost) = granted.swap_remove(i % granted.len());
                    ledger.refund(at, cost);
                    // given back only to the window it was spent in, if it is
                    // still the budget's (the stored window moves only on spends)
                    if at / window_ms == model_window {
                        model_spent -= cost;
                    }
                }
            }
            let remaining = ledger.remaining(now);
            prop_assert!(remaining <= cap);
            if now / window_ms == model_window {
                prop_assert_eq!(remaining, cap - model_spent);
            }
        }
    }

    #[test]
    fn a_ratio_budget_with_refunds_grants_exactly_its_share_less_what_is_kept(
        percent in 0.0_f64..200.0,
        ttl_ms in 1_000_u64..20_000,
        min_per_sec in 0_u32..5,
        start in 0_u64..1_000_000,
        ops in ops(),
    ) {
        let rules = RatioConfig::new()
            .with_percent(percent)
            .with_ttl_ms(ttl_ms)
            .with_min_per_sec(min_per_sec)
            .build()
            .unwrap();
        let bucket_ms = rules.bucket_ms();
        let mut ledger = RatioLedger::new(rules);
        let mut now = start;
        let mut deposits: Vec<u64> = Vec::new();
        // withdrawals still counted: (bucket, cost, when)
        let mut withdrawals: Vec<(u64, u64, u64)> = Vec::new();
        let in_window = |event: u64, bucket: u64| event <= bucket && bucket - event < 10;
        for op in ops {
            let bucket = now / bucket_ms;
            match op {
                Op::Advance(ms) => now += ms,
                Op::Deposit(n) => {
                    for _ in 0..n {
                        ledger.deposit(now);
                        deposits.push(bucket);
                    }
                }
                Op::Spend(cost) => {
                    let d = deposits.iter().filter(|&&b| in_window(b, bucket)).count() as u64;
                    let w: u64 = withdrawals
                        .iter()
                        .filter(|&&(b, _, _)| in_window(b, bucket))
                        .map(|&(_, c, _)| c)
                        .sum();
                    let allowance = rules.allowance(d);
                    let fits = cost == 0 || w + u64::from(cost) <= allowance;
                    let answer = ledger.try_spend(now, cost);
                    prop_assert_eq!(
                        answer.is_ok(), fits,
                        "cost {} withdrawn {} allowance {} deposits {}", cost, w, allowance, d
                    );
                    if answer.is_ok() && cost > 0 {
                        withdrawals.push((bucket, u64::from(cost), now));
                        prop_assert!(ledger.balance(now) >= 0);
                    }
                }
                Op::Refund(i) => {
                    if withdrawals.is_empty() {
                        continue;
                    }
                    // a withdrawal out of the window is counted by no later
                    // spend, refunded or not: the model forgets it either way
                    let (_, cost, at) = withdrawals.swap_remove(i % withdrawals.len());
                    ledger.refund(at, u32::try_from(cost).unwrap());
                }
            }
        }
    }
}
