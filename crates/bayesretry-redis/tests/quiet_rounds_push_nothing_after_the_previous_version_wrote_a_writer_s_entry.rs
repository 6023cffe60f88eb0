//! A process of the previous version (a rolling deploy, a rollback, an old
//! process under the same writer id still draining) writes a newer version
//! of a writer's entry with its push script, which does not keep the hash's
//! `#sum`: the sum is left short of what the hash holds. The writer's
//! process, of this version, must not take the short sum for a loss round
//! after round and push everything again every round.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod common;

use bayesretry_redis::Fleet;
use bayesretry_store::{Context, ErrorClass, PosteriorStore, WriterId};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_rounds_push_nothing_after_the_previous_version_wrote_a_writer_s_entry() {
    let Some(url) = common::server_url(
        "quiet_rounds_push_nothing_after_the_previous_version_wrote_a_writer_s_entry",
    ) else {
        return;
    };
    let ns = common::namespace("previous-version-push");
    let config = common::manual_rounds(url.clone(), ns.clone());
    let mut admin = common::admin(&url);
    let writer = common::store(71);
    let fleet = Fleet::start(config, writer.clone()).unwrap();
    let ctx = Context::new("pay", 1, ErrorClass::Timeout);
    writer.observe(&ctx, false, 10);
    fleet.sync_now().await.unwrap();

    // the previous version's push writes version 2 of the entry
    let prefix = format!("{{{ns}}}");
    let hex = WriterId::new(71).to_string();
    let fields: Vec<String> = redis::cmd("HKEYS")
        .arg(format!("{prefix}:w:{hex}"))
        .query(&mut admin)
        .unwrap();
    let field = fields.iter().find(|f| !f.starts_with('#')).unwrap();
    let _: Vec<String> = common::previous_version_script("PUSH")
        .prepare_invoke()
        .arg(&prefix)
        .arg(600_000)
        .arg("an epoch")
        .arg(1)
        .arg(&hex)
        .arg(&hex)
        .arg(field)
        .arg(2)
        .arg(15)
        .arg(0)
        .arg(2)
        .invoke(&mut admin)
        .unwrap();

    fleet.sync_now().await.unwrap(); // pulls version 2
    fleet.sync_now().await.unwrap();
    let before = fleet.stats();
    for _ in 0..3 {
        fleet.sync_now().await.unwrap(); // nothing new observed
    }
    let after = fleet.stats();
    assert_eq!(writer.evidence(&ctx, 20).failures(), 2.0);
    assert!(
        after.pushed == before.pushed,
        "quiet rounds push everything again: before {before:?}, after {after:?}"
    );
}
