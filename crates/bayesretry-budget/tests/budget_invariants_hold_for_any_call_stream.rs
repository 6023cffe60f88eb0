//! Properties of both designs over arbitrary streams of deposits, spends and clock
//! moves, checked against a plain model that keeps every event:
//!
//! - the fixed window never grants above its cap, so what remains is never negative
//!   and never above the cap, and it grants exactly when the cost fits;
//! - the ratio budget never lets the window's retries exceed `percent` of its first
//!   attempts plus the floor, its balance is never negative right after a grant, and
//!   it grants exactly when the retry fits.

use bayesretry_budget::{FixedWindowConfig, FixedWindowLedger, RatioConfig, RatioLedger, Reason};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Advance(u64),
    Deposit(u8),
    Spend(u32),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        2 => (0_u64..3_000).prop_map(Op::Advance),
        3 => (0_u8..20).prop_map(Op::Deposit),
        5 => (0_u32..6).prop_map(Op::Spend),
    ];
    proptest::collection::vec(op, 1..400)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn the_fixed_window_never_goes_negative_or_above_its_cap(
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
                    match answer {
                        Ok(()) => model_spent += cost,
                        Err(denied) if cost > cap => {
                            prop_assert_eq!(denied.reason(), Reason::Oversized);
                        }
                        Err(denied) => {
                            prop_assert_eq!(denied.reason(), Reason::Exhausted);
                            prop_assert_eq!(denied.retry_at_ms(), Some(rules.window_end_ms(now)));
                        }
                    }
                    prop_assert!(model_spent <= cap);
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
    fn the_ratio_budget_never_exceeds_its_share_plus_the_floor(
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
        // Every event the ledger accepted, with its bucket.
        let mut deposits: Vec<u64> = Vec::new();
        let mut withdrawals: Vec<(u64, u64)> = Vec::new();
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
                        .filter(|&&(b, _)| in_window(b, bucket))
                        .map(|&(_, c)| c)
                        .sum();
                    let allowance = rules.allowance(d);
                    // A zero cost is always granted, even with the balance below zero.
                    let fits = cost == 0 || w + u64::from(cost) <= allowance;
                    let answer = ledger.try_spend(now, cost);
                    prop_assert_eq!(
                        answer.is_ok(), fits,
                        "cost {} withdrawn {} allowance {} deposits {}", cost, w, allowance, d
                    );
                    if answer.is_ok() {
                        if cost > 0 {
                            withdrawals.push((bucket, u64::from(cost)));
                            prop_assert!(w + u64::from(cost) <= allowance);
                            prop_assert!(ledger.balance(now) >= 0);
                        }
                    } else {
                        let denied = answer.unwrap_err();
                        prop_assert_eq!(denied.reason(), Reason::Exhausted);
                        prop_assert_eq!(denied.retry_at_ms(), Some((bucket + 1) * bucket_ms));
                    }
                }
            }
        }
    }
}
