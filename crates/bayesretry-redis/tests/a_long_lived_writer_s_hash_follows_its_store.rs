//! A long-lived process writes to ever new contexts (an endpoint per
//! customer, say), more over its life than its store holds: the store
//! forgets the least recently updated. Redis forgets them with it, once the
//! sync lets go of them, instead of keeping every context the writer ever
//! wrote for as long as it lives — a hash, a change log and a newcomer's
//! first pull growing without bound. A context written again after that is
//! pushed as new, and taken for no loss.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use alloc::sync::Arc;

use bayesretry_redis::Fleet;
use bayesretry_store::{Context, ErrorClass, PosteriorStore, StoreConfig, WriterId};

extern crate alloc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_lived_writer_s_hash_follows_its_store() {
    let Some(url) = common::server_url("a_long_lived_writer_s_hash_follows_its_store") else {
        return;
    };
    let namespace = common::namespace("long-lived");
    let config = common::manual_rounds(url.clone(), namespace.clone());
    let store = Arc::new(
        StoreConfig::new()
            .with_writer(WriterId::new(7))
            .with_max_contexts(32)
            .build()
            .unwrap(),
    );
    let fleet = Fleet::start(config.clone(), store.clone()).unwrap();
    let names: Vec<String> = (0..4_000)
        .map(|i| format!("customer-{i}.example"))
        .collect();
    for (i, name) in names.iter().enumerate() {
        store.observe(&Context::new(name, 1, ErrorClass::Timeout), false, 10);
        if i % 16 == 15 {
            fleet.sync_now().await.unwrap();
        }
    }
    fleet.sync_now().await.unwrap();

    let mut conn = common::admin(&url);
    let key = format!("{{{namespace}}}:w:{}", WriterId::new(7));
    let held: u64 = redis::cmd("HLEN").arg(&key).query(&mut conn).unwrap();
    assert!(held < 2_000, "{held} entries in {key} for a store of 32");
    let logged: u64 = redis::cmd("ZCARD")
        .arg(format!("{{{namespace}}}:log"))
        .query(&mut conn)
        .unwrap();
    assert!(logged < 2_000, "{logged} entries in the log");

    // The first context, forgotten long ago, written again: the fleet has it.
    let first = Context::new(&names[0], 1, ErrorClass::Timeout);
    store.observe(&first, true, 20);
    fleet.sync_now().await.unwrap();
    fleet.sync_now().await.unwrap();
    assert_eq!(fleet.stats().resyncs, 0, "{:?}", fleet.stats());
    let reader = common::store(8);
    let newcomer = Fleet::start(config, reader.clone()).unwrap();
    newcomer.sync_now().await.unwrap();
    assert_eq!(reader.evidence(&first, 30).successes(), 1.0);
}
