//! Redis restarted empty while an endpoint is open with most of its cooldown
//! to go: the process that opened it keeps refusing it, and publishes the
//! opening again, so the rest of the fleet refuses it too until the cooldown
//! ends.

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
async fn a_redis_restart_leaves_open_endpoints_open() {
    let Some(mut server) = common::OwnedServer::start("a_redis_restart_leaves_open_endpoints_open")
    else {
        return;
    };
    let config = common::manual_rounds(server.url(), common::namespace("restart-breaker"))
        .with_connect_timeout(Duration::from_millis(200));
    let rules = Config::new()
        .with_min_strength(5.0)
        .with_open_below(0.5)
        .with_cooldown_ms(30_000);
    let fleet = Fleet::without_evidence(config.clone()).unwrap();
    let breaker = fleet.breaker(rules).unwrap();
    fleet.sync_now().await.unwrap();
    let opened = (0..100).any(|_| breaker.record("payments", false).is_some());
    assert!(opened);
    fleet.sync_now().await.unwrap();
    let Admission::Rejected { until_ms } = breaker.check("payments") else {
        panic!("open, yet admitted");
    };

    server.stop();
    server.restart();
    assert!(
        common::sync_until_back(&fleet, 200).await,
        "the fleet reconnected"
    );
    fleet.sync_now().await.unwrap();
    assert!(
        matches!(breaker.check("payments"), Admission::Rejected { .. }),
        "a 30 s cooldown, a second in: admitted again after a Redis restart"
    );

    // published again: a process that starts now refuses it too, until the
    // same end
    let newcomer = Fleet::without_evidence(config).unwrap();
    let other = newcomer.breaker(rules).unwrap();
    newcomer.sync_now().await.unwrap();
    let Admission::Rejected {
        until_ms: fleet_until,
    } = other.check("payments")
    else {
        panic!("the opening was not published again");
    };
    assert!(
        fleet_until.abs_diff(until_ms) < 1_000,
        "opened until {until_ms} here, {fleet_until} for the fleet"
    );
}
