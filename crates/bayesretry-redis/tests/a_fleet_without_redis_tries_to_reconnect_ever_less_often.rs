//! While Redis is away, every process of a fleet used to try to connect at
//! every interval, and when Redis came back they all reconnected in the same
//! instant. A fleet now backs off: the first retry at the next round, then
//! waits that double up to a cap, drawn at random between half of the wait
//! and all of it, on the fleet's clock; `sync_now` still tries at once.
//!
//! The waits are checked on a manual clock, by counting the connections a
//! server that takes them and hangs up receives: rounds run every few
//! milliseconds in real time, and none of them may connect until the
//! manual clock says so.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;
use std::net::TcpListener;

use bayesretry_policy::ManualClock;
use bayesretry_redis::{Fleet, FleetConfig, Stats};

/// A server that takes every connection and hangs up at once: a Redis that
/// is away, whose connection attempts are counted.
fn hanging_up() -> (u16, Arc<AtomicU64>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let attempts = Arc::new(AtomicU64::new(0));
    let counted = attempts.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            // counted before the hang-up the client fails on
            counted.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (port, attempts)
}

/// Waits (polling, for at most ten seconds) until `done` holds of the
/// fleet's stats; the stats then.
async fn until(fleet: &Fleet, done: impl Fn(&Stats) -> bool) -> Stats {
    for _ in 0..2_000 {
        let stats = fleet.stats();
        if done(&stats) {
            return stats;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("the fleet never got there: {:?}", fleet.stats());
}

/// Lets twenty more rounds go by, skipped, and says how many connections
/// were attempted in all.
async fn after_twenty_skipped(fleet: &Fleet, attempts: &AtomicU64) -> u64 {
    let skipped = fleet.stats().skipped_rounds;
    until(fleet, |s| s.skipped_rounds >= skipped + 20).await;
    attempts.load(Ordering::SeqCst)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_without_redis_tries_to_reconnect_ever_less_often() {
    let (port, attempts) = hanging_up();
    let clock = ManualClock::new(1_000_000);
    let config = FleetConfig::new(format!("redis://127.0.0.1:{port}/"))
        .with_interval(Duration::from_millis(5))
        .with_ttl(Duration::from_secs(60))
        .with_connect_timeout(Duration::from_secs(2))
        .with_response_timeout(Duration::from_secs(2))
        .with_reconnect_backoff(Duration::from_secs(1), Duration::from_secs(4))
        .with_clock(clock.clone());
    // a fleet with evidence asks Redis at every round it makes
    let fleet = Fleet::start(config, common::store(1)).unwrap();

    // the first round fails, and the first retry comes at the next round
    let stats = until(&fleet, |s| s.failed_rounds >= 2).await;
    assert_eq!(stats.failed_rounds, 2, "{stats:?}");
    assert_eq!(
        stats.last_error,
        Some(bayesretry_redis::SyncError::Unreachable)
    );
    // then a wait of half a second to a second: none while the clock stands
    assert_eq!(after_twenty_skipped(&fleet, &attempts).await, 2);
    let next = fleet.stats().reconnect_at_ms.unwrap();
    assert!((1_000_500..=1_001_000).contains(&next), "{next}");
    clock.advance(Duration::from_secs(1));
    until(&fleet, |s| s.failed_rounds >= 3).await;
    assert_eq!(attempts.load(Ordering::SeqCst), 3);

    // then one to two seconds: not a millisecond short of one
    clock.advance(Duration::from_millis(999));
    assert_eq!(after_twenty_skipped(&fleet, &attempts).await, 3);
    clock.advance(Duration::from_millis(1_001));
    until(&fleet, |s| s.failed_rounds >= 4).await;
    assert_eq!(attempts.load(Ordering::SeqCst), 4);

    // then two to four, and never more than the cap of four seconds
    for failed in 4..10 {
        assert_eq!(after_twenty_skipped(&fleet, &attempts).await, failed);
        let stats = fleet.stats();
        let wait = stats.reconnect_at_ms.unwrap() - stats.last_error_ms.unwrap();
        assert!((2_000..=4_000).contains(&wait), "{wait} ms");
        clock.advance(Duration::from_secs(4));
        until(&fleet, |s| s.failed_rounds > failed).await;
        assert_eq!(attempts.load(Ordering::SeqCst), failed + 1);
    }

    // an explicit sync tries at once, backoff or not
    assert_eq!(after_twenty_skipped(&fleet, &attempts).await, 10);
    assert!(fleet.sync_now().await.is_err());
    assert_eq!(attempts.load(Ordering::SeqCst), 11);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_that_reaches_redis_ends_the_backoff() {
    let Some(mut server) =
        common::OwnedServer::start("a_round_that_reaches_redis_ends_the_backoff")
    else {
        return;
    };
    let clock = ManualClock::new(1_000_000);
    let config = common::manual_rounds(server.url(), common::namespace("backoff-reset"))
        .with_connect_timeout(Duration::from_millis(200))
        .with_reconnect_backoff(Duration::from_secs(60), Duration::from_secs(600))
        .with_clock(clock.clone());
    let fleet = Fleet::start(config, common::store(1)).unwrap();
    fleet.sync_now().await.unwrap();
    server.stop();
    for _ in 0..5 {
        assert!(fleet.sync_now().await.is_err());
    }
    let stats = fleet.stats();
    assert!(stats.reconnect_at_ms.is_some(), "{stats:?}");
    server.restart();
    assert!(common::sync_until_back(&fleet, 100).await);
    let stats = fleet.stats();
    assert_eq!(stats.reconnect_at_ms, None, "{stats:?}");
    // lost again: the first retry is the next round's, as at the start
    server.stop();
    assert!(fleet.sync_now().await.is_err());
    assert_eq!(fleet.stats().reconnect_at_ms, None);
}

#[test]
fn a_backoff_that_starts_above_its_cap_is_refused() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = runtime.enter();
    let config = FleetConfig::new("redis://127.0.0.1:1/")
        .with_reconnect_backoff(Duration::from_secs(10), Duration::from_secs(5));
    let error = Fleet::without_evidence(config).unwrap_err();
    assert!(
        matches!(
            error,
            bayesretry_redis::Error::InvalidReconnectBackoff { .. }
        ),
        "{error}"
    );
    let config = FleetConfig::new("redis://127.0.0.1:1/").with_reconnect_backoff(
        Duration::ZERO,
        FleetConfig::MAX_TTL + Duration::from_millis(1),
    );
    assert!(Fleet::without_evidence(config).is_err());
    assert_eq!(
        FleetConfig::new("redis://127.0.0.1:1/").reconnect_backoff(),
        (Duration::from_secs(2), Duration::from_secs(30))
    );
}
