//! Two breakers of one process, sharing the namespace's endpoints, with
//! different longest cooldowns: one of them holds an endpoint open for its
//! long cooldown, and the other, whose longest is shorter, opens the same
//! endpoint, or claims a probe of it on a view of the fleet from before that
//! opening. An end further off than the longest cooldown is cut to it, but
//! the longest of the process's breakers, as the state's reading does: the
//! process could have written that end itself. Cut to the shorter breaker's
//! own longest, the long opening ended for the whole fleet after a fraction
//! of its cooldown.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod common;

use core::time::Duration;

use bayesretry_breaker::Admission;
use bayesretry_policy::ManualClock;
use bayesretry_redis::{Fleet, FleetBreaker};

/// The long breaker's cooldown, and its longest.
const LONG_MS: u64 = 100_000;
/// The short breaker's cooldown.
const SHORT_MS: u64 = 1_000;
/// The short breaker's longest cooldown.
const SHORT_LONGEST_MS: u64 = 2_000;

/// The endpoint's `open until` in `{ns}:br`.
fn held_until(url: &str, namespace: &str) -> Option<u64> {
    let held: Option<String> = redis::cmd("HGET")
        .arg(format!("{{{namespace}}}:br"))
        .arg("payments")
        .query(&mut common::admin(url))
        .unwrap();
    held.and_then(|v| v.split(' ').next().and_then(|s| s.parse().ok()))
}

/// The server's clock, in ms.
fn server_now(url: &str) -> u64 {
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query(&mut common::admin(url)).unwrap();
    secs * 1_000 + micros / 1_000
}

/// Records failures of `payments` until `breaker` opens.
fn open(breaker: &FleetBreaker) {
    assert!((0..100).any(|_| breaker.record("payments", false).is_some()));
}

/// Waits (a few seconds at the most) for the long opening to be in Redis.
async fn long_opening_published(url: &str, namespace: &str) {
    for _ in 0..500 {
        if held_until(url, namespace).is_some_and(|end| end > server_now(url) + LONG_MS / 2) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the long opening was not published");
}

/// The long opening still has most of its cooldown to go.
fn assert_long_opening_kept(url: &str, namespace: &str, what: &str) {
    let end = held_until(url, namespace).unwrap();
    let now = server_now(url);
    assert!(
        end > now + LONG_MS / 2,
        "{what}: the long opening was cut to {} ms from now",
        end.saturating_sub(now)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opening_by_the_shorter_breaker_keeps_the_longer_one_s_end() {
    let Some(url) =
        common::server_url("an_opening_by_the_shorter_breaker_keeps_the_longer_one_s_end")
    else {
        return;
    };
    let namespace = common::namespace("sibling-open");
    let fleet =
        Fleet::without_evidence(common::manual_rounds(url.clone(), namespace.clone())).unwrap();
    let long = fleet
        .breaker(common::one_probe_rules(LONG_MS).with_max_cooldown_ms(LONG_MS))
        .unwrap();
    let short = fleet
        .breaker(common::one_probe_rules(SHORT_MS).with_max_cooldown_ms(SHORT_LONGEST_MS))
        .unwrap();
    fleet.sync_now().await.unwrap();

    open(&long);
    fleet.sync_now().await.unwrap();
    assert_long_opening_kept(&url, &namespace, "published");

    open(&short);
    fleet.sync_now().await.unwrap();
    assert_long_opening_kept(&url, &namespace, "the short breaker's opening");
    assert!(!long.check("payments").is_allowed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_probe_claimed_by_the_shorter_breaker_keeps_the_longer_one_s_end() {
    let Some(url) =
        common::server_url("a_probe_claimed_by_the_shorter_breaker_keeps_the_longer_one_s_end")
    else {
        return;
    };
    let namespace = common::namespace("sibling-claim");
    let clock = ManualClock::new(1_000_000);
    let config = common::manual_rounds(url.clone(), namespace.clone()).with_clock(clock.clone());
    let fleet = Fleet::without_evidence(config).unwrap();
    let long = fleet
        .breaker(common::one_probe_rules(LONG_MS).with_max_cooldown_ms(LONG_MS))
        .unwrap();
    let short = fleet
        .breaker(common::one_probe_rules(SHORT_MS).with_max_cooldown_ms(SHORT_LONGEST_MS))
        .unwrap();
    fleet.sync_now().await.unwrap();

    // the short breaker opens first, and sees the fleet's opening end
    open(&short);
    fleet.sync_now().await.unwrap();
    // the long one opens after it: published at once (a wake-up round, which
    // pulls no state), the short breaker's view still ends a second on
    open(&long);
    long_opening_published(&url, &namespace).await;
    clock.advance(Duration::from_millis(SHORT_MS + 500));
    // half-open in the short breaker's view: it claims a probe
    match short.check("payments") {
        Admission::Rejected { .. } => {}
        other => panic!("the short breaker admitted a call without a probe: {other:?}"),
    }
    fleet.sync_now().await.unwrap();
    assert_long_opening_kept(&url, &namespace, "the short breaker's claim");
    assert!(!short.check("payments").is_allowed());
}
