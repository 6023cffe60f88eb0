//! One decision on a warm context, per strategy.
//!
//! The store is an in-bench `PosteriorStore` holding its posteriors in an array
//! indexed by attempt number, so the figures are the decision itself — the hard
//! checks, the cost lookup, the posterior arithmetic — plus the cheapest possible
//! lookup, not a map.
//!
//! Groups:
//! - `decide/greedy`: the posterior-mean rule, one lookup;
//! - `decide/lookahead-4`: lookahead after the first of 4 attempts, three lookups
//!   and the backward recursion;
//! - `decide/thompson`: one exact quantile draw for a given `u`, and (feature
//!   `rand`) one sampled draw from a seeded generator;
//! - `decide/hard-stop`: a retry refused by an open breaker, no lookup;
//! - `memory-store/*`: greedy and lookahead again over `bayesretry-store`'s
//!   `MemoryStore` (default settings: hierarchical priors, decay) on a warm
//!   context, the store lookup a real caller pays included.
//!
//! Run: `cargo bench -p bayesretry-decision --all-features` (or `cargo xtask bench`).

#![allow(
    clippy::unwrap_used,
    reason = "bench setup on fixed, known-good inputs"
)]

use core::hint::black_box;

use bayesretry_beta::Beta;
use bayesretry_cost::CostModel;
use bayesretry_decision::{Config, DecisionEngine, Situation, Strategy};
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore};
use criterion::{Criterion, criterion_group, criterion_main};

/// Posteriors by attempt number; attempts past the end share the last one.
struct ArrayStore {
    posteriors: [Beta; 8],
}

impl ArrayStore {
    fn new() -> ArrayStore {
        let mut posteriors = [Beta::uniform(); 8];
        for (attempt, posterior) in posteriors.iter_mut().enumerate() {
            // the next attempt is poor, later ones better: lookahead's case
            let successes = if attempt == 1 { 1.0 } else { 12.0 };
            *posterior = Beta::uniform().update(successes, 18.0);
        }
        ArrayStore { posteriors }
    }
}

impl PosteriorStore for ArrayStore {
    #[inline]
    fn posterior(&self, ctx: &Context<'_>, _now_ms: u64) -> Beta {
        let last = self.posteriors.len() - 1;
        self.posteriors[(ctx.attempt() as usize).min(last)]
    }

    fn observe(&self, _ctx: &Context<'_>, _success: bool, _now_ms: u64) {}

    fn observe_weighted(&self, _ctx: &Context<'_>, _s: f64, _f: f64, _now_ms: u64) {}
}

fn engine(strategy: Strategy) -> DecisionEngine {
    Config::new(CostModel::new(10.0, 1.0).unwrap())
        .with_strategy(strategy)
        .with_max_attempts(4)
        .build()
        .unwrap()
}

const NOW: u64 = 1_000_000;

fn situation() -> Situation {
    Situation::new()
        .with_deadline_ms(NOW + 30_000)
        .with_delay_ms(500)
        .with_max_retry_after_ms(60_000)
}

fn bench_decide(c: &mut Criterion) {
    let store = ArrayStore::new();
    let ctx = Context::new("api.example.com/v1/chat", 1, ErrorClass::from_status(503));
    let situation = situation();
    let mut g = c.benchmark_group("decide");

    let greedy = engine(Strategy::Greedy);
    g.bench_function("greedy", |b| {
        b.iter(|| {
            greedy.decide(
                black_box(&store),
                black_box(&ctx),
                black_box(&situation),
                black_box(NOW),
            )
        })
    });

    let lookahead = engine(Strategy::Lookahead);
    g.bench_function("lookahead-4", |b| {
        b.iter(|| {
            lookahead.decide(
                black_box(&store),
                black_box(&ctx),
                black_box(&situation),
                black_box(NOW),
            )
        })
    });

    let thompson = engine(Strategy::Thompson);
    g.bench_function("thompson-uniform", |b| {
        b.iter(|| {
            thompson.decide_with_uniform(
                black_box(&store),
                black_box(&ctx),
                black_box(&situation),
                black_box(NOW),
                black_box(0.37),
            )
        })
    });

    #[cfg(feature = "rand")]
    {
        use rand::SeedableRng;
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        g.bench_function("thompson-rng", |b| {
            b.iter(|| {
                thompson.decide_with_rng(
                    black_box(&store),
                    black_box(&ctx),
                    black_box(&situation),
                    black_box(NOW),
                    &mut rng,
                )
            })
        });
    }

    let open = situation.with_breaker_open(true);
    g.bench_function("hard-stop", |b| {
        b.iter(|| {
            lookahead.decide(
                black_box(&store),
                black_box(&ctx),
                black_box(&open),
                black_box(NOW),
            )
        })
    });
    g.finish();
}

/// A `MemoryStore` that has seen a few outcomes in every context the benches read.
fn warm_memory_store(ctx: &Context<'_>) -> MemoryStore {
    let store = MemoryStore::new();
    for attempt in 1..4 {
        let at = ctx.with_attempt(attempt);
        for outcome in 0..30 {
            store.observe(&at, outcome % 3 == 0, NOW - 1_000);
        }
    }
    store
}

fn bench_memory_store(c: &mut Criterion) {
    let ctx = Context::new("api.example.com/v1/chat", 1, ErrorClass::from_status(503));
    let store = warm_memory_store(&ctx);
    let situation = situation();
    let mut g = c.benchmark_group("memory-store");

    g.bench_function("posterior", |b| {
        b.iter(|| store.posterior(black_box(&ctx), black_box(NOW)))
    });

    let greedy = engine(Strategy::Greedy);
    g.bench_function("greedy", |b| {
        b.iter(|| {
            greedy.decide(
                black_box(&store),
                black_box(&ctx),
                black_box(&situation),
                black_box(NOW),
            )
        })
    });

    let lookahead = engine(Strategy::Lookahead);
    g.bench_function("lookahead-4", |b| {
        b.iter(|| {
            lookahead.decide(
                black_box(&store),
                black_box(&ctx),
                black_box(&situation),
                black_box(NOW),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, bench_decide, bench_memory_store);
criterion_main!(benches);
