//! A ratio budget's first attempts (deposits) go to Redis with a lease
//! request. When the reply was lost after Redis had counted them (a response
//! timeout, a connection cut after the script ran), the process put them
//! back and sent them again with its next request, and Redis counted them
//! again: each such loss raised the window's allowance by `ratio` times the
//! deposits once more, and the fleet could retry more than its ratio
//! allows. Each batch of deposits is now numbered, sent again as it was,
//! and counted once.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "tests"
)]

mod common;

use core::time::Duration;

use bayesretry_budget::Budget;
use bayesretry_policy::{Clock, SystemClock};
use bayesretry_redis::{Fleet, FleetBudgetConfig};

const WINDOW: Duration = Duration::from_millis(1 << 40);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_attempts_sent_again_after_a_lost_reply_count_once() {
    let Some(url) = common::server_url("first_attempts_sent_again_after_a_lost_reply_count_once")
    else {
        return;
    };
    let proxy = common::LossyProxy::start(&url);
    let namespace = common::namespace("lost-lease-reply");
    let config = common::manual_rounds(proxy.url(), namespace.clone());
    let rules = FleetBudgetConfig::ratio("ratio", 0.5, 3, WINDOW).with_lease(2);
    let clock = SystemClock::new();
    let fleet = Fleet::without_evidence(config).unwrap();
    let budget = fleet.budget(rules).unwrap();
    fleet.sync_now().await.unwrap();
    proxy.lose_next_script_reply();
    for _ in 0..10 {
        budget.deposit(clock.now_ms());
    }
    for _ in 0..5 {
        if fleet.sync_now().await.is_ok() {
            break;
        }
    }
    fleet.sync_now().await.unwrap();
    assert!(proxy.lost_a_reply());
    let mut admin = common::admin(&url);
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{{{namespace}}}:budget:ratio:*"))
        .query(&mut admin)
        .unwrap();
    let d: Vec<String> = keys
        .iter()
        .map(|k| {
            redis::cmd("HGET")
                .arg(k)
                .arg("d")
                .query(&mut admin)
                .unwrap()
        })
        .collect();
    assert_eq!(d, vec!["10".to_owned()], "first attempts counted: {d:?}");
}
