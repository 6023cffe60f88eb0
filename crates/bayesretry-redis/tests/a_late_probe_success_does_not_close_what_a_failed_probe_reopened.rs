//! Two half-open probes out at once (`max_probes` 2): the first fails and
//! reopens the endpoint for the fleet; the second, reported afterwards,
//! succeeds. It belonged to the round the failure ended, so it does not
//! close the endpoint: only probes of the current round count.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::time::Duration;

use bayesretry_breaker::{Admission, Config};
use bayesretry_redis::{Fleet, FleetBreaker};

/// Rounds of `fleet` until `breaker` hands out a probe for `endpoint`.
async fn claim_probe(fleet: &Fleet, breaker: &FleetBreaker, endpoint: &str) {
    for _ in 0..20 {
        if let Admission::Probe { .. } = breaker.check(endpoint) {
            return;
        }
        fleet.sync_now().await.unwrap();
    }
    panic!("no probe for {endpoint}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_probe_success_does_not_close_what_a_failed_probe_reopened() {
    let Some(url) =
        common::server_url("a_late_probe_success_does_not_close_what_a_failed_probe_reopened")
    else {
        return;
    };
    let config = common::manual_rounds(url, common::namespace("late-probe"));
    let rules = Config::new()
        .with_min_strength(5.0)
        .with_open_below(0.5)
        .with_cooldown_ms(300)
        .with_max_probes(2)
        .with_probes_to_close(1);
    let (fleet_a, fleet_b) = (
        Fleet::without_evidence(config.clone()).unwrap(),
        Fleet::without_evidence(config).unwrap(),
    );
    let (a, b): (Arc<FleetBreaker>, Arc<FleetBreaker>) = (
        fleet_a.breaker(rules).unwrap(),
        fleet_b.breaker(rules).unwrap(),
    );
    fleet_a.sync_now().await.unwrap();
    fleet_b.sync_now().await.unwrap();
    let opened = (0..100).any(|_| a.record("payments", false).is_some());
    assert!(opened);
    fleet_a.sync_now().await.unwrap();
    fleet_b.sync_now().await.unwrap();
    assert!(b.is_open_fleetwide("payments"));

    // Past the cooldown, A and B each get one of the round's two probes.
    tokio::time::sleep(Duration::from_millis(350)).await;
    claim_probe(&fleet_a, &a, "payments").await;
    claim_probe(&fleet_b, &b, "payments").await;
    // A's probe fails first: reopened for the fleet.
    a.record("payments", false);
    fleet_a.sync_now().await.unwrap();
    assert!(a.is_open_fleetwide("payments"));
    // B's succeeds, reported after the reopening.
    b.record("payments", true);
    fleet_b.sync_now().await.unwrap();
    fleet_a.sync_now().await.unwrap();
    assert!(
        a.is_open_fleetwide("payments") && b.is_open_fleetwide("payments"),
        "a probe of the round a failure ended closed the endpoint"
    );
    assert!(matches!(a.check("payments"), Admission::Rejected { .. }));
    assert!(matches!(b.check("payments"), Admission::Rejected { .. }));
}
