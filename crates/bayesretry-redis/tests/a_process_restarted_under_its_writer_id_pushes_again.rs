//! A process started again under a fixed `WriterId` (a pod ordinal, say)
//! whose first round comes before its first outcome reads its previous
//! life's entries back from Redis, and still pushes what it observes from
//! then on, renewing its evidence's time to live: its own writer is never
//! taken for another process's.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use core::time::Duration;

use bayesretry_redis::Fleet;
use bayesretry_store::{Context, ErrorClass, PosteriorStore, WriterId};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_restarted_under_its_writer_id_pushes_again() {
    let Some(url) = common::server_url("a_process_restarted_under_its_writer_id_pushes_again")
    else {
        return;
    };
    let namespace = common::namespace("restarted-writer");
    let ttl = Duration::from_secs(120);
    let config = common::manual_rounds(url.clone(), namespace.clone()).with_ttl(ttl);
    let first_ctx = Context::new("orders", 1, ErrorClass::Timeout);
    let later_ctx = Context::new("orders", 2, ErrorClass::Timeout);
    {
        let first_life = common::store(7);
        let fleet = Fleet::start(config.clone(), first_life.clone()).unwrap();
        first_life.observe(&first_ctx, false, 10);
        fleet.sync_now().await.unwrap();
    }

    // The same process starts again: same id, an empty store, and a round
    // before any outcome, which pulls the first life's entry.
    let second_life = common::store(7);
    let fleet = Fleet::start(config.clone(), second_life.clone()).unwrap();
    fleet.sync_now().await.unwrap();
    assert_eq!(second_life.evidence(&first_ctx, 20).failures(), 1.0);
    second_life.observe(&later_ctx, false, 20);
    tokio::time::sleep(Duration::from_millis(300)).await;
    fleet.sync_now().await.unwrap();

    let reader = common::store(8);
    let newcomer = Fleet::start(config, reader.clone()).unwrap();
    newcomer.sync_now().await.unwrap();
    assert_eq!(reader.evidence(&first_ctx, 30).failures(), 1.0);
    assert_eq!(
        reader.evidence(&later_ctx, 30).failures(),
        1.0,
        "the restarted process's outcome reached the fleet: {:?}",
        fleet.stats()
    );
    // and its round renewed the time to live of its evidence
    let mut conn = common::admin(&url);
    let key = format!("{{{namespace}}}:w:{}", WriterId::new(7));
    let left: i64 = redis::cmd("PTTL").arg(&key).query(&mut conn).unwrap();
    let renewed = i64::try_from(ttl.as_millis()).unwrap() - 250;
    assert!(left > renewed, "{key} expires in {left} ms");
}
