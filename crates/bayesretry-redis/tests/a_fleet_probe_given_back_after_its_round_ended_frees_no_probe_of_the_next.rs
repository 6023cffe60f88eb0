//! A probe a fleet breaker handed to a policy's attempt (`FleetView::admit`)
//! and got back unsent (`FleetView::release_probe`) after the fleet had
//! reopened the endpoint and ended the probe's round: the claim it was made
//! of belongs to that round, and frees nothing of the next. Put back among
//! the probes held, it went to the next call as a probe the fleet never
//! counted — one more than the round's `max_probes` — whose outcome Redis
//! then ignored as of an ended round: its success closed nothing, and the
//! endpoint stayed half-open for the fleet.
//!
//! The fleet's openings and rounds are written into Redis by hand, as the
//! scripts write them, so that no test waits for a cooldown to end on the
//! server's clock.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use bayesretry_breaker::{Admission, FleetView};
use bayesretry_redis::Fleet;

/// The Redis server's clock, in ms.
fn server_ms(conn: &mut redis::Connection) -> u64 {
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query(conn).unwrap();
    secs * 1_000 + micros / 1_000
}

/// Writes `endpoint`'s opening as the scripts do: open until `until_ms`
/// (server ms) with a minute's cooldown and no success counted, in the
/// round named `round`; the probes counted for the round before are gone.
fn write_opening(
    conn: &mut redis::Connection,
    namespace: &str,
    endpoint: &str,
    until_ms: u64,
    round: u64,
) {
    let key = format!("{{{namespace}}}:br");
    let () = redis::cmd("HSET")
        .arg(&key)
        .arg(endpoint)
        .arg(format!("{until_ms} 60000 0"))
        .query(conn)
        .unwrap();
    let () = redis::cmd("HSET")
        .arg(format!("{key}:rounds"))
        .arg(endpoint)
        .arg(format!("{round} {until_ms}"))
        .query(conn)
        .unwrap();
    let _: u64 = redis::cmd("DEL")
        .arg(format!("{key}:p:{endpoint}"))
        .query(conn)
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_probe_given_back_after_its_round_ended_frees_no_probe_of_the_next() {
    let Some(url) = common::server_url(
        "a_fleet_probe_given_back_after_its_round_ended_frees_no_probe_of_the_next",
    ) else {
        return;
    };
    let namespace = common::namespace("probe-of-ended-round");
    let fleet =
        Fleet::without_evidence(common::manual_rounds(url.clone(), namespace.clone())).unwrap();
    let breaker = fleet.breaker(common::one_probe_rules(60_000)).unwrap();
    fleet.sync_now().await.unwrap();
    let mut conn = common::admin(&url);

    // The fleet holds payments half-open, in its first round.
    let now = server_ms(&mut conn);
    write_opening(&mut conn, &namespace, "payments", now - 1, now - 1);
    fleet.sync_now().await.unwrap();
    assert!(
        !breaker.admit("payments", 0).is_allowed(),
        "no probe claimed yet"
    );
    fleet.sync_now().await.unwrap();
    let Admission::Probe { round: first, .. } = breaker.admit("payments", 0) else {
        panic!("the round's one probe, claimed at the round");
    };

    // While that probe's attempt waits, another process's probe fails: the
    // fleet reopens payments in a new round, and this process reads it.
    let now = server_ms(&mut conn);
    write_opening(&mut conn, &namespace, "payments", now + 60_000, now);
    fleet.sync_now().await.unwrap();
    assert!(!breaker.admit("payments", 0).is_allowed(), "open again");
    // The new cooldown ends: half-open again, in the new round.
    write_opening(&mut conn, &namespace, "payments", now - 1, now);
    fleet.sync_now().await.unwrap();

    // The first round's probe comes back unsent: it is no probe of this one.
    breaker.release_probe("payments", first);
    assert!(
        !breaker.admit("payments", 0).is_allowed(),
        "a probe of an ended round was handed out again"
    );

    // A round claims this round's probe, and its success closes payments.
    fleet.sync_now().await.unwrap();
    let Admission::Probe { round, .. } = breaker.admit("payments", 0) else {
        panic!("the new round's probe");
    };
    FleetView::record(&*breaker, "payments", 0, true, Some(round));
    fleet.sync_now().await.unwrap();
    assert!(
        !breaker.is_open_fleetwide("payments"),
        "the probe's success closed payments for the fleet"
    );
}
