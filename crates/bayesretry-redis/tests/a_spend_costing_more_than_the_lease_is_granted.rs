//! A spend costing more than a lease holds is granted from the fleet's
//! window all the same: the refill it asks for covers its cost. A cost above
//! a fixed window's whole allowance is refused without taking any of it, and
//! so is one more than what the window has left: the refill that would
//! cover it is granted whole or not at all, so the process does not take
//! the rest of the window for a spend it still cannot make.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use core::time::Duration;

use bayesretry_budget::Budget;
use bayesretry_redis::{Fleet, FleetBudgetConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spend_costing_more_than_the_lease_is_granted() {
    let Some(url) = common::server_url("a_spend_costing_more_than_the_lease_is_granted") else {
        return;
    };
    // 100 a window for the fleet, leases of 10: a window with an hour to go
    // on the server's clock, which the test does not see end at any time of
    // day (an hour's window ends at the top of the hour)
    let window = common::window_clear_of_its_end(&url, Duration::from_secs(3_600));
    let config = common::manual_rounds(url, common::namespace("big-spend"));
    let fleet = Fleet::without_evidence(config).unwrap();
    let budget = fleet
        .budget(FleetBudgetConfig::fixed_window("big", 100, window).with_lease(10))
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spend_the_window_cannot_cover_leaves_the_rest_to_the_fleet() {
    let Some(url) =
        common::server_url("a_spend_the_window_cannot_cover_leaves_the_rest_to_the_fleet")
    else {
        return;
    };
    // a window that does not end during the test, at any time of day: a new
    // one would grant what the test finds the window cannot cover
    let window = common::window_clear_of_its_end(&url, Duration::from_secs(3_600));
    let config = common::manual_rounds(url, common::namespace("uncovered-spend"));
    let rule = FleetBudgetConfig::fixed_window("b", 100, window).with_lease(10);
    let (f1, f2) = (
        Fleet::without_evidence(config.clone()).unwrap(),
        Fleet::without_evidence(config).unwrap(),
    );
    let (b1, b2) = (f1.budget(rule.clone()).unwrap(), f2.budget(rule).unwrap());
    f1.sync_now().await.unwrap();
    f2.sync_now().await.unwrap();
    for _ in 0..3 {
        let _ = b2.try_spend(0, 9);
        f2.sync_now().await.unwrap();
    }
    // what f2 took is gone from the window: 95 more cannot be covered
    for _ in 0..2 {
        assert!(b1.try_spend(0, 95).is_err());
        f1.sync_now().await.unwrap();
    }
    assert_eq!(b1.leased(), 10, "f1 took units for a spend it cannot make");
    let mut granted = 0;
    for _ in 0..30 {
        if b2.try_spend(0, 1).is_ok() {
            granted += 1;
        }
        f2.sync_now().await.unwrap();
    }
    assert_eq!(granted, 30, "f2 was starved of what the window had left");
}
