//! A writer's sum of sequence numbers is kept exact up to 2⁵³ (any 2²¹
//! entries, each counted up to 2³²): sixteen digits. A sum that long is the
//! writer's, not a garbled one; a push takes it as it is, instead of
//! counting it again from the whole hash (`HGETALL`, Redis serving nobody
//! else meanwhile) at every push of a writer that large.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use bayesretry_redis::Fleet;
use bayesretry_store::{Context, ErrorClass, PosteriorStore, WriterId};

/// How many `HGETALL`s the server has run, scripts' included.
fn hgetalls(conn: &mut redis::Connection) -> u64 {
    let info: String = redis::cmd("INFO").arg("commandstats").query(conn).unwrap();
    info.lines()
        .find_map(|line| line.strip_prefix("cmdstat_hgetall:calls="))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |calls| calls.parse().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_s_sum_past_15_digits_is_not_counted_again_at_every_push() {
    let Some(url) =
        common::server_url("a_writer_s_sum_past_15_digits_is_not_counted_again_at_every_push")
    else {
        return;
    };
    let namespace = common::namespace("long-sum");
    let config = common::manual_rounds(url.clone(), namespace.clone());
    let writer = common::store(7);
    let fleet = Fleet::start(config, writer.clone()).unwrap();
    writer.observe(&Context::new("orders", 1, ErrorClass::Timeout), false, 10);
    fleet.sync_now().await.unwrap();

    // The writer holds 240 000 more entries, each at a sequence number past
    // 2³² (a long-lived, busy store): its sum has sixteen digits.
    let mut conn = common::admin(&url);
    let key = format!("{{{namespace}}}:w:{}", WriterId::new(7));
    let sum: u64 = redis::cmd("HGET")
        .arg(&key)
        .arg("#sum")
        .query(&mut conn)
        .unwrap();
    let many: u64 = 240_000;
    for start in (0..many).step_by(10_000) {
        let mut hset = redis::cmd("HSET");
        hset.arg(&key);
        for i in start..start + 10_000 {
            hset.arg(format!("old-{i}")).arg("5000000000 10 0 1");
        }
        let _: u64 = hset.query(&mut conn).unwrap();
    }
    let sum = sum + many * (1 << 32);
    assert_eq!(sum.to_string().len(), 16);
    let () = redis::cmd("HSET")
        .arg(&key)
        .arg("#sum")
        .arg(sum)
        .query(&mut conn)
        .unwrap();

    let before = hgetalls(&mut conn);
    for round in 0..3_u64 {
        let ctx = Context::new("orders", 2 + round as u32, ErrorClass::Timeout);
        writer.observe(&ctx, false, 20);
        fleet.sync_now().await.unwrap();
    }
    assert_eq!(hgetalls(&mut conn), before, "the whole hash read again");
    let held: u64 = redis::cmd("HGET")
        .arg(&key)
        .arg("#sum")
        .query(&mut conn)
        .unwrap();
    assert!(held > sum, "{held} is not {sum} and the new entries");
    let _: u64 = redis::cmd("DEL").arg(&key).query(&mut conn).unwrap();
}
