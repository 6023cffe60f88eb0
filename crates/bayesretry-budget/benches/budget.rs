//! `try_spend` of both budgets side by side with governor's rate limiter check, in
//! the same run and on manual clocks (governor's `FakeRelativeClock`; our `now_ms`).
//!
//! governor is the peer because a retry budget and a rate limiter answer the same
//! question on the hot path — "may this request go now?" — with the same shape of
//! answer (`Ok`, or "not until"). Its keyed limiter (`check_key`, over the `DashMap`
//! store that `RateLimiter::keyed` uses) is the peer to beat; its direct limiter
//! (`check`) is the like-for-like with one unkeyed budget.
//!
//! Each group has a `granted` and a `denied` case, since the two paths differ: a
//! grant writes, a refusal of the fixed window only reads, a refusal of the ratio
//! budget writes its reservation and takes it back. In the `granted` cases the
//! budgets move to a new window every 2^16 calls so they never run dry.
//!
//! Run: `cargo bench -p bayesretry-budget` (or `cargo xtask bench`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "bench setup on fixed, known-good inputs"
)]

use core::hint::black_box;
use core::num::NonZeroU32;

use bayesretry_budget::{FixedWindowBudget, FixedWindowConfig, RatioBudget, RatioConfig};
use criterion::{Criterion, criterion_group, criterion_main};
use governor::clock::FakeRelativeClock;
use governor::{Quota, RateLimiter};

const ENDPOINT: &str = "api.example.com";

fn fixed_window(cap: u32, window_ms: u64) -> FixedWindowBudget {
    FixedWindowBudget::new(
        FixedWindowConfig::new()
            .with_max_cost_per_window(cap)
            .with_window_ms(window_ms)
            .build()
            .unwrap(),
    )
}

fn ratio(percent: f64, min_per_sec: u32) -> RatioBudget {
    RatioBudget::new(
        RatioConfig::new()
            .with_percent(percent)
            .with_ttl_ms(1_000)
            .with_min_per_sec(min_per_sec)
            .build()
            .unwrap(),
    )
}

fn bench_granted(c: &mut Criterion) {
    let mut g = c.benchmark_group("try_spend/granted");

    // One window per millisecond, each roomy enough for the 2^16 calls it sees.
    // The call counters live outside the bench closures, which criterion calls
    // more than once: the clocks must never run backwards.
    let fixed = fixed_window(FixedWindowConfig::MAX_COST, 1);
    let mut calls = 0_u64;
    g.bench_function("bayesretry-fixed-window", |b| {
        b.iter(|| {
            calls += 1;
            fixed.try_spend(black_box(calls >> 16), black_box(1))
        })
    });

    // Buckets of 100 ms, 2^16 calls each; the floor (10^6 retries over the 1 s
    // window) covers the ten buckets of a window.
    let shared = ratio(20.0, 1_000_000);
    let mut calls = 0_u64;
    g.bench_function("bayesretry-ratio", |b| {
        b.iter(|| {
            calls += 1;
            shared.try_spend(black_box((calls >> 16) * 100), black_box(1))
        })
    });

    let clock = FakeRelativeClock::default();
    let quota = Quota::per_second(NonZeroU32::MAX);
    let keyed = RateLimiter::dashmap_with_clock(quota, clock.clone());
    g.bench_function("governor-keyed", |b| {
        b.iter(|| keyed.check_key(black_box(&ENDPOINT)))
    });
    let direct = RateLimiter::direct_with_clock(quota, clock);
    g.bench_function("governor-direct", |b| b.iter(|| direct.check()));
    g.finish();
}

fn bench_denied(c: &mut Criterion) {
    let mut g = c.benchmark_group("try_spend/denied");

    let fixed = fixed_window(1, 60_000);
    fixed.try_spend(0, 1).unwrap();
    g.bench_function("bayesretry-fixed-window", |b| {
        b.iter(|| fixed.try_spend(black_box(1), black_box(1)))
    });

    let shared = ratio(0.0, 0);
    g.bench_function("bayesretry-ratio", |b| {
        b.iter(|| shared.try_spend(black_box(1), black_box(1)))
    });

    let clock = FakeRelativeClock::default();
    let quota = Quota::per_minute(NonZeroU32::MIN);
    let keyed = RateLimiter::dashmap_with_clock(quota, clock.clone());
    keyed.check_key(&ENDPOINT).unwrap();
    g.bench_function("governor-keyed", |b| {
        b.iter(|| keyed.check_key(black_box(&ENDPOINT)))
    });
    let direct = RateLimiter::direct_with_clock(quota, clock);
    direct.check().unwrap();
    g.bench_function("governor-direct", |b| b.iter(|| direct.check()));
    g.finish();
}

fn bench_deposit(c: &mut Criterion) {
    let mut g = c.benchmark_group("deposit");
    let shared = ratio(20.0, 10);
    let mut calls = 0_u64;
    g.bench_function("bayesretry-ratio", |b| {
        b.iter(|| {
            calls += 1;
            shared.deposit(black_box((calls >> 16) * 100));
        })
    });
    g.finish();
}

criterion_group!(benches, bench_granted, bench_denied, bench_deposit);
criterion_main!(benches);
