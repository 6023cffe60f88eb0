//! Redis lost an endpoint's opening (a restart without persistence, a
//! flush), and the process whose breaker opened it publishes it again, late,
//! for the time it has left. The fleet's cooldown — what a failed probe
//! backs off from, and the length of a probe round — stays the opening's
//! full cooldown, not the few hundred ms it had left.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod common;

use core::time::Duration;

use bayesretry_breaker::{Admission, Config};
use bayesretry_redis::Fleet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opening_published_again_keeps_its_cooldown() {
    let Some(url) = common::server_url("an_opening_published_again_keeps_its_cooldown") else {
        return;
    };
    let ns = common::namespace("republished-cooldown");
    let config = common::manual_rounds(url.clone(), ns.clone());
    let rules = Config::new()
        .with_min_strength(5.0)
        .with_open_below(0.5)
        .with_cooldown_ms(2_000);
    let fleet = Fleet::without_evidence(config).unwrap();
    let breaker = fleet.breaker(rules).unwrap();
    fleet.sync_now().await.unwrap();
    assert!((0..100).any(|_| breaker.record("payments", false).is_some()));
    fleet.sync_now().await.unwrap();
    let mut admin = common::admin(&url);
    let key = format!("{{{ns}}}:br");
    // Redis loses the opening
    let _: i64 = redis::cmd("DEL").arg(&key).query(&mut admin).unwrap();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    fleet.sync_now().await.unwrap(); // finds it lost, queues it again
    fleet.sync_now().await.unwrap(); // publishes it
    assert!(matches!(
        breaker.check("payments"),
        Admission::Rejected { .. }
    ));
    let held: String = redis::cmd("HGET")
        .arg(&key)
        .arg("payments")
        .query(&mut admin)
        .unwrap();
    let now: Vec<u64> = redis::cmd("TIME").query(&mut admin).unwrap();
    let now_ms = now[0] * 1_000 + now[1] / 1_000;
    let fields: Vec<u64> = held.split(' ').map(|f| f.parse().unwrap()).collect();
    let (till, cooldown) = (fields[0], fields[1]);
    assert!(
        till.saturating_sub(now_ms) <= 600,
        "published for more than it had left: {held:?}"
    );
    assert!(
        cooldown >= 2_000,
        "published again as {held:?}: a failed probe would back off from {cooldown} ms, not 2000"
    );
}
