//! Bytes that are not UTF-8 where the fleet keeps text (a hand edit, a tool
//! sharing the namespace, a corrupted restore): a writer's value, the
//! epoch, an endpoint in the breakers' hash. Each failed the whole reply it
//! came back in, so every round of every process failed until someone wrote
//! that key again, and a newcomer read nothing at all. Now the entry that
//! cannot be read is skipped, as a malformed one is, and the rest is read.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use bayesretry_redis::Fleet;
use bayesretry_store::{Context, ErrorClass, PosteriorStore, WriterId};

/// Bytes no UTF-8 decoder accepts: a lone continuation byte and an invalid
/// lead byte.
const NOT_UTF_8: &[u8] = b"\x80 \xff";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_s_value_that_is_not_utf_8_is_skipped_and_the_rest_is_read() {
    let Some(url) =
        common::server_url("a_writer_s_value_that_is_not_utf_8_is_skipped_and_the_rest_is_read")
    else {
        return;
    };
    let namespace = common::namespace("not-utf8-value");
    let config = common::manual_rounds(url.clone(), namespace.clone());
    let (orders, search) = (
        Context::new("orders", 1, ErrorClass::Timeout),
        Context::new("search", 1, ErrorClass::Timeout),
    );
    let writer = common::store(9);
    let writer_fleet = Fleet::start(config.clone(), writer.clone()).unwrap();
    writer.observe(&orders, true, 10);
    writer.observe(&search, false, 10);
    writer_fleet.sync_now().await.unwrap();
    drop(writer_fleet);

    // the value of `orders` in writer 9's hash is garbled
    let mut conn = common::admin(&url);
    let key = format!("{{{namespace}}}:w:{}", WriterId::new(9));
    let fields: Vec<String> = redis::cmd("HKEYS").arg(&key).query(&mut conn).unwrap();
    let garbled = fields
        .iter()
        .find(|f| f.ends_with("orders"))
        .expect("the writer's hash holds orders");
    let () = redis::cmd("HSET")
        .arg(&key)
        .arg(garbled)
        .arg(NOT_UTF_8)
        .query(&mut conn)
        .unwrap();

    let reader = common::store(8);
    let newcomer = Fleet::start(config, reader.clone()).unwrap();
    newcomer.sync_now().await.unwrap();
    assert_eq!(reader.evidence(&search, 30).failures(), 1.0);
    assert_eq!(reader.evidence(&orders, 30).successes(), 0.0);
    // and the next round goes on
    newcomer.sync_now().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_epoch_that_is_not_utf_8_is_read_as_an_epoch() {
    let Some(url) = common::server_url("an_epoch_that_is_not_utf_8_is_read_as_an_epoch") else {
        return;
    };
    let namespace = common::namespace("not-utf8-epoch");
    let config = common::manual_rounds(url.clone(), namespace.clone());
    let ctx = Context::new("orders", 1, ErrorClass::Timeout);
    let writer = common::store(9);
    let writer_fleet = Fleet::start(config.clone(), writer.clone()).unwrap();
    writer.observe(&ctx, false, 10);
    writer_fleet.sync_now().await.unwrap();

    let mut conn = common::admin(&url);
    let () = redis::cmd("SET")
        .arg(format!("{{{namespace}}}:epoch"))
        .arg(NOT_UTF_8)
        .query(&mut conn)
        .unwrap();

    // a new epoch: the writer pushes everything again, and a newcomer reads it
    let before = writer_fleet.stats().resyncs;
    writer.observe(&ctx, false, 20);
    writer_fleet.sync_now().await.unwrap();
    assert_eq!(
        writer_fleet.stats().resyncs,
        before + 1,
        "read as a new epoch"
    );
    // once: the same garbled bytes read as the same epoch at the next rounds
    writer_fleet.sync_now().await.unwrap();
    writer_fleet.sync_now().await.unwrap();
    assert_eq!(
        writer_fleet.stats().resyncs,
        before + 1,
        "not at every round"
    );
    let reader = common::store(8);
    let newcomer = Fleet::start(config, reader.clone()).unwrap();
    newcomer.sync_now().await.unwrap();
    assert_eq!(reader.evidence(&ctx, 30).failures(), 2.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_in_the_breakers_hash_that_is_not_utf_8_is_skipped() {
    let Some(url) =
        common::server_url("an_endpoint_in_the_breakers_hash_that_is_not_utf_8_is_skipped")
    else {
        return;
    };
    let namespace = common::namespace("not-utf8-breaker");
    let config = common::manual_rounds(url.clone(), namespace.clone());
    let rules = common::one_probe_rules(60_000);
    let (a_fleet, b_fleet) = (
        Fleet::without_evidence(config.clone()).unwrap(),
        Fleet::without_evidence(config).unwrap(),
    );
    let (a, b) = (
        a_fleet.breaker(rules).unwrap(),
        b_fleet.breaker(rules).unwrap(),
    );
    a_fleet.sync_now().await.unwrap();
    b_fleet.sync_now().await.unwrap();

    // an endpoint no process could have named, open for an hour
    let mut conn = common::admin(&url);
    let () = redis::cmd("HSET")
        .arg(format!("{{{namespace}}}:br"))
        .arg(NOT_UTF_8)
        .arg("99999999999999 1000 0")
        .query(&mut conn)
        .unwrap();

    let mut opened = None;
    for _ in 0..100 {
        opened = a.record("payments", false);
        if opened.is_some() {
            break;
        }
    }
    assert!(opened.is_some(), "the breaker opens on failures");
    a_fleet.sync_now().await.unwrap();
    b_fleet.sync_now().await.unwrap();
    assert!(b.is_open_fleetwide("payments"));
}
