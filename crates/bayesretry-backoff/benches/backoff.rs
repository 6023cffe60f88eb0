//! Side-by-side benches of bayesretry-backoff and backon's `ExponentialBuilder`
//! iterator: the time to produce the next delay.
//!
//! Each benchmark builds a fresh iterator and takes its first 16 delays (the
//! growth phase and then the cap, for 1 s doubling up to 60 s), so criterion's
//! time per element is the time per delay, construction included. Both sides use
//! the same base, cap and factor; both are seeded, so every run measures the same
//! delays. The jittered pair is not like for like in what it computes (backon
//! adds a random `[0, d)` on top of the capped delay, this crate draws full
//! jitter in `[0, d]`), but it is in what it costs: one random draw per delay.
//!
//! Run: `cargo bench -p bayesretry-backoff` (or `cargo xtask bench`).

#![allow(
    clippy::unwrap_used,
    reason = "bench setup on fixed, known-good configs"
)]

use core::hint::black_box;
use core::time::Duration;

use backon::{BackoffBuilder, ExponentialBuilder};
use bayesretry_backoff::{Config, Jitter};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const DELAYS: usize = 16;
const BASE: Duration = Duration::from_secs(1);
const MAX: Duration = Duration::from_secs(60);
const SEED: u64 = 42;

fn total(delays: impl Iterator<Item = Duration>) -> Duration {
    delays
        .take(DELAYS)
        .fold(Duration::ZERO, |sum, d| sum.saturating_add(d))
}

fn bench_next_delay(c: &mut Criterion) {
    let mut g = c.benchmark_group("next_delay");
    g.throughput(Throughput::Elements(DELAYS as u64));
    for (name, factor, jitter) in [
        ("x2", 2.0_f32, false),
        ("x1.5", 1.5, false),
        ("x2-jitter", 2.0, true),
    ] {
        let ours = Config::new()
            .with_factor(f64::from(factor))
            .with_base_delay(BASE)
            .with_max_delay(MAX)
            .with_jitter(if jitter { Jitter::Full } else { Jitter::None })
            .build()
            .unwrap();
        let mut theirs = ExponentialBuilder::new()
            .with_factor(factor)
            .with_min_delay(BASE)
            .with_max_delay(MAX)
            .without_max_times()
            .with_jitter_seed(SEED);
        if jitter {
            theirs = theirs.with_jitter();
        }
        g.bench_function(BenchmarkId::new("bayesretry", name), |bench| {
            bench.iter(|| total(black_box(&ours).delays(black_box(SEED))))
        });
        g.bench_function(BenchmarkId::new("backon", name), |bench| {
            bench.iter(|| total(black_box(theirs).build()))
        });
    }
    g.finish();
}

/// The memoryless form, `delay(attempt, random)`, for attempts 1 to 16: no
/// iterator to build, each delay computed from scratch.
fn bench_pure_delay(c: &mut Criterion) {
    let mut g = c.benchmark_group("pure_delay");
    g.throughput(Throughput::Elements(DELAYS as u64));
    for (name, factor) in [("x2", 2.0), ("x1.5", 1.5)] {
        let ours = Config::new()
            .with_factor(factor)
            .with_base_delay(BASE)
            .with_max_delay(MAX)
            .with_jitter(Jitter::Full)
            .build()
            .unwrap();
        g.bench_function(BenchmarkId::new("bayesretry", name), |bench| {
            bench.iter(|| {
                (1..=DELAYS as u32).fold(Duration::ZERO, |sum, attempt| {
                    let random = u64::from(attempt).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    sum.saturating_add(black_box(&ours).delay(attempt, random))
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_next_delay, bench_pure_delay);
criterion_main!(benches);
