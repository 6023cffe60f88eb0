//! The counts of a probe round that no script wrote (a hand edit, a tool
//! sharing the namespace, a corrupted restore).
//!
//! The probe successes in `{ns}:br`: `inf` closed the endpoint at the first
//! success, `nan` never (every success wrote `nan` back), `-5` only after
//! five more than `probes_to_close`, and text closed it at the first probe
//! outcome of either kind. Such a count is now taken for none: the round's
//! successes count from zero.
//!
//! The probe counter `{ns}:br:p:<endpoint>`: a value `INCR` cannot add to
//! failed every claim of a probe of the endpoint, and with it the breaker's
//! part of the round, so the fleet refused every call to it until the entry
//! went stale; one below zero, which `INCR` adds to, gave a probe at every
//! claim until it had counted past zero. Such a counter is now replaced by
//! a new one.

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

/// Rounds until `breaker` hands out a probe for `payments`, at most 20;
/// whether it did. A round's error is not the test's concern here.
async fn claim_probe(fleet: &Fleet, breaker: &FleetBreaker) -> bool {
    for _ in 0..20 {
        if let Admission::Probe { .. } = breaker.check("payments") {
            return true;
        }
        let _ = fleet.sync_now().await;
    }
    false
}

/// A fleet whose breaker (two probes a round, both must succeed) has
/// `payments` open, on a namespace of its own, with a cooldown of 300 ms.
async fn opened(url: &str, short: &str) -> (String, Fleet, Arc<FleetBreaker>) {
    let namespace = common::namespace(short);
    let fleet =
        Fleet::without_evidence(common::manual_rounds(url.to_owned(), namespace.clone())).unwrap();
    let rules = Config::new()
        .with_min_strength(5.0)
        .with_open_below(0.5)
        .with_cooldown_ms(300)
        .with_max_probes(2)
        .with_probes_to_close(2);
    let breaker = fleet.breaker(rules).unwrap();
    fleet.sync_now().await.unwrap();
    assert!((0..100).any(|_| breaker.record("payments", false).is_some()));
    fleet.sync_now().await.unwrap();
    (namespace, fleet, breaker)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbled_success_count_counts_from_zero() {
    let Some(url) = common::server_url("a_garbled_success_count_counts_from_zero") else {
        return;
    };
    let garbled = ["inf", "nan", "-5", "restored"];
    let mut fleets = Vec::new();
    for count in garbled {
        let (namespace, fleet, breaker) = opened(&url, &format!("successes-{count}")).await;
        let key = format!("{{{namespace}}}:br");
        let held: String = redis::cmd("HGET")
            .arg(&key)
            .arg("payments")
            .query(&mut common::admin(&url))
            .unwrap();
        let fields: Vec<&str> = held.split(' ').collect();
        let () = redis::cmd("HSET")
            .arg(&key)
            .arg("payments")
            .arg(format!("{} {} {count}", fields[0], fields[1]))
            .query(&mut common::admin(&url))
            .unwrap();
        fleets.push((count, key, fleet, breaker));
    }
    tokio::time::sleep(Duration::from_millis(350)).await;
    for (count, key, fleet, breaker) in fleets {
        assert!(claim_probe(&fleet, &breaker).await, "{count:?}: no probe");
        breaker.record("payments", true);
        fleet.sync_now().await.unwrap();
        let held: Option<String> = redis::cmd("HGET")
            .arg(&key)
            .arg("payments")
            .query(&mut common::admin(&url))
            .unwrap();
        assert_eq!(
            held.as_deref().and_then(|v| v.split(' ').nth(2)),
            Some("1"),
            "{count:?}: one success of two, held as {held:?}"
        );
        assert!(breaker.is_open_fleetwide("payments"), "{count:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbled_probe_counter_is_replaced() {
    let Some(url) = common::server_url("a_garbled_probe_counter_is_replaced") else {
        return;
    };
    let mut fleets = Vec::new();
    for (short, kind) in [("counter-text", "SET"), ("counter-list", "RPUSH")] {
        let (namespace, fleet, breaker) = opened(&url, short).await;
        let counter = format!("{{{namespace}}}:br:p:payments");
        let _: redis::Value = redis::cmd(kind)
            .arg(&counter)
            .arg("restored")
            .query(&mut common::admin(&url))
            .unwrap();
        fleets.push((kind, counter, fleet, breaker));
    }
    tokio::time::sleep(Duration::from_millis(350)).await;
    for (kind, counter, fleet, breaker) in fleets {
        let probed = claim_probe(&fleet, &breaker).await;
        let ttl: i64 = redis::cmd("PTTL")
            .arg(&counter)
            .query(&mut common::admin(&url))
            .unwrap();
        assert!(probed, "{kind}: no probe");
        assert!(ttl > 1 && ttl <= 300, "{kind}: the counter's ttl is {ttl}");
        fleet.sync_now().await.unwrap();
    }
}

/// A probe counter below zero (`-1000`, with a time to live of its own) is
/// one `INCR` can add to, so it was kept: every claim of the round got a
/// probe until it had counted past zero, a thousand more than `max_probes`.
/// It is now replaced, as a counter `INCR` cannot add to is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_counter_below_zero_is_counted_anew() {
    let Some(url) = common::server_url("a_probe_counter_below_zero_is_counted_anew") else {
        return;
    };
    let (namespace, fleet, breaker) = opened(&url, "counter-negative").await;
    let counter = format!("{{{namespace}}}:br:p:payments");
    let () = redis::cmd("SET")
        .arg(&counter)
        .arg("-1000")
        .arg("PX")
        .arg(60_000)
        .query(&mut common::admin(&url))
        .unwrap();
    tokio::time::sleep(Duration::from_millis(350)).await;
    let mut probes = 0;
    for _ in 0..10 {
        if let Admission::Probe { .. } = breaker.check("payments") {
            probes += 1;
        }
        fleet.sync_now().await.unwrap();
    }
    let held: String = redis::cmd("GET")
        .arg(&counter)
        .query(&mut common::admin(&url))
        .unwrap();
    assert!(probes <= 2, "{probes} probes in a round of two");
    assert!(held == "2" || held == "3", "the counter holds {held}");
}
