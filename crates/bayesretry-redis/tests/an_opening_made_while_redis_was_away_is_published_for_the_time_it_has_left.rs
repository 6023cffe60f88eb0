//! A breaker that opens while Redis is away publishes its opening when Redis
//! is back, for the time its cooldown has left, not a fresh cooldown from
//! then; and not at all once the cooldown has ended or the local breaker has
//! probed the endpoint and closed.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use core::time::Duration;

use bayesretry_breaker::{Admission, Transition};
use bayesretry_redis::{Fleet, FleetBreaker, FleetConfig};

/// Records failures of `endpoint` until `breaker` opens.
fn open(breaker: &FleetBreaker, endpoint: &str) {
    let opened = (0..100).any(|_| breaker.record(endpoint, false).is_some());
    assert!(opened, "{endpoint} never opened");
}

/// Rounds of `fleet` until one reaches Redis.
async fn reconnect(fleet: &Fleet) {
    for _ in 0..200 {
        if fleet.sync_now().await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    fleet.sync_now().await.unwrap();
}

fn config(server: &common::OwnedServer, test: &str) -> FleetConfig {
    common::manual_rounds(server.url(), common::namespace(test))
        .with_connect_timeout(Duration::from_millis(100))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opening_already_closed_locally_is_not_published() {
    let Some(mut server) = common::OwnedServer::start("an_opening_already_closed_locally") else {
        return;
    };
    server.stop();
    let config = config(&server, "closed-locally");
    let fleet = Fleet::without_evidence(config.clone()).unwrap();
    let breaker = fleet.breaker(common::one_probe_rules(300)).unwrap();
    assert!(fleet.sync_now().await.is_err());
    open(&breaker, "payments");
    // the local breaker probes the endpoint after its cooldown, and closes
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert!(matches!(breaker.check("payments"), Admission::Probe { .. }));
    assert_eq!(breaker.record("payments", true), Some(Transition::Closed));

    server.restart();
    let other = Fleet::without_evidence(config).unwrap();
    let other_breaker = other.breaker(common::one_probe_rules(300)).unwrap();
    reconnect(&fleet).await;
    other.sync_now().await.unwrap();
    assert!(
        !other_breaker.is_open_fleetwide("payments"),
        "an endpoint already closed by its local probe was opened for the fleet"
    );
    assert_eq!(other_breaker.check("payments"), Admission::Allowed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opening_still_running_is_published_for_the_time_it_has_left() {
    let Some(mut server) = common::OwnedServer::start("an_opening_still_running") else {
        return;
    };
    server.stop();
    let config = config(&server, "time-left");
    let fleet = Fleet::without_evidence(config.clone()).unwrap();
    let breaker = fleet.breaker(common::one_probe_rules(3_000)).unwrap();
    assert!(fleet.sync_now().await.is_err());
    open(&breaker, "payments");
    let Admission::Rejected { until_ms } = breaker.check("payments") else {
        panic!("open, yet admitted");
    };
    tokio::time::sleep(Duration::from_millis(1_500)).await;

    server.restart();
    let other = Fleet::without_evidence(config).unwrap();
    let other_breaker = other.breaker(common::one_probe_rules(3_000)).unwrap();
    reconnect(&fleet).await;
    other.sync_now().await.unwrap();
    let Admission::Rejected {
        until_ms: fleet_until,
    } = other_breaker.check("payments")
    else {
        panic!("the opening was not published");
    };
    // the same end, give or take the round trips; not 3 s from the publication
    assert!(
        fleet_until.abs_diff(until_ms) < 500,
        "opened until {until_ms} here, {fleet_until} for the fleet"
    );
}
