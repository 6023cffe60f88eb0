//! Reading a context that holds other writers' evidence, against the same
//! contexts holding only the store's own: a posterior read and the greedy
//! decision made from it (retry while `p · 10 − 1 > 0`).
//!
//! Every store holds 1 000 contexts (100 endpoints × 10 attempts of one
//! class), written by its own writer. The `3-writers-merged` cases also hold
//! three other writers' evidence for every context, merged in from their
//! snapshots, stamped at other moments than the store's own. Cases: no decay
//! and a one-minute half-life (the clock at a fixed point after every stamp),
//! each with hierarchical priors on (the default) and off.
//!
//! Run: `cargo bench -p bayesretry-store --all-features --bench writers`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "bench setup on fixed, known-good inputs"
)]

use core::hint::black_box;
use core::num::NonZeroU64;

use bayesretry_store::{
    Context, ErrorClass, HalfLife, MemoryStore, PosteriorStore, StoreConfig, WriterId,
};
use criterion::{Criterion, criterion_group, criterion_main};

/// 100 endpoints × 10 attempts, five outcomes each, at `at_ms`.
fn fill(store: &MemoryStore, at_ms: u64, salt: usize) {
    for e in 0..100 {
        let endpoint = format!("endpoint-{e}");
        for attempt in 1..=10 {
            let ctx = Context::new(&endpoint, attempt, ErrorClass::Http(503));
            for i in 0..5 {
                store.observe(&ctx, (i + salt) % 2 == 0, at_ms);
            }
        }
    }
}

fn store(config: StoreConfig, writer: u64) -> MemoryStore {
    config
        .with_hash_seed(7)
        .with_writer(WriterId::new(writer))
        .build()
        .unwrap()
}

/// The store's own evidence only, or with `others` writers' merged in.
fn filled(config: StoreConfig, others: u64) -> MemoryStore {
    let own = store(config, 1);
    fill(&own, 1_000, 0);
    for w in 0..others {
        let other = store(config, 100 + w);
        fill(&other, 200 + 300 * w, w as usize + 1);
        own.merge(&other.snapshot(1_000));
    }
    own
}

/// The greedy decision on `ctx`: retry while `p · 10 − 1 > 0`.
fn decide(store: &MemoryStore, ctx: &Context<'_>, now_ms: u64) -> bool {
    store.posterior(ctx, now_ms).mean() * 10.0 - 1.0 > 0.0
}

fn bench_writers(c: &mut Criterion) {
    let ctx = Context::new("endpoint-42", 3, ErrorClass::Http(503));
    let half_life = HalfLife::from_ms(NonZeroU64::new(60_000).unwrap());
    let cases = [
        ("no-decay", StoreConfig::new()),
        (
            "no-decay-flat-prior",
            StoreConfig::new().with_hierarchical_priors(false),
        ),
        ("decay", StoreConfig::new().with_half_life(half_life)),
        (
            "decay-flat-prior",
            StoreConfig::new()
                .with_half_life(half_life)
                .with_hierarchical_priors(false),
        ),
    ];
    let mut g = c.benchmark_group("decision");
    for (name, config) in cases {
        for (writers, others) in [("1-writer", 0), ("3-writers-merged", 3)] {
            let store = filled(config, others);
            g.bench_function(format!("{name}/{writers}"), |b| {
                b.iter(|| decide(&store, black_box(&ctx), black_box(5_000)))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_writers);
criterion_main!(benches);
