//! A fleet budget whose connection to Redis comes and goes spends from its
//! lease, then from its fallback, then from the lease again once a refill
//! comes: a refund of the fallback's spend never goes to the lease, even
//! after a caller whose clock lagged spent from the fallback at a time of an
//! earlier window. Given to the lease, it would be a unit Redis granted to
//! a retry that was made, given out again: the fleet past its allowance.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::time::Duration;

use bayesretry_budget::{Budget, FixedWindowBudget, FixedWindowConfig};
use bayesretry_policy::{Clock, ManualClock};
use bayesretry_redis::{Fleet, FleetBudgetConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fallback_spend_between_a_window_s_lease_spends_is_never_refunded_to_the_lease() {
    let Some(mut server) = common::OwnedServer::start(
        "a_fallback_spend_between_a_window_s_lease_spends_is_never_refunded_to_the_lease",
    ) else {
        return;
    };
    // the fleet's clock, which is the policy's, moved by hand
    let clock = ManualClock::new(1_000_000);
    let config = common::manual_rounds(server.url(), common::namespace("refund-lagging"))
        .with_connect_timeout(Duration::from_millis(100))
        .with_clock(clock.clone());
    let fleet = Fleet::without_evidence(config).unwrap();
    // A window with a day to go on the server's clock, whatever the time of
    // day: the lease's window ends when the test moves the fleet's clock
    // past it, never on its own in the middle of the test (as a day's
    // window, ending at 00:00 UTC, could).
    let window = common::window_clear_of_its_end(&server.url(), Duration::from_secs(86_400));
    let local = Arc::new(FixedWindowBudget::new(
        FixedWindowConfig::new()
            .with_max_cost_per_window(10)
            .with_window_ms(86_400_000)
            .build()
            .unwrap(),
    ));
    // Leases of 2: a spend that leaves 1 asks for no refill, and the one
    // that empties the lease is made while the server is down, so that no
    // refill the sync task is woken for can come in the middle of the test.
    let budget = fleet
        .budget(
            FleetBudgetConfig::fixed_window("lagging", 100, window)
                .with_lease(2)
                .with_fallback(local.clone()),
        )
        .unwrap();
    fleet.sync_now().await.unwrap();
    assert_eq!(budget.leased(), 2);

    // a spend of a window that ends (on the fleet's clock)
    let earlier = clock.now_ms();
    budget.try_spend(earlier, 1).unwrap();
    clock.advance(2 * window);
    assert!(budget.try_spend(clock.now_ms(), 1).is_err());
    fleet.sync_now().await.unwrap();
    assert_eq!(budget.leased(), 2);

    // The next window: the lease spends, Redis goes away, the lease's last
    // unit is spent, then the fallback's.
    budget.try_spend(clock.now_ms(), 1).unwrap();
    server.stop();
    clock.advance(Duration::from_millis(1));
    budget.try_spend(clock.now_ms(), 1).unwrap();
    assert!(fleet.sync_now().await.is_err());
    clock.advance(Duration::from_millis(1));
    let outage = clock.now_ms();
    budget.try_spend(outage, 1).unwrap();
    assert_eq!((budget.leased(), local.remaining(outage)), (0, 9));

    // Redis comes back, and the lease spends again, after the fallback.
    server.restart();
    assert!(common::sync_until_back(&fleet, 100).await);
    assert_eq!(budget.leased(), 2);
    clock.advance(Duration::from_millis(1));
    budget.try_spend(clock.now_ms(), 1).unwrap();
    server.stop();
    clock.advance(Duration::from_millis(1));
    budget.try_spend(clock.now_ms(), 1).unwrap();
    assert!(fleet.sync_now().await.is_err());
    assert_eq!(budget.leased(), 0);

    // Redis away again: a caller whose clock lagged spends from the
    // fallback at the earlier window's time.
    budget.try_spend(earlier, 1).unwrap();
    assert_eq!(local.remaining(outage), 8);

    // The outage's retry is not made. Its unit is the fallback's, at a time
    // between two of the lease's spends: the budget cannot tell which of the
    // two spent it, and keeps it (the strict side). Never the lease's.
    budget.refund(outage, 1);
    assert_eq!(
        (budget.leased(), budget.spent()),
        (0, 5),
        "a fallback spend's refund went to the lease"
    );
    assert_eq!(local.remaining(outage), 8);
}
