//! Shutting down: a process that ends with `Fleet::sync_now` leaves the
//! outcomes it recorded since its last round to the fleet; one that drops
//! its fleet (or lets its runtime end) without it does not push them — the
//! sync task is stopped, not flushed, since a drop cannot wait on Redis —
//! and the fleet never sees them. The crate's docs say so, under
//! "Shutting down".

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use bayesretry_redis::Fleet;
use bayesretry_store::{Context, ErrorClass, PosteriorStore};

const CTX: Context<'static> = Context::new("api.example.com", 1, ErrorClass::Http(529));

/// What a newcomer to the fleet in `namespace` reads of `CTX`'s failures.
async fn failures_seen(url: &str, namespace: &str) -> f64 {
    let reader = common::store(2);
    let fleet = Fleet::start(common::manual_rounds(url, namespace), reader.clone()).unwrap();
    fleet.sync_now().await.unwrap();
    reader.evidence(&CTX, 10).failures()
}

// On a runtime of one thread, the sync task runs only when the test awaits:
// no round of its own comes between the outcomes and the end of the process.
#[tokio::test(flavor = "current_thread")]
async fn outcomes_flushed_with_sync_now_before_exit_reach_the_fleet() {
    let Some(url) =
        common::server_url("outcomes_flushed_with_sync_now_before_exit_reach_the_fleet")
    else {
        return;
    };
    let namespace = common::namespace("flushed-before-exit");
    {
        let store = common::store(1);
        let fleet = Fleet::start(common::manual_rounds(&url, &namespace), store.clone()).unwrap();
        for _ in 0..3 {
            store.observe(&CTX, false, 5);
        }
        fleet.sync_now().await.unwrap();
    }
    assert_eq!(failures_seen(&url, &namespace).await, 3.0);
}

#[tokio::test(flavor = "current_thread")]
async fn outcomes_of_a_fleet_dropped_without_sync_now_never_reach_the_fleet() {
    let Some(url) =
        common::server_url("outcomes_of_a_fleet_dropped_without_sync_now_never_reach_the_fleet")
    else {
        return;
    };
    let namespace = common::namespace("dropped-before-exit");
    {
        let store = common::store(1);
        let fleet = Fleet::start(common::manual_rounds(&url, &namespace), store.clone()).unwrap();
        for _ in 0..3 {
            store.observe(&CTX, false, 5);
        }
        assert_eq!(fleet.stats().pushed, 0);
        drop(fleet);
    }
    assert_eq!(failures_seen(&url, &namespace).await, 0.0);
}
