//! Threads hammering one shared budget with the same manual time never get more
//! than the window allows, whatever the interleaving. No thread sleeps: a barrier
//! keeps them in the same window, and the time is passed in.

extern crate alloc;

use alloc::sync::Arc;
use std::sync::Barrier;
use std::thread;

use bayesretry_budget::{Budget, FixedWindowBudget, FixedWindowConfig, RatioBudget, RatioConfig};

const THREADS: usize = 4;

#[test]
fn the_fixed_window_grants_at_most_its_cap_per_window_across_threads() {
    const CAP: u32 = 40;
    const WINDOW_MS: u64 = 100;
    const WINDOWS: u64 = 200;
    let budget = FixedWindowBudget::new(
        FixedWindowConfig::new()
            .with_max_cost_per_window(CAP)
            .with_window_ms(WINDOW_MS)
            .build()
            .unwrap(),
    );
    let barrier = Barrier::new(THREADS);
    // granted[thread][window]: the cost each thread was granted in each window.
    let granted: Vec<Vec<u64>> = thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS as u64)
            .map(|t| {
                let (budget, barrier) = (&budget, &barrier);
                s.spawn(move || {
                    let mut mine = vec![0_u64; WINDOWS as usize];
                    for (w, slot) in mine.iter_mut().enumerate() {
                        barrier.wait();
                        for k in 0..60_u64 {
                            let now = w as u64 * WINDOW_MS + (k * 7 + t * 13) % WINDOW_MS;
                            let cost = 1 + ((k + t) % 3) as u32;
                            if budget.try_spend(now, cost).is_ok() {
                                *slot += u64::from(cost);
                            }
                        }
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let mut total = 0;
    for w in 0..WINDOWS as usize {
        let spent: u64 = granted.iter().map(|per_window| per_window[w]).sum();
        assert!(
            spent <= u64::from(CAP),
            "window {w}: granted {spent} > {CAP}"
        );
        total += spent;
    }
    // 4 threads asking for ~120 each per window: the cap binds, and is mostly used.
    assert!(total > u64::from(CAP) * WINDOWS / 2, "granted only {total}");
}

#[test]
fn the_ratio_budget_grants_at_most_its_allowance_across_threads() {
    const BUCKET_MS: u64 = 100;
    const BUCKETS_RUN: u64 = 60;
    let rules = RatioConfig::new()
        .with_percent(20.0)
        .with_ttl_ms(BUCKET_MS * 10)
        .with_min_per_sec(5)
        .build()
        .unwrap();
    let budget = RatioBudget::new(rules);
    let barrier = Barrier::new(THREADS);
    // Per thread and bucket: (first attempts deposited, retries granted).
    let counts: Vec<Vec<(u64, u64)>> = thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS as u64)
            .map(|t| {
                let (budget, barrier) = (&budget, &barrier);
                s.spawn(move || {
                    let mut mine = vec![(0_u64, 0_u64); BUCKETS_RUN as usize];
                    for (b, slot) in mine.iter_mut().enumerate() {
                        barrier.wait();
                        // Deposits and spends interleave within the bucket.
                        for k in 0..50_u64 {
                            let now = b as u64 * BUCKET_MS + (k * 3 + t) % BUCKET_MS;
                            if (k + t) % 2 == 0 {
                                budget.deposit(now);
                                slot.0 += 1;
                            }
                            if budget.try_spend(now, 1).is_ok() {
                                slot.1 += 1;
                            }
                        }
                    }
                    mine
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    let per_bucket: Vec<(u64, u64)> = (0..BUCKETS_RUN as usize)
        .map(|b| {
            counts
                .iter()
                .fold((0, 0), |(d, g), per| (d + per[b].0, g + per[b].1))
        })
        .collect();
    let mut total_granted = 0;
    for b in 0..per_bucket.len() {
        let window = &per_bucket[b.saturating_sub(9)..=b];
        let deposits: u64 = window.iter().map(|&(d, _)| d).sum();
        let granted: u64 = window.iter().map(|&(_, g)| g).sum();
        let allowance = rules.allowance(deposits);
        assert!(
            granted <= allowance,
            "bucket {b}: {granted} retries granted for an allowance of {allowance}"
        );
        total_granted += per_bucket[b].1;
    }
    assert!(total_granted > 0);
}

#[test]
fn the_shared_budgets_are_send_and_sync() {
    fn shared<T: Budget + Send + Sync>() {}
    shared::<FixedWindowBudget>();
    shared::<RatioBudget>();
    shared::<Arc<RatioBudget>>();
    shared::<&'static FixedWindowBudget>();
}
