//! An operator running many replicas needs more from `Stats` than whether the
//! last round reached Redis: why the fleet is not syncing (the kind of the
//! last round's error, to match on) and since when (the time of the last
//! round that reached Redis, on the fleet's clock), so that a dashboard can
//! show it and an alert can fire on "Redis unreachable for N s". The stats
//! used to hold counters only, and the reason was in the log alone.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use core::time::Duration;
use std::io::Read;
use std::net::TcpListener;

use bayesretry_breaker::Config;
use bayesretry_policy::{Clock, ManualClock};
use bayesretry_redis::{Fleet, FleetBudgetConfig, FleetConfig, SyncError};

/// The fleet's clock at start.
const START_MS: u64 = 1_000_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_that_never_reached_redis_counts_its_spell_from_its_start() {
    let clock = ManualClock::new(START_MS);
    let config = FleetConfig::new(format!("redis://127.0.0.1:{}/", common::free_port()))
        .with_interval(Duration::from_secs(60))
        .with_connect_timeout(Duration::from_millis(200))
        .with_clock(clock.clone());
    let fleet = Fleet::without_evidence(config).unwrap();
    assert!(fleet.sync_now().await.is_err());
    clock.advance(Duration::from_secs(7));

    let stats = fleet.stats();
    assert!(!stats.connected);
    assert_eq!(stats.last_error, Some(SyncError::Unreachable), "{stats:?}");
    assert_eq!(stats.last_error_ms, Some(START_MS), "{stats:?}");
    assert_eq!(stats.last_reached_ms, None, "{stats:?}");
    assert_eq!(stats.unreachable_since_ms, Some(START_MS), "{stats:?}");
    assert_eq!(stats.now_ms, START_MS + 7_000);
    assert_eq!(stats.unreachable_for(), Some(Duration::from_secs(7)));
    assert!(stats.failed_in_a_row >= 1, "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_lost_then_back_is_timed_on_the_fleet_s_clock() {
    let Some(mut server) =
        common::OwnedServer::start("a_redis_lost_then_back_is_timed_on_the_fleet_s_clock")
    else {
        return;
    };
    let clock = ManualClock::new(START_MS);
    let config = common::manual_rounds(server.url(), common::namespace("stats-lost"))
        .with_connect_timeout(Duration::from_millis(200))
        .with_clock(clock.clone());
    // a fleet with evidence asks Redis at every round
    let fleet = Fleet::start(config, common::store(1)).unwrap();
    clock.advance(Duration::from_secs(1));
    fleet.sync_now().await.unwrap();
    let reached = clock.now_ms();
    let stats = fleet.stats();
    assert!(stats.connected);
    assert_eq!(stats.last_reached_ms, Some(reached), "{stats:?}");
    assert_eq!(stats.unreachable_since_ms, None);
    assert_eq!(stats.unreachable_for(), None);
    assert_eq!((stats.last_error, stats.failed_in_a_row), (None, 0));

    server.stop();
    clock.advance(Duration::from_secs(2));
    assert!(fleet.sync_now().await.is_err());
    let failed = clock.now_ms();
    clock.advance(Duration::from_secs(3));
    assert!(fleet.sync_now().await.is_err());
    let stats = fleet.stats();
    assert!(!stats.connected);
    assert_eq!(stats.last_error, Some(SyncError::Unreachable), "{stats:?}");
    assert_eq!(stats.last_error_ms, Some(failed + 3_000), "{stats:?}");
    assert_eq!(stats.last_reached_ms, Some(reached), "{stats:?}");
    assert_eq!(stats.unreachable_since_ms, Some(reached), "{stats:?}");
    assert_eq!(stats.unreachable_for(), Some(Duration::from_secs(5)));
    // the two here, and the timer's first round if it met Redis stopped
    assert!((2..=3).contains(&stats.failed_in_a_row), "{stats:?}");

    server.restart();
    clock.advance(Duration::from_secs(1));
    assert!(common::sync_until_back(&fleet, 100).await);
    let back = clock.now_ms();
    let stats = fleet.stats();
    assert!(stats.connected);
    assert_eq!(stats.last_reached_ms, Some(back), "{stats:?}");
    assert_eq!(stats.unreachable_since_ms, None, "{stats:?}");
    assert_eq!(stats.failed_in_a_row, 0, "{stats:?}");
    // the last error stays, older than the last round that reached Redis
    assert_eq!(stats.last_error, Some(SyncError::Unreachable), "{stats:?}");
    assert!(stats.last_error_ms < stats.last_reached_ms, "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_password_is_told_from_a_redis_that_is_away() {
    let Some(url) = common::server_url("a_wrong_password_is_told_from_a_redis_that_is_away") else {
        return;
    };
    let config = common::manual_rounds(url, common::namespace("stats-auth"))
        .with_credentials(Some(String::from("nobody")), "not-the-password");
    let fleet = Fleet::without_evidence(config).unwrap();
    assert!(fleet.sync_now().await.is_err());
    let stats = fleet.stats();
    assert!(!stats.connected);
    assert_eq!(stats.last_error, Some(SyncError::Auth), "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_that_does_not_answer_is_a_timeout() {
    // a server that takes connections and never says a word
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = stream.set_read_timeout(Some(Duration::from_millis(1)));
            let _ = stream.read(&mut [0; 64]);
            held.push(stream);
        }
    });
    let config = FleetConfig::new(format!("redis://127.0.0.1:{port}/"))
        .with_interval(Duration::from_secs(60))
        .with_connect_timeout(Duration::from_millis(200))
        .with_response_timeout(Duration::from_millis(200));
    let fleet = Fleet::without_evidence(config).unwrap();
    let _budget = fleet
        .budget(FleetBudgetConfig::fixed_window(
            "retries",
            10,
            Duration::from_secs(3_600),
        ))
        .unwrap();
    assert!(fleet.sync_now().await.is_err());
    let stats = fleet.stats();
    assert_eq!(stats.last_error, Some(SyncError::Timeout), "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_of_the_wrong_type_is_a_refusal_that_still_reaches_redis() {
    let Some(url) =
        common::server_url("a_key_of_the_wrong_type_is_a_refusal_that_still_reaches_redis")
    else {
        return;
    };
    let clock = ManualClock::new(START_MS);
    let namespace = common::namespace("stats-refused");
    let config = common::manual_rounds(url.clone(), namespace.clone()).with_clock(clock.clone());
    let fleet = Fleet::without_evidence(config).unwrap();
    let _breaker = fleet.breaker(Config::new()).unwrap();
    fleet.sync_now().await.unwrap();
    let () = redis::cmd("SET")
        .arg(format!("{{{namespace}}}:br"))
        .arg("not a hash")
        .query(&mut common::admin(&url))
        .unwrap();
    clock.advance(Duration::from_secs(4));
    assert!(fleet.sync_now().await.is_err());
    let stats = fleet.stats();
    assert!(stats.connected, "{stats:?}");
    assert_eq!(stats.last_error, Some(SyncError::Refused), "{stats:?}");
    assert_eq!(stats.last_reached_ms, Some(START_MS + 4_000), "{stats:?}");
    assert_eq!(stats.unreachable_since_ms, None, "{stats:?}");
    // every round that failed did so after the key was spoiled, in a row
    // (the fleet's own first round may come after the explicit one, and fail
    // too)
    assert!(stats.failed_in_a_row >= 1, "{stats:?}");
    assert_eq!(stats.failed_in_a_row, stats.failed_rounds, "{stats:?}");
}
