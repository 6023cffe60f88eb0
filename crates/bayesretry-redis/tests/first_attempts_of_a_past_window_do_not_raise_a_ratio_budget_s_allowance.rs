//! A ratio budget allows `floor + ratio × first attempts` per window. First
//! attempts counted while Redis was away, windows ago, raise no later
//! window's allowance when Redis is back: counted in the window the process
//! reconnects in, an outage's worth of them would let the fleet retry that
//! many times over, just as Redis (and often the provider) comes back.
//! First attempts made in the current window still count in it.

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
async fn first_attempts_of_a_past_window_do_not_raise_a_ratio_budget_s_allowance() {
    let Some(mut server) = common::OwnedServer::start("first_attempts_of_a_past_window") else {
        return;
    };
    let config = common::manual_rounds(server.url(), common::namespace("past-deposits"))
        .with_connect_timeout(Duration::from_millis(100));
    // a policy's clock, on the fleet's (the system's): what a policy hands
    // its budget's deposits
    let clock = SystemClock::new();
    let fleet = Fleet::without_evidence(config).unwrap();
    // 2 + 1 × first attempts per second
    let rules = FleetBudgetConfig::ratio("ratio", 1.0, 2, Duration::from_secs(1)).with_lease(1);
    let budget = fleet.budget(rules).unwrap();
    fleet.sync_now().await.unwrap();

    server.stop();
    for _ in 0..1_000 {
        budget.deposit(clock.now_ms());
    }
    assert!(fleet.sync_now().await.is_err());
    // Redis comes back two windows and more later.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    server.restart();
    assert!(
        common::sync_until_back(&fleet, 200).await,
        "the fleet reconnected"
    );

    // The floor of a window, or of two if the spending crosses into the next.
    let spent = common::spend_all(&fleet, &budget).await;
    assert!(
        spent <= 4,
        "{spent} retries allowed in a window without a first attempt"
    );

    // First attempts made now, in the window they go up in, still count
    // (tried again should the window end in between).
    let mut raised = false;
    for _ in 0..3 {
        for _ in 0..20 {
            budget.deposit(clock.now_ms());
        }
        fleet.sync_now().await.unwrap();
        if common::spend_all(&fleet, &budget).await >= 20 {
            raised = true;
            break;
        }
    }
    assert!(raised, "this window's first attempts raised no allowance");
}
