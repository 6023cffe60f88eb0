//! Threads spending on one shared budget and refunding some of their grants,
//! at the same time as others spend, never get more than the window allows:
//! what stays spent is at most the cap (or the allowance), and the room the
//! budget reads at the end is exactly what was not kept. No thread sleeps: a
//! barrier starts them together, and the time is passed in.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

use std::sync::Barrier;
use std::thread;

use bayesretry_budget::{Budget, FixedWindowBudget, FixedWindowConfig, RatioBudget, RatioConfig};

const THREADS: u64 = 4;
const ROUNDS: u64 = 20_000;

/// Each thread spends `ROUNDS` times at `now_ms` (its clock a little behind
/// or ahead of the others' within the window), refunds two grants in three at
/// once and keeps the rest; returns what the threads kept.
fn race(budget: &(dyn Budget + Sync), now_ms: impl Fn(u64, u64) -> u64 + Sync) -> u64 {
    let barrier = Barrier::new(THREADS as usize);
    thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (budget, barrier, now_ms) = (budget, &barrier, &now_ms);
                s.spawn(move || {
                    barrier.wait();
                    let mut kept = 0_u64;
                    for k in 0..ROUNDS {
                        let at = now_ms(t, k);
                        if budget.try_spend(at, 1).is_ok() {
                            if (k + t) % 3 == 0 {
                                kept += 1;
                            } else {
                                budget.refund(at, 1);
                            }
                        }
                    }
                    kept
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

#[test]
fn a_fixed_window_refunded_under_contention_keeps_exactly_what_was_kept() {
    const CAP: u32 = 50;
    let budget = FixedWindowBudget::new(
        FixedWindowConfig::new()
            .with_max_cost_per_window(CAP)
            .with_window_ms(1_000_000)
            .build()
            .unwrap(),
    );
    let kept = race(&budget, |t, k| 1_000 + (k * 7 + t * 13) % 5_000);
    assert!(kept <= u64::from(CAP), "kept {kept} > {CAP}");
    assert_eq!(u64::from(budget.remaining(0)), u64::from(CAP) - kept);
}

#[test]
fn a_ratio_budget_refunded_under_contention_keeps_exactly_what_was_kept() {
    // 50 retries for 100 first attempts, no floor, all in one bucket
    let budget = RatioBudget::new(
        RatioConfig::new()
            .with_percent(50.0)
            .with_min_per_sec(0)
            .build()
            .unwrap(),
    );
    for _ in 0..100 {
        budget.deposit(0);
    }
    let kept = race(&budget, |t, k| (k * 7 + t * 13) % 1_000);
    assert!(kept <= 50, "kept {kept} > 50");
    assert_eq!(budget.balance(0), 50 - i64::try_from(kept).unwrap());
}

#[test]
fn a_ratio_budget_refunded_under_contention_across_its_buckets_never_overspends() {
    // the clocks straddle bucket boundaries: some spends are charged to a
    // newer bucket than their own and refunded to their own
    let budget = RatioBudget::new(
        RatioConfig::new()
            .with_percent(50.0)
            .with_min_per_sec(0)
            .build()
            .unwrap(),
    );
    for _ in 0..100 {
        budget.deposit(0);
    }
    // time runs from 0 to 8 s (within the window of the deposits at 0), each
    // thread's clock up to 300 ms off the others'
    let kept = race(&budget, |t, k| k * 8_000 / ROUNDS + (t * 100) % 300);
    assert!(kept <= 50, "kept {kept} > 50");
    // a refund may be kept (a spend charged past its own bucket counts in the
    // newer one), never given twice
    assert!(budget.balance(8_300) <= 50 - i64::try_from(kept).unwrap());
}
