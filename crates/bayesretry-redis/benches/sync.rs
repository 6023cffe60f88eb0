//! Decision latency with fleet sync running beside it, against the plain
//! in-memory store; and sync throughput (context updates pushed and pulled per
//! second, batched) against a local Redis.
//!
//! Needs `BAYESRETRY_REDIS_URL` (a local `redis-server`); without it only the
//! plain decision is measured.

#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a bench"
)]

extern crate alloc;

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, Ordering};
use core::time::Duration;

use bayesretry_policy::{Context, ErrorClass, RetryPolicy};
use bayesretry_redis::{Fleet, FleetConfig};
use bayesretry_store::{
    Evidence, MemoryStore, PosteriorStore, Snapshot, SnapshotEntry, StoreConfig, WriterId,
};
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};

/// Contexts in every store: 100 endpoints × 10 attempts.
fn fill(observe: impl Fn(&Context<'_>, bool)) {
    for e in 0..100 {
        let endpoint = format!("endpoint-{e}");
        for attempt in 1..=10 {
            let ctx = Context::new(&endpoint, attempt, ErrorClass::Http(503));
            for i in 0..5 {
                observe(&ctx, i % 2 == 0);
            }
        }
    }
}

fn policy() -> RetryPolicy {
    let policy = RetryPolicy::builder().with_seed(7).build().unwrap();
    fill(|ctx, ok| policy.observe(ctx, ok));
    policy
}

fn namespace(what: &str) -> String {
    format!("bench-{what}-{}", std::process::id())
}

fn decision(c: &mut Criterion, runtime: &tokio::runtime::Runtime, url: Option<&str>) {
    let ctx = Context::new("endpoint-42", 3, ErrorClass::Http(503));
    let mut group = c.benchmark_group("decision");
    let plain = policy();
    group.bench_function("memory store", |b| b.iter(|| plain.should_retry(&ctx)));

    if let Some(url) = url {
        // The measured policy syncs every 100 ms; a second member of the
        // fleet changes all of its 1 000 contexts as often, so every round
        // pushes, pulls and merges a thousand entries.
        let config = FleetConfig::new(url)
            .with_namespace(namespace("decision"))
            .with_interval(Duration::from_millis(100));
        let synced = policy();
        let _guard = runtime.enter();
        let fleet = Fleet::start(config.clone(), synced.clone()).unwrap();
        let other = Arc::new(MemoryStore::new());
        let other_fleet = Fleet::start(config, other.clone()).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let churn = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut now = 0;
                while !stop.load(Ordering::Relaxed) {
                    now += 1;
                    fill(|ctx, ok| other.observe(ctx, ok, now));
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        };
        runtime.block_on(fleet.sync_now()).unwrap();
        runtime.block_on(fleet.sync_now()).unwrap();
        // The same evidence (every writer's) merged once into a policy with
        // no sync: the store's own cost of holding a fleet's evidence, apart
        // from the sync's. Measured below, once the sync and the churn have
        // stopped, so that their work does not share the cores with it.
        let loaded = policy();
        loaded.load(&synced.snapshot());
        group.bench_function("memory store, fleet sync running", |b| {
            b.iter(|| synced.should_retry(&ctx));
        });
        stop.store(true, Ordering::Relaxed);
        churn.join().unwrap();
        let stats = fleet.stats();
        eprintln!("sync during the decision bench: {stats:?}");
        assert!(stats.connected && stats.pulled > 0, "sync was active");
        drop(other_fleet);
        drop(fleet);
        group.bench_function("memory store holding the fleet's evidence, no sync", |b| {
            b.iter(|| loaded.should_retry(&ctx));
        });
    }
    group.finish();
}

/// A snapshot of `n` contexts of one writer, every sequence number `seq`.
fn snapshot(n: usize, seq: u64) -> Snapshot {
    let evidence = Evidence::new(3.0, 2.0).unwrap();
    let entries = (0..n)
        .map(|i| {
            let endpoint = format!("endpoint-{}", i / 10);
            let attempt = u32::try_from(i % 10).unwrap() + 1;
            SnapshotEntry::new(
                &endpoint,
                attempt,
                "http-503",
                WriterId::new(9),
                seq,
                evidence,
                seq,
            )
            .unwrap()
        })
        .collect();
    Snapshot::from_entries(seq, entries)
}

fn throughput(c: &mut Criterion, runtime: &tokio::runtime::Runtime, url: &str) {
    const N: usize = 10_000;
    let mut group = c.benchmark_group("sync");
    group.throughput(Throughput::Elements(N as u64));
    group.sample_size(20);
    let config = FleetConfig::new(url).with_namespace(namespace("throughput"));
    let fleet = {
        let _guard = runtime.enter();
        Fleet::without_evidence(config.clone()).unwrap()
    };
    let mut seq = 0;
    group.bench_function("push 10 000 context updates", |b| {
        b.iter_batched(
            || {
                seq += 1;
                snapshot(N, seq)
            },
            |snapshot| {
                let applied = runtime.block_on(fleet.push(&snapshot)).unwrap();
                assert_eq!(applied, N as u64);
            },
            BatchSize::LargeInput,
        );
    });
    group.bench_function("pull and merge 10 000 context updates", |b| {
        b.iter_batched(
            || {
                let store = Arc::new(
                    StoreConfig::new()
                        .with_writer(WriterId::new(1))
                        .build()
                        .unwrap(),
                );
                let _guard = runtime.enter();
                let member = Fleet::start(
                    config.clone().with_interval(Duration::from_secs(60)),
                    store.clone(),
                )
                .unwrap();
                (member, store)
            },
            |(member, store)| {
                runtime.block_on(member.sync_now()).unwrap();
                assert_eq!(member.stats().pulled, N as u64);
                store
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

fn benches(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let url = std::env::var("BAYESRETRY_REDIS_URL").ok();
    if url.is_none() {
        eprintln!("BAYESRETRY_REDIS_URL is not set: only the plain decision is measured");
    }
    decision(c, &runtime, url.as_deref());
    if let Some(url) = url {
        throughput(c, &runtime, &url);
    }
}

criterion_group!(sync, benches);
criterion_main!(sync);
