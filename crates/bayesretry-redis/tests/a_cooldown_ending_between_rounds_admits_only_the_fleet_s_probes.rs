//! An endpoint's fleet-wide cooldown ends between two sync rounds: until a
//! round claims a probe from Redis, no process admits a call to it. Treated
//! as closed instead, every process would let all its calls through until
//! its next round found the endpoint half-open — a whole interval of
//! unthrottled traffic from the fleet to an endpoint still recovering.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::time::Duration;

use bayesretry_breaker::Admission;
use bayesretry_redis::{Fleet, FleetBreaker};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cooldown_ending_between_rounds_admits_only_the_fleet_s_probes() {
    let Some(url) =
        common::server_url("a_cooldown_ending_between_rounds_admits_only_the_fleet_s_probes")
    else {
        return;
    };
    let config = common::manual_rounds(url, common::namespace("cooldown-ends"));
    let rules = common::one_probe_rules(1_000);
    let fleets = [
        Fleet::without_evidence(config.clone()).unwrap(),
        Fleet::without_evidence(config).unwrap(),
    ];
    let breakers: Vec<Arc<FleetBreaker>> =
        fleets.iter().map(|f| f.breaker(rules).unwrap()).collect();
    for fleet in &fleets {
        fleet.sync_now().await.unwrap();
    }
    let opened = (0..100).any(|_| breakers[0].record("payments", false).is_some());
    assert!(opened);
    for fleet in &fleets {
        fleet.sync_now().await.unwrap();
    }
    for breaker in &breakers {
        assert!(matches!(
            breaker.check("payments"),
            Admission::Rejected { .. }
        ));
    }

    // The cooldown ends; no round has run since.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let admitted: Vec<usize> = breakers
        .iter()
        .map(|b| (0..50).filter(|_| b.check("payments").is_allowed()).count())
        .collect();
    assert_eq!(
        admitted,
        [0, 0],
        "calls admitted per process before any probe was claimed"
    );

    // Rounds claim the one probe of the round, for one process only.
    let mut admitted = 0;
    for _ in 0..5 {
        for (fleet, breaker) in fleets.iter().zip(&breakers) {
            fleet.sync_now().await.unwrap();
            admitted += (0..10)
                .filter(|_| breaker.check("payments").is_allowed())
                .count();
        }
    }
    assert_eq!(admitted, 1, "calls admitted by the fleet in half-open");
}
