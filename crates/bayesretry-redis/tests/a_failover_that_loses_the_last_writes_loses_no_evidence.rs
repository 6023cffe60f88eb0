//! A failover to a replica that had not yet received the last writes (Redis
//! replicates asynchronously): the fleet's data goes back a little, epoch
//! and all. Entries pushed afterwards still reach processes that had read
//! past the lost ones, and the lost entries are pushed again by their
//! writer.
//!
//! The failover is played by dumping the namespace's keys (the replica, from
//! then on lagging) and, later, restoring them in place of the primary's.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use bayesretry_redis::Fleet;
use bayesretry_store::{Context, ErrorClass, PosteriorStore};

/// A key, its `DUMP` and its time to live in ms (0: none).
type Dumped = (String, Vec<u8>, i64);

/// Every key of namespace `ns`, as a replica would hold them now.
fn dump(conn: &mut redis::Connection, ns: &str) -> Vec<Dumped> {
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{{{ns}}}:*"))
        .query(conn)
        .unwrap();
    keys.into_iter()
        .map(|key| {
            let dumped: Vec<u8> = redis::cmd("DUMP").arg(&key).query(conn).unwrap();
            let ttl: i64 = redis::cmd("PTTL").arg(&key).query(conn).unwrap();
            (key, dumped, ttl.max(0))
        })
        .collect()
}

/// Namespace `ns` replaced by `replica`: the replica promoted.
fn promote(conn: &mut redis::Connection, ns: &str, replica: &[Dumped]) {
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{{{ns}}}:*"))
        .query(conn)
        .unwrap();
    for key in keys {
        let _: i64 = redis::cmd("DEL").arg(key).query(conn).unwrap();
    }
    for (key, dumped, ttl) in replica {
        let _: () = redis::cmd("RESTORE")
            .arg(key)
            .arg(*ttl)
            .arg(dumped.as_slice())
            .query(conn)
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failover_that_loses_the_last_writes_loses_no_evidence() {
    let Some(url) = common::server_url("a_failover_that_loses_the_last_writes_loses_no_evidence")
    else {
        return;
    };
    let ns = common::namespace("failover");
    let config = common::manual_rounds(url.clone(), ns.clone());
    let mut admin = common::admin(&url);
    let (writer, reader) = (common::store(51), common::store(52));
    let writer_fleet = Fleet::start(config.clone(), writer.clone()).unwrap();
    let reader_fleet = Fleet::start(config.clone(), reader.clone()).unwrap();
    let ctx = |attempt| Context::new("pay", attempt, ErrorClass::Http(503));

    writer.observe(&ctx(1), false, 10);
    writer_fleet.sync_now().await.unwrap();
    reader_fleet.sync_now().await.unwrap();
    let replica = dump(&mut admin, &ns);
    // written to the primary only, and read from it
    writer.observe(&ctx(2), false, 20);
    writer_fleet.sync_now().await.unwrap();
    reader_fleet.sync_now().await.unwrap();
    assert_eq!(reader.evidence(&ctx(2), 30).failures(), 1.0);

    promote(&mut admin, &ns, &replica);
    writer.observe(&ctx(3), false, 30);
    for _ in 0..2 {
        writer_fleet.sync_now().await.unwrap();
        reader_fleet.sync_now().await.unwrap();
    }
    assert_eq!(
        reader.evidence(&ctx(3), 40).failures(),
        1.0,
        "a reader never saw evidence pushed after the failover"
    );
    let newcomer = common::store(53);
    let newcomer_fleet = Fleet::start(config, newcomer.clone()).unwrap();
    newcomer_fleet.sync_now().await.unwrap();
    for attempt in 1..=3 {
        assert_eq!(
            newcomer.evidence(&ctx(attempt), 40).failures(),
            1.0,
            "attempt {attempt}: {:?}",
            writer_fleet.stats()
        );
    }
}

/// The failover loses the writer's last update of a quiet context, while the
/// writer keeps pushing outcomes of another every round: what the busy
/// context adds to Redis must not hide what the quiet one lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_writer_pushes_again_what_a_failover_lost() {
    let Some(url) = common::server_url("a_busy_writer_pushes_again_what_a_failover_lost") else {
        return;
    };
    let ns = common::namespace("failover-busy");
    let config = common::manual_rounds(url.clone(), ns.clone());
    let mut admin = common::admin(&url);
    let writer = common::store(61);
    let writer_fleet = Fleet::start(config.clone(), writer.clone()).unwrap();
    let (quiet, busy) = (
        Context::new("pay", 1, ErrorClass::Timeout),
        Context::new("pay", 2, ErrorClass::Timeout),
    );
    writer.observe(&quiet, false, 10);
    writer.observe(&busy, false, 10);
    writer_fleet.sync_now().await.unwrap();
    let replica = dump(&mut admin, &ns);
    writer.observe(&quiet, false, 20); // its 2nd version reaches the primary only
    writer_fleet.sync_now().await.unwrap();
    promote(&mut admin, &ns, &replica);
    for round in 0..4 {
        for _ in 0..5 {
            writer.observe(&busy, true, 30 + round);
        }
        writer_fleet.sync_now().await.unwrap();
    }
    let newcomer = common::store(62);
    let newcomer_fleet = Fleet::start(config, newcomer.clone()).unwrap();
    newcomer_fleet.sync_now().await.unwrap();
    assert_eq!(
        newcomer.evidence(&quiet, 100).failures(),
        2.0,
        "the version the failover lost was never pushed again: {:?}",
        writer_fleet.stats()
    );
}
