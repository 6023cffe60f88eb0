//! While an endpoint is half-open and the fleet's probes of the round are
//! all taken, a process whose calls keep finding no probe asks Redis for one
//! again after a while, not at every call: claiming at once after each
//! refusal, a busy process would run probe claims back to back, a round trip
//! after another, for as long as the round lasts.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use core::time::Duration;

use bayesretry_breaker::Admission;

/// Scripts the server has run so far.
fn scripts_run(conn: &mut redis::Connection) -> u64 {
    let info: String = redis::cmd("INFO").arg("commandstats").query(conn).unwrap();
    info.lines()
        .filter(|line| line.starts_with("cmdstat_evalsha:") || line.starts_with("cmdstat_eval:"))
        .filter_map(|line| {
            let calls = line.split_once("calls=")?.1;
            calls.split(',').next()?.parse::<u64>().ok()
        })
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_without_a_probe_does_not_ask_redis_at_every_call() {
    let Some(server) = common::OwnedServer::start("a_process_without_a_probe") else {
        return;
    };
    let config = common::manual_rounds(server.url(), common::namespace("claims"));
    let rules = common::one_probe_rules(1_000);
    let (fleet_a, fleet_b, a, b) = common::payments_opened_by_a(config, rules).await;
    fleet_b.sync_now().await.unwrap();

    // Past the cooldown A takes the round's one probe, and keeps it out.
    tokio::time::sleep(Duration::from_millis(1_050)).await;
    fleet_a.sync_now().await.unwrap();
    fleet_b.sync_now().await.unwrap();
    let mut probe = false;
    for _ in 0..20 {
        if let Admission::Probe { .. } = a.check("payments") {
            probe = true;
            break;
        }
        fleet_a.sync_now().await.unwrap();
    }
    assert!(probe, "A got the probe");

    // B's calls, one a millisecond for about half the round, find none.
    let mut conn = common::admin(&server.url());
    let before = scripts_run(&mut conn);
    for _ in 0..400 {
        assert!(!b.check("payments").is_allowed());
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let claims = scripts_run(&mut conn) - before;
    assert!(
        claims <= 10,
        "{claims} scripts run for 400 refused calls of one process"
    );
}
