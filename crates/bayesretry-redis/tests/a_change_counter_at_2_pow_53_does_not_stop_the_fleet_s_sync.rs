//! The change counter `{ns}:ver` edited by hand or written by a tool into a
//! whole number just short of 2⁵³: sound, so the push counted the change
//! log's entries on from it, up to 2⁵³, past which one more is the same
//! number in Lua. Every entry after that was logged under 2⁵³, which every
//! reader had read up to: no process learnt of any change again, and nothing
//! said so. A push that finds no room below 2⁵³ for its batch now takes the
//! log for lost: it offers a new epoch, and the fleet pushes and reads all
//! it holds again, numbered from the server's clock.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use bayesretry_redis::Fleet;
use bayesretry_store::{Context, ErrorClass, PosteriorStore};

/// Two short of 2^53 (9007199254740992).
const NEAR_2_POW_53: &str = "9007199254740990";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_counter_at_2_pow_53_does_not_stop_the_fleet_s_sync() {
    let Some(url) =
        common::server_url("a_change_counter_at_2_pow_53_does_not_stop_the_fleet_s_sync")
    else {
        return;
    };
    let namespace = common::namespace("ver-at-2-53");
    let config = common::manual_rounds(url.clone(), namespace.clone());
    let ctx = Context::new("orders", 1, ErrorClass::Timeout);
    let (writer, reader) = (common::store(7), common::store(8));
    let writing = Fleet::start(config.clone(), writer.clone()).unwrap();
    let reading = Fleet::start(config, reader.clone()).unwrap();
    writer.observe(&ctx, false, 10);
    writing.sync_now().await.unwrap();
    reading.sync_now().await.unwrap();
    assert_eq!(reader.evidence(&ctx, 30).failures(), 1.0);

    let () = redis::cmd("SET")
        .arg(format!("{{{namespace}}}:ver"))
        .arg(NEAR_2_POW_53)
        .query(&mut common::admin(&url))
        .unwrap();
    for failures in 2..6 {
        writer.observe(&ctx, false, 20);
        // two rounds each: a new epoch is pushed again, and read, a round on
        for _ in 0..2 {
            writing.sync_now().await.unwrap();
            reading.sync_now().await.unwrap();
        }
        assert_eq!(
            reader.evidence(&ctx, 30).failures(),
            f64::from(failures),
            "the reader learnt of no change past the counter's 2^53"
        );
    }
    let ver: String = redis::cmd("GET")
        .arg(format!("{{{namespace}}}:ver"))
        .query(&mut common::admin(&url))
        .unwrap();
    assert!(
        ver.len() < 16 || ver.as_str() < "9007199254740992",
        "the counter is at {ver}"
    );
}
