//! The fleet's change log (`{ns}:log`) lost while the writers' entries it
//! indexes live on — evicted under a `volatile-*` memory policy (all but the
//! breakers' keys have a time to live), deleted by hand — is written again
//! by the next round: readers, newcomers above all, find every entry again,
//! not only those that change after the loss.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use bayesretry_redis::Fleet;
use bayesretry_store::{Context, ErrorClass, PosteriorStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_log_lost_on_its_own_is_written_again() {
    let Some(url) = common::server_url("a_change_log_lost_on_its_own_is_written_again") else {
        return;
    };
    let namespace = common::namespace("lost-log");
    let config = common::manual_rounds(url.clone(), namespace.clone());
    let ctx = Context::new("orders", 1, ErrorClass::Timeout);
    let writer = common::store(7);
    let fleet = Fleet::start(config.clone(), writer.clone()).unwrap();
    writer.observe(&ctx, false, 10);
    fleet.sync_now().await.unwrap();

    // The log alone, then with its counter.
    let mut conn = common::admin(&url);
    for lost in [&["log"][..], &["log", "ver"]] {
        let keys: Vec<String> = lost
            .iter()
            .map(|k| format!("{{{namespace}}}:{k}"))
            .collect();
        let () = redis::cmd("DEL").arg(&keys).query(&mut conn).unwrap();
        fleet.sync_now().await.unwrap();
    }

    let reader = common::store(8);
    let newcomer = Fleet::start(config, reader.clone()).unwrap();
    newcomer.sync_now().await.unwrap();
    assert_eq!(
        reader.evidence(&ctx, 30).failures(),
        1.0,
        "the newcomer found the entry: {:?}",
        fleet.stats()
    );

    // A log emptied because its writers aged out is taken for a loss once,
    // not round after round.
    let () = redis::cmd("DEL")
        .arg(format!("{{{namespace}}}:log"))
        .arg(format!(
            "{{{namespace}}}:w:{}",
            bayesretry_store::WriterId::new(7)
        ))
        .query(&mut conn)
        .unwrap();
    let resyncs = newcomer.stats().resyncs;
    for _ in 0..3 {
        newcomer.sync_now().await.unwrap();
    }
    assert!(
        newcomer.stats().resyncs <= resyncs + 1,
        "{:?}",
        newcomer.stats()
    );
}
