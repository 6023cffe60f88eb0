//! A spend that is granted and refunded leaves the budget no more room than
//! if it had never been asked for, on a clock that runs on or stands still;
//! and on any clock, one that steps back too (a caller whose clock lags
//! another's is charged to the newer window or bucket), a refund gives back
//! at most what its spend took.
//!
//! Two ledgers see the same stream of deposits, spends, refunds and clock
//! moves; one also makes an extra spend and later refunds it, and the other
//! either never asks for it or keeps it. Until their answers part, the one
//! with the refunded spend never grants what the one without it refuses, and
//! never reads more room than the other (than the other plus the refunded
//! unit, against the one that kept it).
//!
//! Against a spend never asked for, a clock that steps back is left out on
//! purpose: a spend in a newer window moves the budget on to it, and callers
//! whose clocks lag are charged there from then on, refunded or not — the
//! window each spend is counted in stays within its cap, but the room a
//! lagging caller reads is not the room it would read had the budget never
//! moved on.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

use bayesretry_budget::{FixedWindowConfig, FixedWindowLedger, RatioConfig, RatioLedger};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    /// Moves the clock by this many ms, back when negative (never below 0).
    Move(i64),
    Deposit(u8),
    Spend(u32),
    /// Refunds the granted spend of this index (modulo their number), once.
    Refund(usize),
}

fn ops(back_ms: i64) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        3 => (-back_ms..3_000).prop_map(Op::Move),
        3 => (0_u8..20).prop_map(Op::Deposit),
        5 => (0_u32..4).prop_map(Op::Spend),
        2 => any::<usize>().prop_map(Op::Refund),
    ];
    proptest::collection::vec(op, 1..300)
}

/// The two sides of the comparison: `with` makes the extra spend.
trait Ledger {
    fn spend(&mut self, now_ms: u64, cost: u32) -> bool;
    fn deposit(&mut self, now_ms: u64);
    fn refund(&mut self, spent_at_ms: u64, cost: u32);
    fn room(&self, now_ms: u64) -> i64;
}

impl Ledger for FixedWindowLedger {
    fn spend(&mut self, now_ms: u64, cost: u32) -> bool {
        self.try_spend(now_ms, cost).is_ok()
    }
    fn deposit(&mut self, _now_ms: u64) {}
    fn refund(&mut self, spent_at_ms: u64, cost: u32) {
        FixedWindowLedger::refund(self, spent_at_ms, cost);
    }
    fn room(&self, now_ms: u64) -> i64 {
        i64::from(self.remaining(now_ms))
    }
}

impl Ledger for RatioLedger {
    fn spend(&mut self, now_ms: u64, cost: u32) -> bool {
        self.try_spend(now_ms, cost).is_ok()
    }
    fn deposit(&mut self, now_ms: u64) {
        RatioLedger::deposit(self, now_ms);
    }
    fn refund(&mut self, spent_at_ms: u64, cost: u32) {
        RatioLedger::refund(self, spent_at_ms, cost);
    }
    fn room(&self, now_ms: u64) -> i64 {
        self.balance(now_ms)
    }
}

/// Runs `ops` on both; `with` also spends 1 before op `extra_at` and refunds
/// it before op `refund_at` (if granted); `without` makes that spend too and
/// keeps it if `kept`. Fails on the first answer or reading of `with` looser
/// than `without` (by more than the refunded unit, if `kept`), before their
/// answers part.
fn compare(
    mut with: impl Ledger,
    mut without: impl Ledger,
    kept: bool,
    start: u64,
    ops: &[Op],
    extra_at: usize,
    refund_at: usize,
) -> Result<(), TestCaseError> {
    let mut now = start;
    let mut granted: Vec<(u64, u32)> = Vec::new();
    let mut extra: Option<u64> = None;
    let mut slack = 0;
    for (i, op) in ops.iter().enumerate() {
        if i == extra_at {
            let granted = with.spend(now, 1);
            if kept {
                // the same state until now: the same answer
                prop_assert_eq!(without.spend(now, 1), granted);
            }
            if granted {
                extra = Some(now);
            }
        }
        if i == refund_at {
            if let Some(at) = extra.take() {
                with.refund(at, 1);
                if kept {
                    slack = 1;
                }
            }
        }
        match *op {
            Op::Move(ms) => now = now.saturating_add_signed(ms),
            Op::Deposit(n) => {
                for _ in 0..n {
                    with.deposit(now);
                    without.deposit(now);
                }
            }
            Op::Spend(cost) => {
                let (a, b) = (with.spend(now, cost), without.spend(now, cost));
                prop_assert!(
                    !a || b || slack > 0,
                    "op {}: granted {} at {} only with the refunded spend",
                    i,
                    cost,
                    now
                );
                if a != b {
                    // parted on the strict side: the states differ from here
                    return Ok(());
                }
                if a {
                    granted.push((now, cost));
                }
            }
            Op::Refund(k) => {
                if !granted.is_empty() {
                    let (at, cost) = granted.swap_remove(k % granted.len());
                    with.refund(at, cost);
                    without.refund(at, cost);
                }
            }
        }
        prop_assert!(
            with.room(now) <= without.room(now) + slack,
            "op {}: more room at {} with the refunded spend: {} > {} + {}",
            i,
            now,
            with.room(now),
            without.room(now),
            slack
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_fixed_window_refund_never_leaves_more_room_than_no_spend(
        cap in 1_u32..20,
        window_ms in 1_u64..4_000,
        start in 0_u64..1_000_000,
        kept in any::<bool>(),
        ops in ops(0),
        extra_at in 0_usize..300,
        gap in 0_usize..300,
    ) {
        fixed_window(cap, window_ms, start, kept, &ops, extra_at, gap)?;
    }

    #[test]
    fn a_fixed_window_refund_on_a_clock_that_steps_back_gives_back_at_most_its_spend(
        cap in 1_u32..20,
        window_ms in 1_u64..4_000,
        start in 0_u64..1_000_000,
        ops in ops(2_500),
        extra_at in 0_usize..300,
        gap in 0_usize..300,
    ) {
        fixed_window(cap, window_ms, start, true, &ops, extra_at, gap)?;
    }

    #[test]
    fn a_ratio_refund_never_leaves_more_room_than_no_spend(
        percent in 0.0_f64..200.0,
        ttl_ms in 1_000_u64..20_000,
        min_per_sec in 0_u32..3,
        start in 0_u64..1_000_000,
        kept in any::<bool>(),
        ops in ops(0),
        extra_at in 0_usize..300,
        gap in 0_usize..300,
    ) {
        ratio(percent, ttl_ms, min_per_sec, start, kept, &ops, extra_at, gap)?;
    }

    #[test]
    fn a_ratio_refund_on_a_clock_that_steps_back_gives_back_at_most_its_spend(
        percent in 0.0_f64..200.0,
        ttl_ms in 1_000_u64..20_000,
        min_per_sec in 0_u32..3,
        start in 0_u64..1_000_000,
        ops in ops(2_500),
        extra_at in 0_usize..300,
        gap in 0_usize..300,
    ) {
        ratio(percent, ttl_ms, min_per_sec, start, true, &ops, extra_at, gap)?;
    }
}

fn fixed_window(
    cap: u32,
    window_ms: u64,
    start: u64,
    kept: bool,
    ops: &[Op],
    extra_at: usize,
    gap: usize,
) -> Result<(), TestCaseError> {
    let rules = FixedWindowConfig::new()
        .with_max_cost_per_window(cap)
        .with_window_ms(window_ms)
        .build()
        .unwrap();
    compare(
        FixedWindowLedger::new(rules),
        FixedWindowLedger::new(rules),
        kept,
        start,
        ops,
        extra_at,
        extra_at + gap,
    )
}

#[expect(clippy::too_many_arguments, reason = "the generated case, passed on")]
fn ratio(
    percent: f64,
    ttl_ms: u64,
    min_per_sec: u32,
    start: u64,
    kept: bool,
    ops: &[Op],
    extra_at: usize,
    gap: usize,
) -> Result<(), TestCaseError> {
    let rules = RatioConfig::new()
        .with_percent(percent)
        .with_ttl_ms(ttl_ms)
        .with_min_per_sec(min_per_sec)
        .build()
        .unwrap();
    compare(
        RatioLedger::new(rules),
        RatioLedger::new(rules),
        kept,
        start,
        ops,
        extra_at,
        extra_at + gap,
    )
}
