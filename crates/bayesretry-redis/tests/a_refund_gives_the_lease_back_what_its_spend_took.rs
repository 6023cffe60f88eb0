//! A retry charged to a fleet budget and then not made — its call cancelled
//! during the backoff, stopped after it by the breaker or the deadline — is
//! given back (`Budget::refund`): the unit goes back to the lease it was
//! spent from, for this process's next retry. A refund never gives more than
//! the window's spends took: given twice, for more than was spent, or for no
//! spend, it gives back no more than the spends still out (a budget cannot
//! tell one spend from another at the same time; callers refund a spend
//! once, for its cost). Refunds racing
//! spends on other threads never leave more in the lease than it was
//! granted.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use core::time::Duration;

use bayesretry_budget::Budget;
use bayesretry_redis::{Fleet, FleetBudgetConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refund_gives_the_lease_back_what_its_spend_took() {
    let Some(url) = common::server_url("a_refund_gives_the_lease_back_what_its_spend_took") else {
        return;
    };
    // A window with a day to go on the server's clock, which the test does
    // not see end, whatever the time of day (a day's window would end at
    // 00:00 UTC, maybe during the test).
    let window = common::window_clear_of_its_end(&url, Duration::from_secs(86_400));
    let config = common::manual_rounds(url, common::namespace("refund-lease"));
    let fleet = Fleet::without_evidence(config).unwrap();
    // Leases of 10, and spends that never bring one below half (which would
    // wake the sync task for a refill in the middle of the test).
    let budget = fleet
        .budget(FleetBudgetConfig::fixed_window("refunds", 100, window).with_lease(10))
        .unwrap();
    fleet.sync_now().await.unwrap();
    assert_eq!(budget.leased(), 10);

    budget.try_spend(7, 1).unwrap();
    assert_eq!((budget.leased(), budget.spent()), (9, 1));
    budget.refund(7, 1);
    assert_eq!(
        (budget.leased(), budget.spent()),
        (10, 0),
        "a spend then its refund left the lease short"
    );

    // a cost of more than one comes back whole
    budget.try_spend(8, 3).unwrap();
    budget.refund(8, 3);
    assert_eq!((budget.leased(), budget.spent()), (10, 0));

    // never more than the spends took
    budget.try_spend(9, 2).unwrap();
    budget.refund(9, 2);
    budget.refund(9, 2);
    budget.refund(9, 5);
    assert_eq!((budget.leased(), budget.spent()), (10, 0));
    budget.try_spend(11, 1).unwrap();
    budget.refund(11, 4);
    assert_eq!((budget.leased(), budget.spent()), (10, 0));
    // a refund of no spend, or at a time no spend was made at
    budget.refund(12, 1);
    budget.try_spend(13, 1).unwrap();
    budget.refund(14, 1);
    budget.refund(u64::MAX, u32::MAX);
    budget.refund(0, 0);
    assert_eq!((budget.leased(), budget.spent()), (9, 1));
    budget.refund(13, 1);
    assert_eq!((budget.leased(), budget.spent()), (10, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refunds_racing_spends_never_leave_more_than_the_lease() {
    let Some(url) = common::server_url("refunds_racing_spends_never_leave_more_than_the_lease")
    else {
        return;
    };
    // a window that does not end during the test, at any time of day
    let window = common::window_clear_of_its_end(&url, Duration::from_secs(86_400));
    let config = common::manual_rounds(url, common::namespace("refund-race"));
    let fleet = Fleet::without_evidence(config).unwrap();
    // the window's whole allowance in one lease: no refill can add to it
    let budget = fleet
        .budget(FleetBudgetConfig::fixed_window("race", 1_000, window).with_lease(1_000))
        .unwrap();
    fleet.sync_now().await.unwrap();
    assert_eq!(budget.leased(), 1_000);

    std::thread::scope(|scope| {
        for thread in 0..4_u64 {
            let budget = &budget;
            scope.spawn(move || {
                for i in 0..2_000_u64 {
                    let at = thread * 10_000 + i;
                    budget.try_spend(at, 1).unwrap();
                    let leased = budget.leased();
                    assert!(leased < 1_000, "{leased} units with a spend out");
                    // one retry in a hundred is made, the others given back
                    if i % 100 != 0 {
                        budget.try_spend(at, 0).unwrap();
                        budget.refund(at, 1);
                    }
                    assert!(budget.leased() <= 1_000);
                }
            });
        }
    });
    assert_eq!(
        (budget.leased(), budget.spent()),
        (1_000 - 80, 80),
        "refunds racing spends lost units, or made some"
    );
}
