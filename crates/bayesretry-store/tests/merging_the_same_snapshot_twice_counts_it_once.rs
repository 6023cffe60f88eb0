//! Snapshots carry each writer's evidence apart, with a sequence number per
//! context, so merging is idempotent: the same snapshot merged twice (or a
//! store's own snapshot merged back into it) counts once. Newer snapshots of
//! a writer replace older ones, and decay runs from each writer's own update.
#![cfg(feature = "serde")]
#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

use core::num::NonZeroU64;

use bayesretry_store::{
    Context, ErrorClass, HalfLife, MemoryStore, PosteriorStore, Snapshot, StoreConfig, WriterId,
};

fn store(writer: u64) -> MemoryStore {
    StoreConfig::new()
        .with_writer(WriterId::new(writer))
        .with_hierarchical_priors(false)
        .build()
        .unwrap()
}

const CTX: Context<'static> = Context::new("api", 1, ErrorClass::Http(429));

#[test]
fn merging_the_same_snapshot_twice_counts_it_once() {
    let a = store(1);
    for _ in 0..5 {
        a.observe(&CTX, true, 0);
    }
    let snapshot = a.snapshot(0);
    let b = store(2);
    b.observe(&CTX, false, 0);
    b.merge(&snapshot);
    b.merge(&snapshot);
    let e = b.evidence(&CTX, 0);
    assert_eq!((e.successes(), e.failures()), (5.0, 1.0));
    // A store's own snapshot merged back changes nothing either.
    let own = b.snapshot(0);
    b.merge(&own);
    assert_eq!(b.evidence(&CTX, 0), e);
    assert_eq!(b.snapshot(0), own);
}

#[test]
fn a_newer_snapshot_of_a_writer_replaces_its_older_one() {
    let a = store(1);
    a.observe(&CTX, true, 0);
    let older = a.snapshot(0);
    a.observe(&CTX, true, 1);
    a.observe(&CTX, false, 2);
    let newer = a.snapshot(2);
    let b = store(2);
    // In either order, the newer one wins, and nothing is added up.
    b.merge(&newer);
    b.merge(&older);
    let e = b.evidence(&CTX, 2);
    assert_eq!((e.successes(), e.failures()), (2.0, 1.0));
    assert_eq!(older.clone().merged(&newer), newer.clone().merged(&older));
}

#[test]
fn loading_a_snapshot_restores_a_writer_that_goes_on_writing() {
    let a = store(1);
    a.observe(&CTX, true, 0);
    a.observe(&CTX, true, 0);
    let saved = a.snapshot(0);
    // The process restarts with the same writer id and loads its snapshot.
    let restarted = store(1);
    restarted.load(&saved);
    assert_eq!(restarted.snapshot(0), saved);
    restarted.observe(&CTX, false, 1);
    // Its new entry outranks the saved one wherever both meet.
    let mut merged = saved.clone();
    merged.merge(&restarted.snapshot(1));
    assert_eq!(merged, restarted.snapshot(1));
    let e = merged.entries()[0].evidence();
    assert_eq!((e.successes(), e.failures()), (2.0, 1.0));
}

#[test]
fn each_writer_decays_from_its_own_last_update() {
    let minute = HalfLife::from_ms(NonZeroU64::new(60_000).unwrap());
    let make = |writer| {
        StoreConfig::new()
            .with_writer(WriterId::new(writer))
            .with_half_life(minute)
            .with_hierarchical_priors(false)
            .build()
            .unwrap()
    };
    let (a, b, c) = (make(1), make(2), make(3));
    for _ in 0..8 {
        a.observe(&CTX, false, 0); // eight failures at t = 0
    }
    for _ in 0..4 {
        b.observe(&CTX, true, 60_000); // four successes a minute later
    }
    c.merge(&a.snapshot(60_000));
    c.merge(&b.snapshot(60_000));
    // At t = 120 s: a's failures are two half-lives old, b's successes one.
    let e = c.evidence(&CTX, 120_000);
    assert_eq!((e.successes(), e.failures()), (2.0, 2.0));
    // The snapshot keeps raw evidence and stamps, not decayed values.
    let entries = c.snapshot(120_000);
    let stamps: Vec<u64> = entries
        .entries()
        .iter()
        .map(|e| e.updated_at_ms())
        .collect();
    assert_eq!(stamps, [0, 60_000]);
}

#[test]
fn an_empty_snapshot_merges_to_nothing() {
    let a = store(1);
    a.merge(&Snapshot::new());
    assert!(a.is_empty());
    assert!(a.snapshot(0).is_empty());
}
