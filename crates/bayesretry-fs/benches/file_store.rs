//! Saving and loading a snapshot of 100 000 contexts.
//!
//! Groups, all on one snapshot of 100 000 contexts (25 000 endpoints × 4
//! attempts, one writer; about 16 MB of JSON), in a directory of the system's
//! temporary directory, so on whatever disk that is:
//!
//! - `save`: [`FileStore::save`] — serialise, lock, write, fsync, link the
//!   backup, rename, fsync the directory; beside it `to-json`, the
//!   serialisation alone, and `plain-write`, the same bytes written with
//!   `fs::write` (no temporary file, no fsync, no backup, no lock): what the
//!   durability costs on top;
//! - `save-merged`: [`FileStore::save_merged`] of the same snapshot over a
//!   file holding it — read, parse, merge, write;
//! - `load`: [`FileStore::load`], read and checked.
//!
//! The target is a save under 200 ms. Run: `cargo bench -p bayesretry-fs --bench file_store`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "bench setup on fixed, known-good inputs"
)]

use core::hint::black_box;
use core::time::Duration;
use std::fs;

use bayesretry_fs::FileStore;
use bayesretry_store::{Context, ErrorClass, PosteriorStore, Snapshot, StoreConfig, WriterId};
use criterion::{Criterion, criterion_group, criterion_main};

const CONTEXTS: usize = 100_000;
const ATTEMPTS: u32 = 4;

/// A snapshot of `CONTEXTS` contexts, each with a few outcomes.
fn snapshot() -> Snapshot {
    let store = StoreConfig::new()
        .with_max_contexts(2 * CONTEXTS)
        .with_writer(WriterId::from_seed(1))
        .with_hash_seed(7)
        .build()
        .unwrap();
    let classes = [ErrorClass::Http(429), ErrorClass::Timeout];
    let endpoints = CONTEXTS / ATTEMPTS as usize;
    for e in 0..endpoints {
        let name = format!("api-{e:05}.example.com/v1/chat");
        for attempt in 1..=ATTEMPTS {
            let ctx = Context::new(&name, attempt, classes[e % 2]);
            for k in 0..3_u64 {
                store.observe(&ctx, (e as u64 + k) % 3 != 0, 1_000 + k);
            }
        }
    }
    let snapshot = store.snapshot(2_000);
    assert_eq!(snapshot.len(), CONTEXTS);
    snapshot
}

fn bench(c: &mut Criterion) {
    let snapshot = snapshot();
    let dir = tempfile::tempdir().unwrap();
    let file = FileStore::open(dir.path().join("evidence.json")).unwrap();
    file.save(&snapshot).unwrap();
    let bytes = fs::metadata(file.path()).unwrap().len();
    println!("snapshot file: {CONTEXTS} contexts, {bytes} bytes");

    let mut save = c.benchmark_group("save");
    save.sample_size(20)
        .measurement_time(Duration::from_secs(8));
    save.bench_function("file-store-100k", |b| {
        b.iter(|| file.save(black_box(&snapshot)).unwrap());
    });
    save.bench_function("to-json-100k", |b| {
        b.iter(|| black_box(&snapshot).to_json());
    });
    let plain = dir.path().join("plain.json");
    save.bench_function("plain-write-100k", |b| {
        b.iter(|| fs::write(&plain, black_box(&snapshot).to_json()).unwrap());
    });
    save.finish();

    let mut merged = c.benchmark_group("save-merged");
    merged
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    merged.bench_function("file-store-100k", |b| {
        b.iter(|| file.save_merged(black_box(&snapshot)).unwrap());
    });
    merged.finish();

    let mut load = c.benchmark_group("load");
    load.sample_size(20)
        .measurement_time(Duration::from_secs(8));
    load.bench_function("file-store-100k", |b| {
        b.iter(|| file.load().unwrap());
    });
    load.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
