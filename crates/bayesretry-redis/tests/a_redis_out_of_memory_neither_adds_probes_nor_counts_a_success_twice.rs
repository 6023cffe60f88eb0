//! A Redis at its memory limit (`maxmemory`, with the default `noeviction`
//! policy) refuses the first write of a script that would add to its memory,
//! with `OOM`, and lets every later write of that script through: a script
//! cannot be stopped halfway.
//!
//! The probe claim took any error of its `INCR` for a garbled counter, and
//! replaced it: the `DEL` went through (it frees memory), and so did the
//! `INCR` after it, no longer the script's first write. Every claim made
//! while Redis was full deleted the round's count and handed out a probe,
//! however many the round had given already: `max_probes` no longer limited
//! the fleet's probes of a recovering endpoint. A probe's outcome did the
//! same to the set of the round's counted successes, forgetting them: a
//! success sent again after a lost reply was counted again. Only a key of
//! the wrong type, or a counter `INCR` cannot read, is replaced now; any
//! other error is the script's, which then writes nothing, as before.

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

/// Rounds of `fleet` until `breaker` hands out a probe for `payments`, at
/// most 20; whether it did.
async fn claim_probe(fleet: &Fleet, breaker: &FleetBreaker) -> bool {
    for _ in 0..20 {
        if let Admission::Probe { .. } = breaker.check("payments") {
            return true;
        }
        let _ = fleet.sync_now().await;
    }
    false
}

/// Sets the server's memory limit: 1 byte is less than any server uses, 0
/// is none.
fn maxmemory(admin: &mut redis::Connection, bytes: u64) {
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(bytes)
        .query(admin)
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_redis_hands_out_no_probe_past_the_round_s() {
    let Some(server) = common::OwnedServer::start("a_full_redis_hands_out_no_probe") else {
        return;
    };
    let config = common::manual_rounds(server.url(), common::namespace("oom-claim"));
    // a round of one probe, a second long: the test's rounds fit in it
    let rules = common::one_probe_rules(1_000);
    let (fleet_a, fleet_b, a, b) = common::payments_opened_by_a(config, rules).await;

    // Past the cooldown, A takes the round's one probe; B hears that the
    // endpoint is half-open.
    tokio::time::sleep(Duration::from_millis(1_050)).await;
    assert!(claim_probe(&fleet_a, &a).await, "A got the probe");
    fleet_b.sync_now().await.unwrap();
    assert!(b.is_open_fleetwide("payments"));

    // Redis fills up. B's calls ask for a probe: the round has none left.
    let mut admin = common::admin(&server.url());
    maxmemory(&mut admin, 1);
    for _ in 0..5 {
        let _ = b.check("payments");
        let _ = fleet_b.sync_now().await;
        assert!(
            !matches!(b.check("payments"), Admission::Probe { .. }),
            "a second probe in a round of one, handed out while Redis was full"
        );
    }

    // Room again: the round's probe is still A's alone.
    maxmemory(&mut admin, 0);
    fleet_b.sync_now().await.unwrap();
    for _ in 0..5 {
        assert!(
            !matches!(b.check("payments"), Admission::Probe { .. }),
            "a second probe in a round of one"
        );
        fleet_b.sync_now().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_success_sent_again_to_a_full_redis_is_not_counted_again() {
    let Some(server) = common::OwnedServer::start("a_success_sent_again_to_a_full_redis") else {
        return;
    };
    let proxy = common::LossyProxy::start(&server.url());
    let namespace = common::namespace("oom-result");
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
    let mut admin = common::admin(&server.url());
    let successes = |admin: &mut redis::Connection| -> Option<String> {
        let held: Option<String> = redis::cmd("HGET")
            .arg(format!("{{{namespace}}}:br"))
            .arg("payments")
            .query(admin)
            .unwrap();
        held.and_then(|v| v.split(' ').nth(2).map(str::to_owned))
    };

    tokio::time::sleep(Duration::from_millis(350)).await;
    assert!(claim_probe(&fleet, &breaker).await, "no probe");
    // Redis counts the success; its reply is lost (in the round the report
    // wakes, or else in the next).
    proxy.lose_next_script_reply();
    breaker.record("payments", true);
    for _ in 0..100 {
        if proxy.lost_a_reply() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if !proxy.lost_a_reply() {
        let _ = fleet.sync_now().await;
    }
    assert!(proxy.lost_a_reply(), "no reply was lost");
    assert_eq!(successes(&mut admin).as_deref(), Some("1"));

    // The report goes again while Redis is full, and once there is room.
    maxmemory(&mut admin, 1);
    let _ = fleet.sync_now().await;
    maxmemory(&mut admin, 0);
    assert!(common::sync_until_back(&fleet, 20).await);
    fleet.sync_now().await.unwrap();
    assert_eq!(
        successes(&mut admin).as_deref(),
        Some("1"),
        "the success sent again was counted again (None: it closed the endpoint)"
    );
    assert!(breaker.is_open_fleetwide("payments"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_of_another_type_in_place_of_the_round_s_successes_is_still_replaced() {
    let Some(url) = common::server_url("a_key_of_another_type_in_place_of_the_round_s_successes")
    else {
        return;
    };
    let namespace = common::namespace("oom-tokens-text");
    let config = common::manual_rounds(url.clone(), namespace.clone());
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
    let mut admin = common::admin(&url);
    let tokens = format!("{{{namespace}}}:br:ok:payments");
    let () = redis::cmd("SET")
        .arg(&tokens)
        .arg("restored")
        .query(&mut admin)
        .unwrap();

    tokio::time::sleep(Duration::from_millis(350)).await;
    assert!(claim_probe(&fleet, &breaker).await, "no probe");
    breaker.record("payments", true);
    fleet.sync_now().await.unwrap();
    let kind: String = redis::cmd("TYPE").arg(&tokens).query(&mut admin).unwrap();
    let held: String = redis::cmd("HGET")
        .arg(format!("{{{namespace}}}:br"))
        .arg("payments")
        .query(&mut admin)
        .unwrap();
    assert_eq!(kind, "set");
    assert_eq!(held.split(' ').nth(2), Some("1"), "held as {held}");
}
