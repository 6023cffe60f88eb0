//! `MemoryStore` on the hot path, with fake time, beside governor's keyed rate
//! limiter in the same run.
//!
//! governor is the peer because its keyed limiter does what a store lookup does
//! on every call — hash a key, find its state in a concurrent map (`DashMap`),
//! read and update it — and is the keyed concurrent state most Rust services
//! already run. Its `check_key` is measured on a `FakeRelativeClock`.
//!
//! Groups:
//! - `posterior`: a warm context (default settings: hierarchical priors on, no
//!   decay), the same with hierarchical priors off, with decay and the clock
//!   moving on every call, and a later attempt never seen (what a lookahead
//!   reads); governor's `check_key` beside them;
//! - `observe`: the same cases for an update;
//! - `scaling`: observes on distinct endpoints, from one thread and from two
//!   threads at once; each iteration is one observe per thread, so the
//!   two-thread throughput relative to one thread is `2 × t(one) / t(two)`.
//!   Each thread works on one endpoint of its own, or (`-8-endpoints`) cycles
//!   over eight of its own, some of which then share a shard with the other
//!   thread's. `two-threads-two-stores` gives each thread a store of its own:
//!   nothing shared, the machine's ceiling for the same work.
//!
//! The store is warmed with 10 000 contexts over 500 endpoints first.
//!
//! Run: `cargo bench -p bayesretry-store` (or `cargo xtask bench`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "bench setup on fixed, known-good inputs"
)]

use core::hint::black_box;
use core::num::{NonZeroU32, NonZeroU64};
use core::time::Duration;
use std::sync::Barrier;
use std::thread;
use std::time::Instant;

use bayesretry_store::{Context, ErrorClass, HalfLife, MemoryStore, PosteriorStore, StoreConfig};
use criterion::{Criterion, criterion_group, criterion_main};
use governor::clock::FakeRelativeClock;
use governor::{Quota, RateLimiter};

const CLASSES: [ErrorClass; 4] = [
    ErrorClass::Http(429),
    ErrorClass::Http(503),
    ErrorClass::Timeout,
    ErrorClass::Http(529),
];

fn endpoint(i: usize) -> String {
    format!("api-{i:03}.example.com/v1/chat")
}

/// A store holding 10 000 contexts: 500 endpoints × 4 classes × 5 attempts.
fn warmed(config: StoreConfig) -> MemoryStore {
    let store = config.with_hash_seed(7).build().unwrap();
    for e in 0..500 {
        let name = endpoint(e);
        for class in CLASSES {
            for attempt in 1..=5 {
                let ctx = Context::new(&name, attempt, class);
                for k in 0..4 {
                    store.observe(&ctx, (e + k) % 3 != 0, 0);
                }
            }
        }
    }
    store
}

fn decaying() -> StoreConfig {
    StoreConfig::new().with_half_life(HalfLife::from_ms(NonZeroU64::new(60_000).unwrap()))
}

fn bench_posterior(c: &mut Criterion) {
    let name = endpoint(42);
    let ctx = Context::new(&name, 2, ErrorClass::Http(429));
    let mut g = c.benchmark_group("posterior");

    let store = warmed(StoreConfig::new());
    g.bench_function("warm", |b| {
        b.iter(|| store.posterior(black_box(&ctx), black_box(1_000)))
    });
    let unseen = ctx.with_attempt(9);
    g.bench_function("unseen-later-attempt", |b| {
        b.iter(|| store.posterior(black_box(&unseen), black_box(1_000)))
    });
    let flat = warmed(StoreConfig::new().with_hierarchical_priors(false));
    g.bench_function("warm-flat-prior", |b| {
        b.iter(|| flat.posterior(black_box(&ctx), black_box(1_000)))
    });
    let decay = warmed(decaying());
    let mut now = 0_u64;
    g.bench_function("warm-decay", |b| {
        b.iter(|| {
            now += 1;
            decay.posterior(black_box(&ctx), black_box(now))
        })
    });

    let keyed = RateLimiter::dashmap_with_clock(
        Quota::per_second(NonZeroU32::MAX),
        FakeRelativeClock::default(),
    );
    let key = name.clone();
    keyed.check_key(&key).unwrap();
    g.bench_function("governor-keyed", |b| {
        b.iter(|| keyed.check_key(black_box(&key)))
    });
    g.finish();
}

fn bench_observe(c: &mut Criterion) {
    let name = endpoint(42);
    let ctx = Context::new(&name, 2, ErrorClass::Http(429));
    let mut g = c.benchmark_group("observe");

    let store = warmed(StoreConfig::new());
    let mut k = 0_u32;
    g.bench_function("warm", |b| {
        b.iter(|| {
            k = k.wrapping_add(1);
            store.observe(black_box(&ctx), black_box(k % 4 != 0), black_box(1_000));
        })
    });
    let flat = warmed(StoreConfig::new().with_hierarchical_priors(false));
    g.bench_function("warm-flat-prior", |b| {
        b.iter(|| {
            k = k.wrapping_add(1);
            flat.observe(black_box(&ctx), black_box(k % 4 != 0), black_box(1_000));
        })
    });
    let decay = warmed(decaying());
    let mut now = 0_u64;
    g.bench_function("warm-decay", |b| {
        b.iter(|| {
            now += 1;
            decay.observe(black_box(&ctx), black_box(now % 4 != 0), black_box(now));
        })
    });
    g.finish();
}

/// Runs `threads` threads, each doing `iters` observes on `per_thread` endpoints
/// of its own, in
/// `stores[t % stores.len()]`, and returns the wall time from their common start
/// to the last one's end.
fn observe_in_parallel(
    stores: &[MemoryStore],
    threads: usize,
    per_thread: usize,
    iters: u64,
) -> Duration {
    let names: Vec<Vec<String>> = (0..threads)
        .map(|t| {
            (0..per_thread)
                .map(|i| endpoint(100 + t * per_thread + i))
                .collect()
        })
        .collect();
    let start = Barrier::new(threads + 1);
    thread::scope(|s| {
        let handles: Vec<_> = names
            .iter()
            .enumerate()
            .map(|(t, mine)| {
                let start = &start;
                let store = &stores[t % stores.len()];
                s.spawn(move || {
                    let contexts: Vec<Context<'_>> = mine
                        .iter()
                        .map(|n| Context::new(n, 1, ErrorClass::Http(429)))
                        .collect();
                    start.wait();
                    for i in 0..iters {
                        let ctx = &contexts[(i % per_thread as u64) as usize];
                        store.observe(black_box(ctx), i % 4 != 0, 1_000);
                    }
                })
            })
            .collect();
        start.wait();
        let began = Instant::now();
        for handle in handles {
            handle.join().unwrap();
        }
        began.elapsed()
    })
}

fn bench_scaling(c: &mut Criterion) {
    let shared = [warmed(StoreConfig::new())];
    let mut g = c.benchmark_group("scaling");
    g.bench_function("one-thread", |b| {
        b.iter_custom(|iters| observe_in_parallel(&shared, 1, 1, iters))
    });
    g.bench_function("two-threads", |b| {
        b.iter_custom(|iters| observe_in_parallel(&shared, 2, 1, iters))
    });
    // Eight endpoints per thread: with 32 shards, some of the sixteen share a
    // shard, and the threads meet on its lock now and then.
    g.bench_function("one-thread-8-endpoints", |b| {
        b.iter_custom(|iters| observe_in_parallel(&shared, 1, 8, iters))
    });
    g.bench_function("two-threads-8-endpoints-each", |b| {
        b.iter_custom(|iters| observe_in_parallel(&shared, 2, 8, iters))
    });
    // The ceiling: two threads with a store each share nothing at all, so their
    // throughput over one thread's is what the machine allows.
    let apart = [warmed(StoreConfig::new()), warmed(StoreConfig::new())];
    g.bench_function("two-threads-two-stores", |b| {
        b.iter_custom(|iters| observe_in_parallel(&apart, 2, 1, iters))
    });
    g.finish();
}

criterion_group!(benches, bench_posterior, bench_observe, bench_scaling);
criterion_main!(benches);
