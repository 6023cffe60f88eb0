//! An endpoint's `open until` in `{ns}:br` that is a whole number of ms, of
//! fifteen digits at most, so not garbled, but further off than any process
//! of the fleet could write: by hand, by a tool sharing the namespace, or by
//! a process of the previous version, which took any longest cooldown (one
//! of centuries among them). It was kept as it was: the endpoint stayed open
//! for the whole fleet until the year it named, never stale, and every later
//! opening kept it as the later end. It is now cut to the reading process's
//! longest cooldown from the server's now, in Redis, so that it ends: the
//! endpoint stays open (the fleet's word that it was down), for no longer
//! than a process of this fleet would hold it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod common;

use bayesretry_breaker::Admission;
use bayesretry_policy::{Clock, SystemClock};

/// The longest cooldown of the tests' breakers.
const LONGEST_MS: u64 = 120_000;

/// The endpoint's `open until` in `{ns}:br`, as written.
fn held_until(url: &str, namespace: &str) -> Option<String> {
    let held: Option<String> = redis::cmd("HGET")
        .arg(format!("{{{namespace}}}:br"))
        .arg("payments")
        .query(&mut common::admin(url))
        .unwrap();
    held.and_then(|v| v.split(' ').next().map(str::to_owned))
}

/// The server's clock, in ms.
fn server_now(url: &str) -> u64 {
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query(&mut common::admin(url)).unwrap();
    secs * 1_000 + micros / 1_000
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opening_s_end_past_the_longest_cooldown_is_cut_to_it() {
    let Some(url) = common::server_url("an_opening_s_end_past_the_longest_cooldown_is_cut_to_it")
    else {
        return;
    };
    // by hand, and by the previous version's opening with a cooldown of
    // about 3 000 years (its processes took any)
    for how in ["by hand", "previous version"] {
        let namespace = common::namespace(&format!("far-until-{}", how.len()));
        let config = common::manual_rounds(url.clone(), namespace.clone());
        let rules = common::one_probe_rules(60_000).with_max_cooldown_ms(LONGEST_MS);
        let (fleet_a, fleet_b, _a, b) = common::payments_opened_by_a(config, rules).await;
        if how == "by hand" {
            let () = redis::cmd("HSET")
                .arg(format!("{{{namespace}}}:br"))
                .arg("payments")
                .arg("999999999999999 60000 0")
                .query(&mut common::admin(&url))
                .unwrap();
        } else {
            let _: i64 = common::previous_version_script("BREAKER_OPEN")
                .arg(format!("{{{namespace}}}"))
                .arg("payments")
                .arg("100000000000000")
                .invoke(&mut common::admin(&url))
                .unwrap();
        }
        let far = held_until(&url, &namespace).unwrap();
        assert_eq!(far.len(), 15, "{how}: {far}");

        // B, which never saw the endpoint fail, reads the fleet's opening
        let before = server_now(&url);
        fleet_b.sync_now().await.unwrap();
        let after = server_now(&url);
        let cut: u64 = held_until(&url, &namespace).unwrap().parse().unwrap();
        assert!(
            (before..=after + LONGEST_MS).contains(&cut),
            "{how}: {far} cut to {cut}, not within {LONGEST_MS} ms of {before}..{after}"
        );
        assert!(b.is_open_fleetwide("payments"), "{how}: not open for B");
        let now = SystemClock::new().now_ms();
        match b.check("payments") {
            Admission::Rejected { until_ms, .. } => assert!(
                until_ms <= now + LONGEST_MS,
                "{how}: B refuses the endpoint until {until_ms}, {} ms on",
                until_ms.saturating_sub(now)
            ),
            other => panic!("{how}: B admitted a call to an open endpoint: {other:?}"),
        }

        // a later opening keeps its own end, not the far one
        fleet_a.sync_now().await.unwrap();
        assert!((0..100).any(|_| b.record("payments", false).is_some()));
        fleet_b.sync_now().await.unwrap();
        let end: u64 = held_until(&url, &namespace).unwrap().parse().unwrap();
        assert!(end <= server_now(&url) + LONGEST_MS, "{how}: {end}");
    }
}
