//! A fleet budget's leased units are void when their window ends: a refund
//! of a spend made in a window that has rolled on gives nothing back, to the
//! void lease or to the next window's. A refund while the window lasts gives
//! its unit back.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use core::time::Duration;

use bayesretry_budget::Budget;
use bayesretry_policy::{Clock, ManualClock};
use bayesretry_redis::{Fleet, FleetBudgetConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refund_after_the_window_rolled_gives_nothing_back() {
    let Some(url) = common::server_url("a_refund_after_the_window_rolled_gives_nothing_back")
    else {
        return;
    };
    // the fleet's clock, which is the policy's, moved by hand
    let clock = ManualClock::new(1_000_000);
    let config =
        common::manual_rounds(url, common::namespace("refund-rolled")).with_clock(clock.clone());
    let fleet = Fleet::without_evidence(config).unwrap();
    let budget = fleet
        .budget(
            FleetBudgetConfig::fixed_window("rolled", 100, Duration::from_secs(3_600))
                .with_lease(10),
        )
        .unwrap();
    fleet.sync_now().await.unwrap();
    assert_eq!(budget.leased(), 10);

    let first = clock.now_ms();
    budget.try_spend(first, 1).unwrap();
    budget.try_spend(first, 1).unwrap();
    budget.refund(first, 1);
    assert_eq!(
        budget.leased(),
        9,
        "a refund in the window gave nothing back"
    );

    // The window ends (on the fleet's clock): the lease is void, and the
    // spend still out gives nothing back, now or once a new lease is held.
    clock.advance(Duration::from_secs(7_200));
    assert_eq!(budget.leased(), 0);
    budget.refund(first, 1);
    assert_eq!(budget.leased(), 0);
    // the next spend finds no units, and asks for a lease of the new window
    assert!(budget.try_spend(clock.now_ms(), 1).is_err());
    fleet.sync_now().await.unwrap();
    assert_eq!(budget.leased(), 10);
    budget.refund(first, 1);
    assert_eq!(
        budget.leased(),
        10,
        "a spend of a past window was given to the next"
    );

    // the new window's spends come back to it
    let second = clock.now_ms();
    budget.try_spend(second, 2).unwrap();
    budget.refund(first, 2);
    assert_eq!(budget.leased(), 8);
    budget.refund(second, 2);
    assert_eq!(budget.leased(), 10);
}
