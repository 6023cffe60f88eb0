//! Two processes, each with a `RetryPolicy` that takes its fleet's breaker
//! as its shared one: A's call is answered "429, retry after 20 s", which
//! holds the endpoint for A's policy and, through A's fleet breaker
//! (`FleetView::hold`), for the fleet. After a round of each, B's policy
//! refuses a first attempt as the server's hold (`ServerHold`, with the
//! fleet's time left), though B itself was never answered, and its own
//! breaker stays closed. The hold is held in Redis with a time to live, so
//! it ends there by itself; and it ends in B when its time is up on B's
//! clock. A later end wins over an earlier one; a hold told while Redis is
//! away is kept by its process, and shared once Redis is back.
//!
//! Two fleets in one test process stand for the two processes: each has its
//! own connection, sync task and fleet breaker, and shares only Redis. The
//! policies and the fleets run on manual clocks; the holds Redis keeps run
//! on the server's.

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

use bayesretry_breaker::{FleetView, State};
use bayesretry_policy::{
    Classification, ErrorClass, ManualClock, RetryError, RetryErrorKind, RetryPolicy,
    VirtualSleeper,
};
use bayesretry_redis::{Fleet, FleetBreaker, FleetConfig};

/// The server's wait in these tests.
const WAIT: Duration = Duration::from_secs(20);

/// An error that carries the server's wait, if any.
type Reply = Option<Duration>;

/// Classifies a [`Reply`]: a 429, with the server's wait.
fn classify(reply: &Reply) -> Classification {
    let class = Classification::Retryable(ErrorClass::Http(429));
    match reply {
        Some(wait) => class.with_retry_after(*wait),
        None => class,
    }
}

/// A policy of one attempt per call on a manual clock, with a breaker of its
/// own and `shared` as its shared one; its clock.
fn policy_with(shared: &Arc<FleetBreaker>) -> (RetryPolicy, ManualClock) {
    let clock = ManualClock::new(1_000_000);
    let shared: Arc<dyn FleetView + Send + Sync> = shared.clone();
    let policy = RetryPolicy::builder()
        .with_virtual_time(VirtualSleeper::new(clock.clone()))
        .with_shared_breaker(shared)
        .with_max_retry_after(Duration::from_secs(60))
        .with_max_attempts(1)
        .build()
        .unwrap();
    (policy, clock)
}

/// A call to "chat" answered 429 with a wait of `wait`.
fn told_to_wait(policy: &RetryPolicy, wait: Duration) {
    let result = policy
        .call_with("chat", classify)
        .run_blocking(|_| Err::<(), Reply>(Some(wait)));
    assert!(result.is_err(), "{result:?}");
}

/// A call to "chat" that succeeds if it is let go: how many attempts it
/// made, and the hold's time left if it was refused as held.
fn call(policy: &RetryPolicy) -> (u32, Option<Duration>) {
    let mut made = 0;
    let result = policy.call_with("chat", classify).run_blocking(|_| {
        made += 1;
        Ok::<(), Reply>(())
    });
    let held = match result.as_ref().map_err(RetryError::kind) {
        Err(RetryErrorKind::ServerHold { retry_after, .. }) => Some(*retry_after),
        Ok(()) => None,
        Err(other) => panic!("neither admitted nor held: {other:?}"),
    };
    (made, held)
}

/// Two fleets on `namespace`, each on a manual clock of its own, both
/// synced once; their breakers and clocks.
async fn two_fleets(
    url: &str,
    namespace: &str,
) -> (
    (Fleet, Arc<FleetBreaker>, ManualClock),
    (Fleet, Arc<FleetBreaker>, ManualClock),
) {
    let one = |clock: &ManualClock| -> FleetConfig {
        common::manual_rounds(url, namespace).with_clock(clock.clone())
    };
    let (clock_a, clock_b) = (ManualClock::new(7_000_000), ManualClock::new(3_000));
    let (fleet_a, fleet_b) = (
        Fleet::without_evidence(one(&clock_a)).unwrap(),
        Fleet::without_evidence(one(&clock_b)).unwrap(),
    );
    let rules = common::one_probe_rules(1_000);
    let (breaker_a, breaker_b) = (
        fleet_a.breaker(rules).unwrap(),
        fleet_b.breaker(rules).unwrap(),
    );
    fleet_a.sync_now().await.unwrap();
    fleet_b.sync_now().await.unwrap();
    ((fleet_a, breaker_a, clock_a), (fleet_b, breaker_b, clock_b))
}

/// The fleet's holds in Redis: each endpoint's end on the server's clock,
/// and the hash's time to live, in ms.
fn holds_in_redis(url: &str, namespace: &str) -> (Vec<(String, u64)>, i64) {
    let mut admin = common::admin(url);
    let key = format!("{{{namespace}}}:br:holds");
    let mut held: Vec<(String, u64)> = redis::cmd("HGETALL").arg(&key).query(&mut admin).unwrap();
    held.sort();
    let ttl: i64 = redis::cmd("PTTL").arg(&key).query(&mut admin).unwrap();
    (held, ttl)
}

/// The server's clock in ms.
fn redis_now_ms(url: &str) -> u64 {
    let (s, us): (u64, u64) = redis::cmd("TIME").query(&mut common::admin(url)).unwrap();
    s * 1_000 + us / 1_000
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_hold_told_to_one_process_holds_every_process_after_a_round() {
    let Some(url) =
        common::server_url("a_servers_hold_told_to_one_process_holds_every_process_after_a_round")
    else {
        return;
    };
    let namespace = common::namespace("fleet-hold");
    let ((fleet_a, breaker_a, _), (fleet_b, breaker_b, fleet_clock_b)) =
        two_fleets(&url, &namespace).await;
    let (policy_a, _) = policy_with(&breaker_a);
    let (policy_b, clock_b) = policy_with(&breaker_b);

    told_to_wait(&policy_a, WAIT);
    assert_eq!(call(&policy_a), (0, Some(WAIT)), "A holds at once");
    assert_eq!(
        breaker_a.held_until("chat", 50),
        Some(50 + 20_000),
        "A's policy told its fleet breaker, on A's policy's clock"
    );
    // not yet pulled by B: B's call goes out
    assert_eq!(breaker_b.held_until("chat", policy_b.now_ms()), None);
    assert_eq!(call(&policy_b), (1, None));

    // A round publishes it; B's round reads it.
    fleet_a.sync_now().await.unwrap();
    let before = redis_now_ms(&url);
    fleet_b.sync_now().await.unwrap();
    let (made, held) = call(&policy_b);
    assert_eq!(made, 0, "B's policy made no attempt");
    let left = held.expect("held as a server's wait, not as an open breaker");
    assert!(
        left > WAIT - Duration::from_secs(5) && left <= WAIT,
        "the fleet's time left: {left:?}"
    );
    assert_eq!(
        policy_b.breaker_state("chat"),
        Some(State::Closed),
        "B's own breaker saw no failure"
    );
    // other endpoints are untouched
    let other = policy_b
        .call_with("search", classify)
        .run_blocking(|_| Ok::<(), Reply>(()));
    assert!(other.is_ok(), "{other:?}");

    // In Redis, the end on the server's clock, and a time to live that ends
    // the key with it.
    let (held, ttl) = holds_in_redis(&url, &namespace);
    let [(endpoint, end)] = held.as_slice() else {
        panic!("one hold: {held:?}");
    };
    assert_eq!(endpoint, "chat");
    assert!(
        *end > before && *end <= redis_now_ms(&url) + 20_000,
        "{end} on the server's clock, now {before}"
    );
    assert!(ttl > 0 && ttl <= 20_000, "the key's time to live: {ttl}");

    // The hold ends in B when its time is up on B's fleet clock (B's
    // policy's own hold, on its own clock, too).
    clock_b.advance(WAIT);
    fleet_clock_b.advance(WAIT);
    assert_eq!(breaker_b.held_until("chat", policy_b.now_ms()), None);
    assert_eq!(call(&policy_b), (1, None));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_later_end_wins_over_an_earlier_one() {
    let Some(url) = common::server_url("a_later_end_wins_over_an_earlier_one") else {
        return;
    };
    let namespace = common::namespace("fleet-hold-later");
    let ((fleet_a, breaker_a, _), (fleet_b, breaker_b, _)) = two_fleets(&url, &namespace).await;
    breaker_a.hold("chat", 0, 30_000);
    fleet_a.sync_now().await.unwrap();
    let (first, _) = holds_in_redis(&url, &namespace);
    breaker_b.hold("chat", 0, 5_000);
    fleet_b.sync_now().await.unwrap();
    assert_eq!(holds_in_redis(&url, &namespace).0, first, "an earlier end");
    // B now holds the fleet's later end, on its own clock's terms
    let left = breaker_b.held_until("chat", 0).expect("held");
    assert!(left > 25_000 && left <= 30_000, "{left}");
    breaker_b.hold("chat", 0, 45_000);
    fleet_b.sync_now().await.unwrap();
    let (later, ttl) = holds_in_redis(&url, &namespace);
    assert!(
        later[0].1 > first[0].1 + 10_000,
        "{later:?} after {first:?}"
    );
    assert!(ttl > 30_000 && ttl <= 45_000, "{ttl}");
    fleet_a.sync_now().await.unwrap();
    let left = breaker_a.held_until("chat", 0).expect("held");
    assert!(left > 40_000 && left <= 45_000, "{left}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hold_told_while_redis_is_away_is_kept_and_shared_when_it_is_back() {
    let Some(mut server) = common::OwnedServer::start(
        "a_hold_told_while_redis_is_away_is_kept_and_shared_when_it_is_back",
    ) else {
        return;
    };
    let url = server.url();
    let namespace = common::namespace("fleet-hold-away");
    let ((fleet_a, breaker_a, _), (fleet_b, breaker_b, _)) = two_fleets(&url, &namespace).await;
    server.stop();
    breaker_a.hold("chat", 0, 30_000);
    assert!(fleet_a.sync_now().await.is_err(), "Redis is away");
    assert_eq!(breaker_a.held_until("chat", 0), Some(30_000), "kept");
    server.restart();
    assert!(common::sync_until_back(&fleet_a, 500).await);
    assert!(common::sync_until_back(&fleet_b, 500).await);
    let left = breaker_b.held_until("chat", 0).expect("shared once back");
    assert!(left > 25_000 && left <= 30_000, "{left}");
}
