//! A ratio budget's allowance is `floor + ratio × first attempts`, with first
//! attempts counted across the fleet: deposits made in one process raise what
//! another may spend, and nobody spends past the allowance.

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
async fn a_ratio_budget_grows_with_the_fleet_s_first_attempts() {
    let Some(url) = common::server_url("a_ratio_budget_grows_with_the_fleet_s_first_attempts")
    else {
        return;
    };
    let config = common::manual_rounds(url, common::namespace("ratio"));
    let rules = FleetBudgetConfig::ratio("ratio", 0.5, 3, WINDOW).with_lease(2);
    // a policy's clock, on the fleet's (the system's): what a policy hands
    // its budget's deposits
    let clock = SystemClock::new();
    let depositor = Fleet::without_evidence(config.clone()).unwrap();
    let first_attempts = depositor.budget(rules.clone()).unwrap();
    let spender = Fleet::without_evidence(config).unwrap();
    let retries = spender.budget(rules).unwrap();
    depositor.sync_now().await.unwrap();
    spender.sync_now().await.unwrap();

    // No first attempt yet: the floor, 3, shared by both processes (each
    // asked for a lease when it started).
    let early = common::spend_all(&spender, &retries).await
        + common::spend_all(&depositor, &first_attempts).await;
    assert_eq!(early, 3);
    // Ten first attempts in one process: 0.5 × 10 = 5 more, for anyone.
    for _ in 0..10 {
        first_attempts.deposit(clock.now_ms());
    }
    depositor.sync_now().await.unwrap();
    spender.sync_now().await.unwrap();
    let late = common::spend_all(&spender, &retries).await
        + common::spend_all(&depositor, &first_attempts).await;
    assert_eq!(late, 5);
    assert_eq!(retries.spent() + first_attempts.spent(), 8);
}
