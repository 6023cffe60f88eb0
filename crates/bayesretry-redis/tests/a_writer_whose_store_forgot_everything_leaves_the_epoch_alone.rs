//! A fleet goes quiet for longer than its stores keep evidence (64
//! half-lives): each writer's store forgets every context, and its sync
//! deletes them from Redis too, emptying the change log. That is no loss of
//! the fleet's data: once Redis holds what the stores hold (nothing), the
//! rounds that follow find the same epoch, round after round, instead of
//! each taking the empty log for a lost one and making the whole fleet push
//! and pull everything again.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use alloc::sync::Arc;
use core::time::Duration;

use bayesretry_policy::ManualClock;
use bayesretry_redis::Fleet;
use bayesretry_store::{Context, ErrorClass, HalfLife, PosteriorStore, StoreConfig, WriterId};

extern crate alloc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_whose_store_forgot_everything_leaves_the_epoch_alone() {
    let Some(url) =
        common::server_url("a_writer_whose_store_forgot_everything_leaves_the_epoch_alone")
    else {
        return;
    };
    let namespace = common::namespace("forgot-everything");
    let clock = ManualClock::new(1_000_000);
    let config = common::manual_rounds(url.clone(), namespace.clone()).with_clock(clock.clone());
    let store = Arc::new(
        StoreConfig::new()
            .with_writer(WriterId::new(9))
            .with_half_life(HalfLife::new(1_000.0).unwrap())
            .build()
            .unwrap(),
    );
    let fleet = Fleet::start(config, store.clone()).unwrap();
    // more contexts than the sync lets pile up before it lets go of any
    for i in 0..1_500 {
        let name = format!("customer-{i}.example");
        store.observe(
            &Context::new(&name, 1, ErrorClass::Timeout),
            false,
            1_000_000,
        );
    }
    fleet.sync_now().await.unwrap();

    // quiet for 100 half-lives: the store forgets it all, and so does Redis
    clock.advance(Duration::from_secs(100));
    fleet.sync_now().await.unwrap();
    let mut conn = common::admin(&url);
    let logged: u64 = redis::cmd("ZCARD")
        .arg(format!("{{{namespace}}}:log"))
        .query(&mut conn)
        .unwrap();
    assert_eq!(logged, 0, "the log follows the store");

    // At most the round that finds the log emptied may take it for a loss;
    // none after it.
    fleet.sync_now().await.unwrap();
    let settled = fleet.stats().resyncs;
    let epoch: Option<String> = redis::cmd("GET")
        .arg(format!("{{{namespace}}}:epoch"))
        .query(&mut conn)
        .unwrap();
    for _ in 0..5 {
        clock.advance(Duration::from_secs(1));
        fleet.sync_now().await.unwrap();
    }
    let now: Option<String> = redis::cmd("GET")
        .arg(format!("{{{namespace}}}:epoch"))
        .query(&mut conn)
        .unwrap();
    assert_eq!(now, epoch, "a new epoch for a fleet that lost nothing");
    assert_eq!(fleet.stats().resyncs, settled, "{:?}", fleet.stats());
}
