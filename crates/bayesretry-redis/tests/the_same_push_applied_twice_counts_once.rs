//! A push is state, not a delta: the same push applied twice, or a stale one
//! after a newer one, leaves the fleet's counts as they were.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

extern crate alloc;

mod common;

use bayesretry_redis::{Fleet, FleetConfig};
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore, StoreConfig, WriterId};

fn store(writer: u64) -> MemoryStore {
    StoreConfig::new()
        .with_writer(WriterId::new(writer))
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_push_applied_twice_counts_once() {
    let Some(url) = common::server_url("the_same_push_applied_twice_counts_once") else {
        return;
    };
    let config = FleetConfig::new(url).with_namespace(common::namespace("twice"));
    let fleet = Fleet::without_evidence(config.clone()).unwrap();

    let source = store(1);
    let ctx = Context::new("api", 1, ErrorClass::Http(503));
    let other = Context::new("api", 2, ErrorClass::Timeout);
    for i in 0..12 {
        source.observe(&ctx, i % 3 == 0, 10 + i);
    }
    source.observe(&other, false, 30);
    let older = source.snapshot(40);
    source.observe(&ctx, true, 50);
    let newer = source.snapshot(60);

    assert_eq!(fleet.push(&newer).await.unwrap(), 2);
    let first = fleet.pull().await.unwrap();
    // Again, and an older version of the same entries after it: no change.
    assert_eq!(fleet.push(&newer).await.unwrap(), 0);
    assert_eq!(fleet.push(&older).await.unwrap(), 0);
    let second = fleet.pull().await.unwrap();
    assert_eq!(first.entries(), second.entries());
    assert_eq!(first.entries(), newer.entries());

    // A store merging the fleet's evidence through a running sync, round
    // after round, holds the counts once.
    let reader = alloc::sync::Arc::new(store(2));
    let sync = Fleet::start(config, reader.clone()).unwrap();
    for _ in 0..3 {
        sync.sync_now().await.unwrap();
    }
    let evidence = reader.evidence(&ctx, 60);
    assert_eq!((evidence.successes(), evidence.failures()), (5.0, 8.0));
    assert_eq!(reader.evidence(&other, 60).failures(), 1.0);
    assert_eq!(sync.stats().pulled, 2);
}
