//! A fleet breaker tracks at most 4 096 endpoints. An opening a policy's
//! own breaker tells it through the seam (`FleetView::publish`) for an
//! endpoint beyond them is still published to the fleet, as the standalone
//! `record` publishes its own: the breaker said so, but the sync task, which
//! publishes only an opening it still finds open in the process, found no
//! trace of it (no entry, and no breaker of its own through the seam) and
//! dropped it, so that no other process ever heard of that endpoint's
//! outage.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use bayesretry_breaker::{FleetView, Transition};
use bayesretry_redis::Fleet;

/// The endpoints a fleet breaker tracks.
const TRACKED: usize = 4_096;

/// Whether the fleet's hash of openings holds `endpoint`.
fn opened_in_redis(conn: &mut redis::Connection, namespace: &str, endpoint: &str) -> bool {
    redis::cmd("HEXISTS")
        .arg(format!("{{{namespace}}}:br"))
        .arg(endpoint)
        .query(conn)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opening_told_past_the_endpoints_a_fleet_breaker_tracks_is_published() {
    let Some(url) = common::server_url(
        "an_opening_told_past_the_endpoints_a_fleet_breaker_tracks_is_published",
    ) else {
        return;
    };
    let namespace = common::namespace("opening-past-tracked");
    let fleet =
        Fleet::without_evidence(common::manual_rounds(url.clone(), namespace.clone())).unwrap();
    let breaker = fleet.breaker(common::one_probe_rules(60_000)).unwrap();
    fleet.sync_now().await.unwrap();

    // As many endpoints open as the breaker tracks, each told by a policy's
    // own breaker and published.
    let opened = Transition::Opened { until_ms: 60_000 };
    for i in 0..TRACKED {
        breaker.publish(&format!("endpoint-{i}"), 0, opened);
    }
    fleet.sync_now().await.unwrap();
    let mut conn = common::admin(&url);
    assert!(opened_in_redis(&mut conn, &namespace, "endpoint-0"));
    assert!(breaker.is_open_fleetwide("endpoint-0"));

    // One more opens: the breaker has no room to track it, and publishes it
    // all the same.
    breaker.publish("one-more", 0, opened);
    fleet.sync_now().await.unwrap();
    assert!(
        opened_in_redis(&mut conn, &namespace, "one-more"),
        "the opening of an endpoint past those tracked was never published"
    );
}
