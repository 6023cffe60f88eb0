//! An endpoint's `open until` in `{ns}:br` that no script wrote (a hand
//! edit, a tool sharing the namespace, a corrupted restore). `inf`, `1e400`
//! or twenty digits ended never: the entry was never stale, so never
//! forgotten (the breakers' hash has no time to live), and every later
//! opening kept the later end, the garbled one. Listed with a time left no
//! process could read, the endpoint read as closed to every process: the
//! fleet's breaker of that endpoint was off for good, and each process
//! whose own breaker opened it published its opening again at every round.
//! An `open until` that is not a whole number of ms (of at most fifteen
//! digits: past the year 30 000) is now no opening: the breakers' state
//! forgets it, as it forgets one gone stale, an opening over it writes its
//! own end, and the claim and a probe's outcome find the endpoint closed.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod common;

use bayesretry_redis::Fleet;

/// Values no script writes as an opening's end.
const GARBLED: [&str; 7] = [
    "inf",
    "1e400",
    "99999999999999999999",
    "nan",
    "-1",
    "restored",
    "",
];

/// The endpoint's fields in `{ns}:br`, if it has an entry.
fn entry(url: &str, namespace: &str) -> Option<Vec<String>> {
    let held: Option<String> = redis::cmd("HGET")
        .arg(format!("{{{namespace}}}:br"))
        .arg("payments")
        .query(&mut common::admin(url))
        .unwrap();
    held.map(|v| v.split(' ').map(str::to_owned).collect())
}

/// Replaces the endpoint's `open until` with `until`.
fn garble_until(url: &str, namespace: &str, until: &str) {
    let fields = entry(url, namespace).expect("an opening");
    let () = redis::cmd("HSET")
        .arg(format!("{{{namespace}}}:br"))
        .arg("payments")
        .arg(format!("{until} {} {}", fields[1], fields[2]))
        .query(&mut common::admin(url))
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opening_over_a_garbled_end_is_open_for_the_fleet() {
    let Some(url) = common::server_url("an_opening_over_a_garbled_end_is_open_for_the_fleet")
    else {
        return;
    };
    for garbled in GARBLED {
        let namespace = common::namespace(&format!("until-reopened-{garbled}"));
        let config = common::manual_rounds(url.clone(), namespace.clone());
        let rules = common::one_probe_rules(60_000);
        let (fleet_a, fleet_b, a, b) = common::payments_opened_by_a(config, rules).await;
        garble_until(&url, &namespace, garbled);
        // B's own breaker opens the endpoint too, and publishes it
        assert!((0..100).any(|_| b.record("payments", false).is_some()));
        fleet_b.sync_now().await.unwrap();
        fleet_a.sync_now().await.unwrap();
        let fields = entry(&url, &namespace);
        assert!(
            fields
                .as_ref()
                .and_then(|f| f.first())
                .is_some_and(|until| until.len() <= 15 && until.parse::<u64>().is_ok()),
            "opened over {garbled:?}: {fields:?}"
        );
        assert!(
            a.is_open_fleetwide("payments"),
            "opened over {garbled:?}: {fields:?}, not open for A"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbled_end_is_forgotten() {
    let Some(url) = common::server_url("a_garbled_end_is_forgotten") else {
        return;
    };
    for garbled in GARBLED {
        let namespace = common::namespace(&format!("until-forgotten-{garbled}"));
        let fleet =
            Fleet::without_evidence(common::manual_rounds(url.clone(), namespace.clone())).unwrap();
        let breaker = fleet.breaker(common::one_probe_rules(60_000)).unwrap();
        fleet.sync_now().await.unwrap();
        assert!((0..100).any(|_| breaker.record("payments", false).is_some()));
        fleet.sync_now().await.unwrap();
        garble_until(&url, &namespace, garbled);
        // the round forgets it (and the process, whose own breaker is
        // open, publishes its opening again, as after Redis lost it)
        fleet.sync_now().await.unwrap();
        fleet.sync_now().await.unwrap();
        let fields = entry(&url, &namespace);
        assert!(
            fields
                .as_ref()
                .and_then(|f| f.first())
                .is_some_and(|until| until.len() <= 15 && until.parse::<u64>().is_ok()),
            "{garbled:?} held on: {fields:?}"
        );
        assert!(breaker.is_open_fleetwide("payments"), "{garbled:?}");
    }
}
