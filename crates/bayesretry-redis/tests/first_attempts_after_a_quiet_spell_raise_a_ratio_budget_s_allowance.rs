//! A ratio budget counts first attempts in the window they were made in,
//! which a process tells from its last lease. One that went quiet for a
//! window and more — no call, no retry: a night, a pause between batches —
//! knows no current window when calls come back; they still count once it
//! has asked Redis, rather than go uncounted until a retry happens to ask,
//! which left the fleet only its floor of retries when an outage began.

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_attempts_after_a_quiet_spell_raise_a_ratio_budget_s_allowance() {
    let Some(url) =
        common::server_url("first_attempts_after_a_quiet_spell_raise_a_ratio_budget_s_allowance")
    else {
        return;
    };
    let config = common::manual_rounds(url, common::namespace("quiet-spell"));
    // a policy's clock, on the fleet's (the system's): what a policy hands
    // its budget's deposits
    let clock = SystemClock::new();
    let fleet = Fleet::without_evidence(config).unwrap();
    // 2 + 1 × first attempts per second
    let rules = FleetBudgetConfig::ratio("ratio", 1.0, 2, Duration::from_secs(1)).with_lease(1);
    let budget = fleet.budget(rules).unwrap();
    fleet.sync_now().await.unwrap();

    let mut raised = false;
    for _ in 0..3 {
        // quiet for two windows and more
        tokio::time::sleep(Duration::from_millis(2_200)).await;
        budget.deposit(clock.now_ms());
        // the sync task, woken, asks Redis for the window
        tokio::time::sleep(Duration::from_millis(100)).await;
        for _ in 0..20 {
            budget.deposit(clock.now_ms());
        }
        fleet.sync_now().await.unwrap();
        if common::spend_all(&fleet, &budget).await >= 20 {
            raised = true;
            break;
        }
    }
    assert!(
        raised,
        "first attempts after a quiet spell raised no allowance"
    );
}
