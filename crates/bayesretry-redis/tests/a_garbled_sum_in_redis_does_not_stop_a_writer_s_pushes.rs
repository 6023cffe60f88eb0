//! A writer's hash whose sum of sequence numbers is not an integer (edited
//! by hand, written by a tool): the push counts it again from the hash's
//! entries instead of failing on it — after writing the entries it had
//! applied, and before logging them, so that no reader found them — round
//! after round. So is a sum with a leading zero, which `tonumber` reads but
//! `HINCRBY` refuses.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use bayesretry_redis::Fleet;
use bayesretry_store::{Context, ErrorClass, PosteriorStore, WriterId};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbled_sum_in_redis_does_not_stop_a_writer_s_pushes() {
    let Some(url) = common::server_url("a_garbled_sum_in_redis_does_not_stop_a_writer_s_pushes")
    else {
        return;
    };
    let namespace = common::namespace("garbled-sum");
    let config = common::manual_rounds(url.clone(), namespace.clone());
    let first = Context::new("orders", 1, ErrorClass::Timeout);
    let later = Context::new("orders", 2, ErrorClass::Timeout);
    let writer = common::store(7);
    let fleet = Fleet::start(config.clone(), writer.clone()).unwrap();
    writer.observe(&first, false, 10);
    fleet.sync_now().await.unwrap();

    let mut conn = common::admin(&url);
    let key = format!("{{{namespace}}}:w:{}", WriterId::new(7));
    // and digits with a leading zero, which a Lua number reads but HINCRBY
    // does not take
    for garbled in ["1.5", "99999999999999999999999", "x", "0099999999999999"] {
        let () = redis::cmd("HSET")
            .arg(&key)
            .arg("#sum")
            .arg(garbled)
            .query(&mut conn)
            .unwrap();
        writer.observe(&later, false, 20);
        fleet.sync_now().await.unwrap();
    }

    let reader = common::store(8);
    let newcomer = Fleet::start(config, reader.clone()).unwrap();
    newcomer.sync_now().await.unwrap();
    assert_eq!(reader.evidence(&first, 30).failures(), 1.0);
    assert_eq!(reader.evidence(&later, 30).failures(), 4.0);
}
