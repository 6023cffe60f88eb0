//! A ratio-budget spend whose clock reads an older bucket than another spend has
//! already reserved in — a thread that read its clock just before another did
//! and runs just after it, or a single owner's clock stepped back — is charged
//! to the newer bucket and judged on the window ending there. It is never judged
//! on the window that ends just before, whose oldest bucket's withdrawals the
//! newer spend may have wiped while its deposits still count.

#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

use bayesretry_budget::{Ratio, RatioBudget, RatioConfig, RatioLedger};
use proptest::prelude::*;

/// One retry per first attempt, no floor, buckets of 100 ms.
fn one_for_one() -> Ratio {
    RatioConfig::new()
        .with_percent(100.0)
        .with_min_per_sec(0)
        .with_ttl_ms(1_000)
        .build()
        .unwrap()
}

#[test]
fn a_lagging_spend_after_a_newer_one_does_not_overspend_the_window() {
    let budget = RatioBudget::new(one_for_one());
    for _ in 0..10 {
        budget.deposit(0);
    }
    let granted = (0..10).filter(|_| budget.try_spend(0, 1).is_ok()).count();
    assert_eq!(granted, 10);
    // a thread that read 1 000 ms (bucket 10, the slot of bucket 0) is refused,
    // and its reservation started that slot afresh
    assert!(budget.try_spend(1_000, 1).is_err());
    // a thread that read 999 ms just before it (bucket 9) runs now: the ten first
    // attempts of buckets 0..=9 have paid for their ten retries already
    let late = (0..10).filter(|_| budget.try_spend(999, 1).is_ok()).count();
    assert_eq!(
        late, 0,
        "{late} more retries granted against 10 first attempts"
    );
}

#[test]
fn the_ledger_is_not_overspent_when_its_clock_steps_back_a_millisecond() {
    let mut ledger = RatioLedger::new(one_for_one());
    for _ in 0..10 {
        ledger.deposit(0);
    }
    for _ in 0..10 {
        ledger.try_spend(0, 1).unwrap();
    }
    assert!(ledger.try_spend(1_000, 1).is_err());
    let late = (0..10).filter(|_| ledger.try_spend(999, 1).is_ok()).count();
    assert_eq!(late, 0);
}

#[test]
fn a_lagging_spend_counts_in_the_newer_window() {
    // the floor alone: 10 retries in any window of 10 s, buckets of 1 s
    let budget = RatioBudget::new(
        RatioConfig::new()
            .with_percent(0.0)
            .with_min_per_sec(1)
            .build()
            .unwrap(),
    );
    let early = (0..20).filter(|_| budget.try_spend(0, 1).is_ok()).count();
    assert_eq!(early, 10);
    // bucket 10: the retries of bucket 0 have left the window
    assert!(budget.try_spend(10_000, 1).is_ok());
    // a thread that read 9 999 ms runs after it: charged to bucket 10, beside it
    let late = (0..20)
        .filter(|_| budget.try_spend(9_999, 1).is_ok())
        .count();
    assert_eq!(late, 9);
    assert_eq!(budget.balance(9_999), 0);
    // so nine tenths of a second on, the window of buckets 10..=19 is still full;
    // charged to bucket 9, the late retries would have left it already
    let after = (0..20)
        .filter(|_| budget.try_spend(19_900, 1).is_ok())
        .count();
    assert_eq!(after, 0, "{after} more retries within 10 s of ten");
}

#[derive(Clone, Debug)]
enum Op {
    Advance(u64),
    /// The next reading lags the newest one by this many milliseconds.
    Lag(u64),
    Deposit(u8),
    Spend(u32),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        2 => (0_u64..3_000).prop_map(Op::Advance),
        2 => (0_u64..1_000).prop_map(Op::Lag),
        3 => (0_u8..20).prop_map(Op::Deposit),
        5 => (0_u32..6).prop_map(Op::Spend),
    ];
    proptest::collection::vec(op, 1..400)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Clock readings that lag the newest by up to nine buckets: every retry
    /// granted fits the window ending at the newest bucket any spend has asked
    /// for, counting every retry charged there and the first attempts by their
    /// own readings.
    #[test]
    fn a_lagging_clock_never_lets_a_window_exceed_its_allowance(
        percent in 0.0_f64..200.0,
        ttl_ms in 1_000_u64..20_000,
        min_per_sec in 0_u32..5,
        start in 20_000_u64..1_000_000,
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
        let mut newest = start;
        let mut lag = 0;
        // the newest bucket a spend has asked for
        let mut spent_in: Option<u64> = None;
        let mut deposits: Vec<u64> = Vec::new();
        let mut withdrawals: Vec<(u64, u64)> = Vec::new();
        let in_window = |event: u64, bucket: u64| event <= bucket && bucket - event < 10;
        for op in ops {
            // a reading lags the newest by less than nine buckets
            let now = newest - lag.min(bucket_ms * 9 - 1);
            match op {
                Op::Advance(ms) => {
                    newest += ms;
                    lag = 0;
                }
                Op::Lag(ms) => lag = ms * ttl_ms / 1_000,
                Op::Deposit(n) => {
                    for _ in 0..n {
                        ledger.deposit(now);
                        deposits.push(now / bucket_ms);
                    }
                }
                Op::Spend(0) => prop_assert!(ledger.try_spend(now, 0).is_ok()),
                Op::Spend(cost) => {
                    let charged = spent_in.map_or(now / bucket_ms, |b| b.max(now / bucket_ms));
                    spent_in = Some(charged);
                    let answer = ledger.try_spend(now, cost);
                    if answer.is_ok() {
                        let d = deposits.iter().filter(|&&b| in_window(b, charged)).count() as u64;
                        let w: u64 = withdrawals
                            .iter()
                            .filter(|&&(b, _)| in_window(b, charged))
                            .map(|&(_, c)| c)
                            .sum();
                        let allowance = rules.allowance(d);
                        prop_assert!(
                            w + u64::from(cost) <= allowance,
                            "read {} (newest {}): {} + {} retries for an allowance of {}",
                            now, newest, w, cost, allowance
                        );
                        withdrawals.push((charged, u64::from(cost)));
                    }
                }
            }
        }
    }
}
