//! A breaker opened by one member of a fleet is open for every member after
//! their next round; when its cooldown ends, the fleet as a whole admits at
//! most `max_probes` probes, and a successful probe closes it for everyone.
//!
//! Three fleets in one test process stand for three processes: each has its
//! own connection, sync task and local breakers, and shares only Redis.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::time::Duration;

use bayesretry_breaker::{Admission, Transition};
use bayesretry_redis::{Fleet, FleetBreaker};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_opened_by_one_process_is_open_for_all() {
    let Some(url) = common::server_url("an_endpoint_opened_by_one_process_is_open_for_all") else {
        return;
    };
    let config = common::manual_rounds(url, common::namespace("breaker"));
    let rules = common::one_probe_rules(1_000);
    let mut fleets = Vec::new();
    let mut breakers: Vec<Arc<FleetBreaker>> = Vec::new();
    for _ in 0..3 {
        let fleet = Fleet::without_evidence(config.clone()).unwrap();
        breakers.push(fleet.breaker(rules).unwrap());
        fleet.sync_now().await.unwrap();
        fleets.push(fleet);
    }
    let (a, b, c) = (&breakers[0], &breakers[1], &breakers[2]);
    assert!(b.check("payments").is_allowed());

    // A sees payments fail until its breaker opens.
    let mut opened = None;
    for _ in 0..100 {
        assert!(a.check("payments").is_allowed());
        opened = a.record("payments", false);
        if opened.is_some() {
            break;
        }
    }
    assert!(
        matches!(opened, Some(Transition::Opened { .. })),
        "{opened:?}"
    );
    assert!(!a.check("payments").is_allowed());
    // B and C never saw a failure; one round each and they refuse it too.
    assert!(b.check("payments").is_allowed());
    for fleet in &fleets {
        fleet.sync_now().await.unwrap();
    }
    for breaker in [b, c] {
        assert!(breaker.is_open_fleetwide("payments"));
        assert!(matches!(
            breaker.check("payments"),
            Admission::Rejected { .. }
        ));
    }
    // Other endpoints are untouched.
    assert!(c.check("search").is_allowed());

    // Past the cooldown, every member asks for a probe, again and again: the
    // fleet admits one.
    let mut probes = Vec::new();
    for _ in 0..400 {
        for (i, breaker) in breakers.iter().enumerate() {
            if breaker.check("payments").is_allowed() {
                probes.push(i);
            }
            fleets[i].sync_now().await.unwrap();
        }
        if !probes.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for _ in 0..3 {
        for (i, breaker) in breakers.iter().enumerate() {
            if breaker.check("payments").is_allowed() {
                probes.push(i);
            }
            fleets[i].sync_now().await.unwrap();
        }
    }
    assert_eq!(probes.len(), 1, "probes admitted by member: {probes:?}");

    // The probe succeeds: closed for everyone after a round.
    let prober = probes[0];
    breakers[prober].record("payments", true);
    fleets[prober].sync_now().await.unwrap();
    for fleet in &fleets {
        fleet.sync_now().await.unwrap();
    }
    for breaker in &breakers {
        assert!(!breaker.is_open_fleetwide("payments"));
        assert_eq!(breaker.check("payments"), Admission::Allowed);
    }
}
