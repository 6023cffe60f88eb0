//! A rolling deploy: a process still running the previous version's scripts
//! claims a half-open probe of an endpoint a new process opened, and the
//! probe fails. The old script must read the opening as one (the round the
//! new scripts keep is not in the value it parses), back the cooldown off
//! and keep the endpoint open for the fleet, not take the value for garbage
//! and close the endpoint on a failure.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod common;

use core::time::Duration;

use bayesretry_breaker::{Admission, Config};
use bayesretry_redis::Fleet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_process_s_failed_probe_keeps_the_endpoint_open() {
    let Some(url) = common::server_url("an_old_process_s_failed_probe_keeps_the_endpoint_open")
    else {
        return;
    };
    let ns = common::namespace("old-failed-probe");
    let config = common::manual_rounds(url.clone(), ns.clone());
    let rules = Config::new()
        .with_min_strength(5.0)
        .with_open_below(0.5)
        .with_cooldown_ms(200);
    let fleet = Fleet::without_evidence(config).unwrap();
    let breaker = fleet.breaker(rules).unwrap();
    fleet.sync_now().await.unwrap();
    assert!((0..100).any(|_| breaker.record("payments", false).is_some()));
    fleet.sync_now().await.unwrap();
    tokio::time::sleep(Duration::from_millis(250)).await;

    let mut old = common::admin(&url);
    let prefix = format!("{{{ns}}}");
    let claimed: i64 = common::previous_version_script("BREAKER_CLAIM")
        .prepare_invoke()
        .arg(&prefix)
        .arg("payments")
        .arg(1)
        .invoke(&mut old)
        .unwrap();
    assert_eq!(claimed, 1, "the old process got a probe");
    let reply: String = common::previous_version_script("BREAKER_RESULT")
        .prepare_invoke()
        .arg(&prefix)
        .arg("payments")
        .arg("0") // the probe failed
        .arg(1)
        .arg(2.0)
        .arg(300_000)
        .invoke(&mut old)
        .unwrap();
    let held: Option<String> = redis::cmd("HGET")
        .arg(format!("{prefix}:br"))
        .arg("payments")
        .query(&mut old)
        .unwrap();
    assert_eq!(reply, "open", "the failed probe left {held:?}");
    let cooldown: Option<u64> = held
        .as_deref()
        .and_then(|v| v.split(' ').nth(1))
        .and_then(|c| c.parse().ok());
    assert_eq!(cooldown, Some(400), "backed off from 200 ms: {held:?}");

    // the new process hears it is open again
    fleet.sync_now().await.unwrap();
    assert!(matches!(
        breaker.check("payments"),
        Admission::Rejected { .. }
    ));
    assert!(breaker.is_open_fleetwide("payments"));
}
