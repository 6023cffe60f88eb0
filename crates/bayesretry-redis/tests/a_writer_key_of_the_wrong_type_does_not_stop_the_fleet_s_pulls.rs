//! A writer's key that is not a hash (a tool wrote to the same namespace, a
//! hand edit), while the change log still names entries of it: every pull
//! that came to them failed, for every process, round after round, and a
//! newcomer read nothing at all. Such entries are now skipped as entries of
//! a writer that aged out are, and the rest is read.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use bayesretry_redis::Fleet;
use bayesretry_store::{Context, ErrorClass, PosteriorStore, WriterId};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_key_of_the_wrong_type_does_not_stop_the_fleet_s_pulls() {
    let Some(url) =
        common::server_url("a_writer_key_of_the_wrong_type_does_not_stop_the_fleet_s_pulls")
    else {
        return;
    };
    let namespace = common::namespace("wrong-type-writer");
    let config = common::manual_rounds(url.clone(), namespace.clone());
    let ctx = Context::new("orders", 1, ErrorClass::Timeout);
    let (sound, garbled) = (common::store(7), common::store(9));
    let sound_fleet = Fleet::start(config.clone(), sound.clone()).unwrap();
    let garbled_fleet = Fleet::start(config.clone(), garbled.clone()).unwrap();
    garbled.observe(&ctx, true, 10);
    garbled_fleet.sync_now().await.unwrap();
    drop(garbled_fleet);
    sound.observe(&ctx, false, 20);
    sound_fleet.sync_now().await.unwrap();

    let mut conn = common::admin(&url);
    let key = format!("{{{namespace}}}:w:{}", WriterId::new(9));
    let () = redis::cmd("DEL").arg(&key).query(&mut conn).unwrap();
    let () = redis::cmd("SET")
        .arg(&key)
        .arg("not a hash")
        .query(&mut conn)
        .unwrap();

    let reader = common::store(8);
    let newcomer = Fleet::start(config, reader.clone()).unwrap();
    newcomer.sync_now().await.unwrap();
    assert_eq!(reader.evidence(&ctx, 30).failures(), 1.0);
}
