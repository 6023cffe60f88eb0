//! Two services on one Redis that share a namespace and give their budgets
//! the same name share one window's grants, each checking them against its
//! own allowance: a service allowed 100 that spent 40 leaves nothing to one
//! allowed 10 that asks after it. Budgets are told apart by namespace and
//! name only, so services with settings of their own name their budgets
//! apart (or take namespaces of their own), as `FleetBudgetConfig`'s docs
//! say; under different names each has its allowance whole.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use core::time::Duration;

use bayesretry_redis::{Fleet, FleetBudgetConfig};

/// What a service allowed `small` in a window spends after one allowed 100
/// has spent 40, both on budgets named `big_name` and `small_name`.
async fn spent_by_the_small_service(url: &str, big_name: &str, small_name: &str) -> u64 {
    let namespace = common::namespace("shared-budget-name");
    let window = common::window_clear_of_its_end(url, Duration::from_secs(60));
    let config = || common::manual_rounds(url, namespace.clone());
    // the big service leases first; the small one starts after it
    let big = Fleet::without_evidence(config()).unwrap();
    let big_budget = big
        .budget(FleetBudgetConfig::fixed_window(big_name, 100, window).with_lease(40))
        .unwrap();
    big.sync_now().await.unwrap();
    assert_eq!(big_budget.leased(), 40);
    let small = Fleet::without_evidence(config()).unwrap();
    let small_budget = small
        .budget(FleetBudgetConfig::fixed_window(small_name, 10, window).with_lease(5))
        .unwrap();
    // connected, so that it spends what the fleet grants, not its fallback
    small.sync_now().await.unwrap();
    common::spend_all(&small, &small_budget).await
}

#[tokio::test(flavor = "current_thread")]
async fn a_budget_name_shared_by_two_services_shares_the_window_s_grants() {
    let Some(url) =
        common::server_url("a_budget_name_shared_by_two_services_shares_the_window_s_grants")
    else {
        return;
    };
    assert_eq!(
        spent_by_the_small_service(&url, "retries", "retries").await,
        0
    );
}

#[tokio::test(flavor = "current_thread")]
async fn budgets_named_apart_each_have_their_allowance() {
    let Some(url) = common::server_url("budgets_named_apart_each_have_their_allowance") else {
        return;
    };
    assert_eq!(
        spent_by_the_small_service(&url, "chat-retries", "batch-retries").await,
        10
    );
}
