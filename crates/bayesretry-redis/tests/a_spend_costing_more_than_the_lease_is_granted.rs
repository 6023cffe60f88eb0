//! A spend costing more than a lease holds is granted from the fleet's
//! window all the same: the refill it asks for covers its cost. A cost above
//! a fixed window's whole allowance is refused without taking any of it.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use core::time::Duration;

use bayesretry_budget::Budget;
use bayesretry_redis::{Fleet, FleetBudgetConfig, FleetConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spend_costing_more_than_the_lease_is_granted() {
    let Some(url) = common::server_url("a_spend_costing_more_than_the_lease_is_granted") else {
        return;
    };
    let config = FleetConfig::new(url)
        .with_namespace(common::namespace("big-spend"))
        // rounds only when asked, within the test
        .with_interval(Duration::from_secs(60));
    let fleet = Fleet::without_evidence(config).unwrap();
    // 100 an hour for the fleet, leases of 10
    let budget = fleet
        .budget(
            FleetBudgetConfig::fixed_window("big", 100, Duration::from_secs(3_600)).with_lease(10),
        )
        .unwrap();
    fleet.sync_now().await.unwrap();
    assert_eq!(budget.leased(), 10);

    let mut granted = false;
    for _ in 0..5 {
        if budget.try_spend(0, 25).is_ok() {
            granted = true;
            break;
        }
        fleet.sync_now().await.unwrap();
    }
    assert!(
        granted,
        "a cost of 25 out of an untouched 100 was never granted"
    );
    assert_eq!(budget.spent(), 25);

    // More than the fleet's whole allowance: refused, and nothing leased for
    // it (after the refill the spend above asked for).
    fleet.sync_now().await.unwrap();
    let leased = budget.leased();
    assert_eq!(leased, 10);
    for _ in 0..3 {
        assert!(budget.try_spend(0, 101).is_err());
        fleet.sync_now().await.unwrap();
    }
    assert_eq!(budget.leased(), leased);
    assert!(!budget.is_exhausted());
}
