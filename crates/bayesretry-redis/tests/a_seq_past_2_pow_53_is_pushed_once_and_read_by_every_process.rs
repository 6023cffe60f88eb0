//! Sequence numbers run over the whole `u64` range (SPEC §11.2). Past 2⁵³ a
//! Lua number no longer holds them exactly: a writer's sum of them, kept in
//! the push script, must still match the one its process keeps (or every
//! quiet round pushes everything again), versions one apart must still be
//! told apart, and one of 2⁶³ or more must be written, logged and read like
//! any other, not fail the push halfway.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod common;

use bayesretry_redis::{Fleet, FleetConfig};
use bayesretry_store::{Context, ErrorClass, Evidence, Snapshot, SnapshotEntry, WriterId};

fn config(url: &str, ns: &str) -> FleetConfig {
    common::manual_rounds(url.to_owned(), ns.to_owned())
}

/// A version `seq` of writer `of`'s entry for `db`, attempt 1, timeout.
fn version(of: u64, seq: u64, failures: f64) -> Snapshot {
    let evidence = Evidence::new(1.0, failures).unwrap();
    let entry =
        SnapshotEntry::new("db", 1, "timeout", WriterId::new(of), seq, evidence, 5).unwrap();
    Snapshot::from_entries(5, vec![entry])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seq_past_2_pow_53_is_pushed_once() {
    let Some(url) = common::server_url("a_seq_past_2_pow_53_is_pushed_once") else {
        return;
    };
    let ns = common::namespace("seq-past-2-53");
    let writer = common::store(81);
    writer.merge(&version(0x99, (1 << 53) + 1, 1.0));
    let fleet = Fleet::start(config(&url, &ns), writer.clone()).unwrap();
    fleet.sync_now().await.unwrap();
    fleet.sync_now().await.unwrap();
    let before = fleet.stats();
    for _ in 0..3 {
        fleet.sync_now().await.unwrap();
    }
    let after = fleet.stats();
    assert!(
        after.resyncs == before.resyncs && after.pushed == before.pushed,
        "quiet rounds push everything again: before {before:?}, after {after:?}"
    );

    // the next version, one more, replaces it
    writer.merge(&version(0x99, (1 << 53) + 2, 3.0));
    fleet.sync_now().await.unwrap();
    let reader = common::store(82);
    let reader_fleet = Fleet::start(config(&url, &ns), reader.clone()).unwrap();
    reader_fleet.sync_now().await.unwrap();
    let ctx = Context::new("db", 1, ErrorClass::Timeout);
    assert_eq!(reader.evidence(&ctx, 10).failures(), 3.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seq_of_2_pow_63_and_more_is_written_logged_and_read() {
    let Some(url) = common::server_url("a_seq_of_2_pow_63_and_more_is_written_logged_and_read")
    else {
        return;
    };
    let ns = common::namespace("seq-2-63");
    let writer = common::store(91);
    writer.merge(&version(0x98, 1 << 63, 1.0));
    writer.merge(&version(0x97, u64::MAX, 2.0));
    let fleet = Fleet::start(config(&url, &ns), writer.clone()).unwrap();
    let first = fleet.sync_now().await;
    let reader = common::store(92);
    let reader_fleet = Fleet::start(config(&url, &ns), reader.clone()).unwrap();
    reader_fleet.sync_now().await.unwrap();
    let ctx = Context::new("db", 1, ErrorClass::Timeout);
    assert!(first.is_ok(), "the push failed: {first:?}");
    // both writers' versions, merged
    assert_eq!(reader.evidence(&ctx, 10).failures(), 3.0);
    let before = fleet.stats();
    fleet.sync_now().await.unwrap();
    assert_eq!(fleet.stats().pushed, before.pushed, "a quiet round pushed");
}
