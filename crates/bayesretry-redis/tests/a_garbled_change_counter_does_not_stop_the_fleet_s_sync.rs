//! The change counter `{ns}:ver` edited by hand or written by a tool into
//! something that is not a whole number: the push numbered the change log's
//! entries from it all the same, so `nan` failed every push of every
//! process, and `inf` or `1e300` were written back into the counter and the
//! log, failing every pull of every process, round after round. The counter
//! is now taken for a missing one, counted on from the server's clock, and
//! written anew.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use bayesretry_redis::Fleet;
use bayesretry_store::{Context, ErrorClass, PosteriorStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbled_change_counter_does_not_stop_the_fleet_s_sync() {
    let Some(url) = common::server_url("a_garbled_change_counter_does_not_stop_the_fleet_s_sync")
    else {
        return;
    };
    let namespace = common::namespace("garbled-ver");
    let config = common::manual_rounds(url.clone(), namespace.clone());
    let ctx = Context::new("orders", 1, ErrorClass::Timeout);
    let (writer, reader) = (common::store(7), common::store(8));
    let writing = Fleet::start(config.clone(), writer.clone()).unwrap();
    let reading = Fleet::start(config, reader.clone()).unwrap();
    writer.observe(&ctx, false, 10);
    writing.sync_now().await.unwrap();
    reading.sync_now().await.unwrap();

    let mut conn = common::admin(&url);
    let key = format!("{{{namespace}}}:ver");
    let mut failures = 1.0;
    for garbled in ["nan", "inf", "1e300", "-5", "99999999999999999999999"] {
        let () = redis::cmd("SET")
            .arg(&key)
            .arg(garbled)
            .query(&mut conn)
            .unwrap();
        writer.observe(&ctx, false, 20);
        failures += 1.0;
        writing.sync_now().await.unwrap();
        reading.sync_now().await.unwrap();
        assert_eq!(
            reader.evidence(&ctx, 30).failures(),
            failures,
            "with the counter at {garbled:?}"
        );
    }
}
