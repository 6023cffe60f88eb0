//! A half-open probe succeeds, and the process reports it; Redis counts it,
//! but the reply is lost (a response timeout, a connection reset), so the
//! round fails and the report is sent again at the next. It was counted
//! again: with `probes_to_close` 2, one success (reported twice) closed the
//! endpoint for the whole fleet, which then sent it all its calls on the
//! word of a single probe. Each report now carries a token of its own, and
//! the fleet counts a success once per token.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod common;

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
async fn a_probe_success_sent_again_after_a_lost_reply_counts_once() {
    let Some(url) = common::server_url("a_probe_success_sent_again_after_a_lost_reply_counts_once")
    else {
        return;
    };
    let proxy = common::LossyProxy::start(&url);
    let namespace = common::namespace("lost-probe-reply");
    let config = common::manual_rounds(proxy.url(), namespace.clone());
    // two probes a round, both must succeed to close
    let rules = Config::new()
        .with_min_strength(5.0)
        .with_open_below(0.5)
        .with_cooldown_ms(300)
        .with_max_probes(2)
        .with_probes_to_close(2);
    let fleet = Fleet::without_evidence(config).unwrap();
    let breaker = fleet.breaker(rules).unwrap();
    fleet.sync_now().await.unwrap();
    assert!((0..100).any(|_| breaker.record("payments", false).is_some()));
    fleet.sync_now().await.unwrap();
    assert!(breaker.is_open_fleetwide("payments"));
    let mut admin = common::admin(&url);
    let successes = |admin: &mut redis::Connection| -> Option<String> {
        let held: Option<String> = redis::cmd("HGET")
            .arg(format!("{{{namespace}}}:br"))
            .arg("payments")
            .query(admin)
            .unwrap();
        held.and_then(|v| v.split(' ').nth(2).map(str::to_owned))
    };

    tokio::time::sleep(Duration::from_millis(350)).await;
    claim_probe(&fleet, &breaker, "payments").await;
    // Redis counts the success; its reply is lost. The round that sent it
    // (the one the report wakes, or this one) fails, and a later one sends
    // the report again.
    proxy.lose_next_script_reply();
    breaker.record("payments", true);
    for _ in 0..5 {
        if fleet.sync_now().await.is_ok() {
            break;
        }
    }
    fleet.sync_now().await.unwrap();
    assert!(proxy.lost_a_reply(), "no reply was lost");
    assert_eq!(
        successes(&mut admin).as_deref(),
        Some("1"),
        "the success sent again was counted again (None: it closed the endpoint)"
    );
    assert!(breaker.is_open_fleetwide("payments"));

    // A second probe's success is one of its own: it closes.
    claim_probe(&fleet, &breaker, "payments").await;
    breaker.record("payments", true);
    fleet.sync_now().await.unwrap();
    fleet.sync_now().await.unwrap();
    assert_eq!(successes(&mut admin), None, "closed by two successes");
    assert!(!breaker.is_open_fleetwide("payments"));
}
