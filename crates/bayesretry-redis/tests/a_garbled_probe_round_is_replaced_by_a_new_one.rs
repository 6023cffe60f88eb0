//! An endpoint's probe round in `{ns}:br:rounds` that no script wrote (a hand
//! edit, a tool sharing the namespace, a corrupted restore): bytes that are
//! not UTF-8 came back to the process as another name, so that no probe's
//! outcome matched the round and none closed the endpoint until it went
//! stale; a name that is not a number failed the script a probe's failure
//! runs, at every round of the process that held it, and with it every
//! opening and every probe outcome that process had still to publish. A
//! round that is not a whole number is now taken for none: the claim begins
//! a new one, and the probes of that round count as any others. So is one
//! of more than fifteen digits (see the last test).

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

use bayesretry_breaker::Admission;
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

/// A fleet whose breaker has `payments` open, its cooldown (300 ms) over,
/// and the round in `{ns}:br:rounds` replaced by `round`.
async fn open_with_round(
    test: &str,
    short: &str,
    round: &[u8],
) -> Option<(Fleet, Arc<FleetBreaker>)> {
    let url = common::server_url(test)?;
    let namespace = common::namespace(short);
    let config = common::manual_rounds(url.clone(), namespace.clone());
    let fleet = Fleet::without_evidence(config).unwrap();
    let breaker = fleet.breaker(common::one_probe_rules(300)).unwrap();
    fleet.sync_now().await.unwrap();
    let opened = (0..100).any(|_| breaker.record("payments", false).is_some());
    assert!(opened, "the breaker opens on failures");
    fleet.sync_now().await.unwrap();
    assert!(breaker.is_open_fleetwide("payments"));

    // the round as `{round} {open until}`, the opening's own `open until`
    // kept, so that it reads as the opening's current round
    let mut conn = common::admin(&url);
    let held: String = redis::cmd("HGET")
        .arg(format!("{{{namespace}}}:br"))
        .arg("payments")
        .query(&mut conn)
        .unwrap();
    let until = held.split(' ').next().expect("an opening's fields");
    let mut garbled = round.to_vec();
    garbled.push(b' ');
    garbled.extend_from_slice(until.as_bytes());
    let () = redis::cmd("HSET")
        .arg(format!("{{{namespace}}}:br:rounds"))
        .arg("payments")
        .arg(garbled)
        .query(&mut conn)
        .unwrap();

    tokio::time::sleep(Duration::from_millis(350)).await;
    claim_probe(&fleet, &breaker, "payments").await;
    Some((fleet, breaker))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_that_is_not_utf_8_does_not_keep_a_probe_s_success_from_closing() {
    let Some((fleet, breaker)) = open_with_round(
        "a_round_that_is_not_utf_8_does_not_keep_a_probe_s_success_from_closing",
        "round-not-utf8",
        b"\xff\x80",
    )
    .await
    else {
        return;
    };
    breaker.record("payments", true);
    fleet.sync_now().await.unwrap();
    assert!(
        !breaker.is_open_fleetwide("payments"),
        "the probe's success left the endpoint open for the fleet"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_that_is_not_a_number_does_not_fail_every_round_after_a_failed_probe() {
    let Some((fleet, breaker)) = open_with_round(
        "a_round_that_is_not_a_number_does_not_fail_every_round_after_a_failed_probe",
        "round-not-number",
        b"restored",
    )
    .await
    else {
        return;
    };
    breaker.record("payments", false);
    fleet.sync_now().await.unwrap();
    assert!(breaker.is_open_fleetwide("payments"), "reopened");
    // and the rounds after it go on
    fleet.sync_now().await.unwrap();
}

/// A round named by a whole number too long for a Lua number to count on
/// from (21 digits: the next round's name, one more, is the same number)
/// was kept: every round after it, begun by a failed probe or an opening,
/// bore the same name, so a probe of a round a failure had ended counted in
/// the next, and its late success closed the endpoint the failure reopened.
/// A round of more than fifteen digits (past the year 30 000, as an `open
/// until` of that length is) is now taken for none, as text is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_too_long_to_count_on_from_does_not_let_a_late_success_close() {
    let Some(url) =
        common::server_url("a_round_too_long_to_count_on_from_does_not_let_a_late_success_close")
    else {
        return;
    };
    let namespace = common::namespace("round-too-long");
    let config = common::manual_rounds(url.clone(), namespace.clone());
    // two probes a round; one success closes
    let rules = bayesretry_breaker::Config::new()
        .with_min_strength(5.0)
        .with_open_below(0.5)
        .with_cooldown_ms(300)
        .with_max_probes(2)
        .with_probes_to_close(1);
    let (fleet_a, fleet_b, a, b) = common::payments_opened_by_a(config, rules).await;
    fleet_b.sync_now().await.unwrap();

    let mut conn = common::admin(&url);
    let held: String = redis::cmd("HGET")
        .arg(format!("{{{namespace}}}:br"))
        .arg("payments")
        .query(&mut conn)
        .unwrap();
    let until = held.split(' ').next().expect("an opening's fields");
    let () = redis::cmd("HSET")
        .arg(format!("{{{namespace}}}:br:rounds"))
        .arg("payments")
        .arg(format!("100000000000000000000 {until}"))
        .query(&mut conn)
        .unwrap();

    // Past the cooldown, A and B each get one of the round's two probes.
    tokio::time::sleep(Duration::from_millis(350)).await;
    claim_probe(&fleet_a, &a, "payments").await;
    claim_probe(&fleet_b, &b, "payments").await;
    // A's fails first: reopened, a new round. B's success comes after.
    a.record("payments", false);
    fleet_a.sync_now().await.unwrap();
    assert!(a.is_open_fleetwide("payments"));
    b.record("payments", true);
    fleet_b.sync_now().await.unwrap();
    fleet_a.sync_now().await.unwrap();
    assert!(
        a.is_open_fleetwide("payments") && b.is_open_fleetwide("payments"),
        "a probe of the round a failure ended closed the endpoint"
    );
}
