//! While Redis is away a fleet budget spends from its lease while it holds
//! units, then from its local fallback. A refund goes back where its spend
//! was taken: a fallback spend to the fallback, a lease spend to the lease,
//! and never one for the other.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::time::Duration;

use bayesretry_budget::{Budget, FixedWindowBudget, FixedWindowConfig};
use bayesretry_policy::{Clock, ManualClock};
use bayesretry_redis::{Fleet, FleetBudgetConfig, FleetConfig};

/// A local fallback of `max` per hour, kept to be read.
fn fallback(max: u32) -> Arc<FixedWindowBudget> {
    let rules = FixedWindowConfig::new()
        .with_max_cost_per_window(max)
        .with_window_ms(3_600_000)
        .build()
        .unwrap();
    Arc::new(FixedWindowBudget::new(rules))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refund_while_redis_is_away_goes_to_the_fallback() {
    let clock = ManualClock::new(1_000_000);
    // Nothing listens on port 1: every spend goes to the fallback.
    let config = FleetConfig::new("redis://127.0.0.1:1/0")
        .with_connect_timeout(Duration::from_millis(50))
        .with_interval(Duration::from_secs(60))
        .with_clock(clock.clone());
    let fleet = Fleet::without_evidence(config).unwrap();
    let local = fallback(2);
    let budget = fleet
        .budget(
            FleetBudgetConfig::fixed_window("away", 100, Duration::from_secs(3_600))
                .with_fallback(local.clone()),
        )
        .unwrap();

    let now = clock.now_ms();
    budget.try_spend(now, 1).unwrap();
    assert_eq!(local.remaining(now), 1);
    budget.refund(now, 1);
    assert_eq!(
        local.remaining(now),
        2,
        "a fallback spend's refund did not reach the fallback"
    );
    budget.try_spend(now, 1).unwrap();
    budget.try_spend(now, 1).unwrap();
    assert!(budget.try_spend(now, 1).is_err());
    budget.refund(now, 1);
    assert_eq!(local.remaining(now), 1);
    assert!(budget.try_spend(now, 1).is_ok(), "the unit came back");
    assert_eq!((budget.leased(), budget.spent()), (0, 0));
    drop(fleet);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_spend_made_while_redis_is_away_comes_back_to_the_lease() {
    let Some(mut server) = common::OwnedServer::start(
        "a_lease_spend_made_while_redis_is_away_comes_back_to_the_lease",
    ) else {
        return;
    };
    let clock = ManualClock::new(1_000_000);
    let config = common::manual_rounds(server.url(), common::namespace("refund-away"))
        .with_connect_timeout(Duration::from_millis(100))
        .with_clock(clock.clone());
    let fleet = Fleet::without_evidence(config).unwrap();
    let local = fallback(5);
    // a window with a day to go on the server's clock, which the test does
    // not see end at any time of day (a day's window ends at 00:00 UTC)
    let window = common::window_clear_of_its_end(&server.url(), Duration::from_secs(86_400));
    let budget = fleet
        .budget(
            FleetBudgetConfig::fixed_window("away", 100, window)
                .with_lease(2)
                .with_fallback(local.clone()),
        )
        .unwrap();
    fleet.sync_now().await.unwrap();
    assert_eq!(budget.leased(), 2);

    let t1 = clock.now_ms();
    budget.try_spend(t1, 1).unwrap();
    server.stop();
    // the lease's last unit, which asks for a refill that cannot come
    clock.advance(Duration::from_millis(1));
    let t2 = clock.now_ms();
    budget.try_spend(t2, 1).unwrap();
    assert_eq!(budget.leased(), 0);
    assert!(fleet.sync_now().await.is_err());
    assert!(!fleet.stats().connected);
    // then the fallback
    clock.advance(Duration::from_millis(1));
    let t3 = clock.now_ms();
    budget.try_spend(t3, 1).unwrap();
    assert_eq!(local.remaining(t3), 4);

    budget.refund(t3, 1);
    assert_eq!(
        (local.remaining(t3), budget.leased()),
        (5, 0),
        "the fallback's spend went elsewhere"
    );
    budget.refund(t2, 1);
    budget.refund(t1, 1);
    assert_eq!(
        (local.remaining(t3), budget.leased()),
        (5, 2),
        "the lease's spends went elsewhere"
    );
    assert_eq!(budget.spent(), 0);
}
