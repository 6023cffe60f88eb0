//! `Fleet::shutdown` ends a process's part in the fleet: its last outcomes
//! are pushed, what its budgets leased and did not spend goes back to the
//! window for the other processes, and it no longer counts among the
//! budgets' processes. Before it, a stopping process's lease stayed granted
//! until the window ended and its id counted for the fleet's `ttl`: after a
//! rolling deploy the new processes could lease only what the old ones had
//! left of the window, and their fallbacks' fair shares were cut as if the
//! old ones still ran.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

extern crate alloc;

use alloc::sync::Arc;
use core::time::Duration;

use bayesretry_budget::Budget;
use bayesretry_redis::{Error, Fleet, FleetBudget, FleetBudgetConfig};
use bayesretry_store::{Context, ErrorClass, PosteriorStore};

/// The allowance every test's budget shares, and the lease each process asks for.
const ALLOWANCE: u32 = 20;
const LEASE: u32 = 10;

/// Spends `n` units of `budget`'s lease, one at a time.
fn spend(budget: &dyn Budget, n: u32) {
    for _ in 0..n {
        assert!(budget.try_spend(0, 1).is_ok(), "the lease covers it");
    }
}

/// The grants Redis holds for the window of the budget `name`, summed over
/// the windows it keeps (only the current one in these tests).
fn granted(url: &str, namespace: &str, name: &str) -> u64 {
    let mut admin = common::admin(url);
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{{{namespace}}}:budget:{name}:*"))
        .query(&mut admin)
        .unwrap();
    keys.iter()
        .map(|key| {
            let s: Option<u64> = redis::cmd("HGET")
                .arg(key)
                .arg("s")
                .query(&mut admin)
                .unwrap();
            s.unwrap_or(0)
        })
        .sum()
}

/// Two processes sharing the budget "shared" (the allowance, leases of
/// `LEASE`, a window clear of its end), each after one round: each holds a
/// lease, and the window is all granted.
async fn two_processes(
    url: &str,
    namespace: &str,
) -> (Fleet, Fleet, Arc<FleetBudget>, Arc<FleetBudget>) {
    let config = common::manual_rounds(url, namespace);
    let window = common::window_clear_of_its_end(url, Duration::from_secs(600));
    let budget = || FleetBudgetConfig::fixed_window("shared", ALLOWANCE, window).with_lease(LEASE);
    let (a, b) = (
        Fleet::without_evidence(config.clone()).unwrap(),
        Fleet::without_evidence(config).unwrap(),
    );
    let (budget_a, budget_b) = (a.budget(budget()).unwrap(), b.budget(budget()).unwrap());
    a.sync_now().await.unwrap();
    b.sync_now().await.unwrap();
    (a, b, budget_a, budget_b)
}

// On a runtime of one thread, the sync tasks run only when the test awaits:
// B's spends, which wake its task for more once its lease runs low, are not
// cut by a round leasing part of what A gives back before B has spent its
// lease.
#[tokio::test(flavor = "current_thread")]
async fn the_lease_it_did_not_spend_goes_to_the_other_processes() {
    let Some(url) = common::server_url("the_lease_it_did_not_spend_goes_to_the_other_processes")
    else {
        return;
    };
    let namespace = common::namespace("shutdown-lease");
    let (a, b, budget_a, budget_b) = two_processes(&url, &namespace).await;
    assert_eq!((budget_a.leased(), budget_b.leased()), (10, 10));
    assert_eq!(
        granted(&url, &namespace, "shared"),
        20,
        "the whole allowance"
    );

    // A spends 3 of its 10, and stops
    spend(&*budget_a, 3);
    a.shutdown().await.unwrap();
    assert_eq!(budget_a.leased(), 0, "what it gave back it cannot spend");
    assert_eq!(granted(&url, &namespace, "shared"), 13);

    // B spends its lease, and leases what A left
    spend(&*budget_b, 10);
    b.sync_now().await.unwrap();
    assert_eq!(budget_b.leased(), 7);
    assert_eq!(granted(&url, &namespace, "shared"), 20);
}

// A process that found the window all granted before the other gave its
// lease back asks again at its next interval round: it is not left refusing
// every retry until the window ends while the units it could spend lie in
// Redis.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_found_the_window_all_granted_leases_what_is_given_back() {
    let Some(url) =
        common::server_url("a_process_that_found_the_window_all_granted_leases_what_is_given_back")
    else {
        return;
    };
    let namespace = common::namespace("shutdown-exhausted");
    let (a, b, budget_a, budget_b) = two_processes(&url, &namespace).await;

    // B spends its lease and asks for more: the window has none left
    spend(&*budget_b, 10);
    b.sync_now().await.unwrap();
    assert!(budget_b.is_exhausted());
    assert!(budget_b.try_spend(0, 1).is_err());

    // A gives 7 back; B's next round leases them
    spend(&*budget_a, 3);
    a.shutdown().await.unwrap();
    assert_eq!(granted(&url, &namespace, "shared"), 13);
    b.sync_now().await.unwrap();
    assert_eq!(budget_b.leased(), 7, "what A gave back");
    assert!(!budget_b.is_exhausted());
    assert_eq!(granted(&url, &namespace, "shared"), 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn it_no_longer_counts_among_the_budget_s_processes() {
    let Some(url) = common::server_url("it_no_longer_counts_among_the_budget_s_processes") else {
        return;
    };
    let config = common::manual_rounds(url, common::namespace("shutdown-share"));
    let window = Duration::from_secs(3_600);
    let fleets: Vec<Fleet> = (0..3)
        .map(|_| Fleet::without_evidence(config.clone()).unwrap())
        .collect();
    let budgets: Vec<_> = fleets
        .iter()
        .map(|f| {
            f.budget(FleetBudgetConfig::fixed_window("shared", 90, window))
                .unwrap()
        })
        .collect();
    for fleet in &fleets {
        fleet.sync_now().await.unwrap();
    }
    fleets[1].sync_now().await.unwrap();
    assert_eq!(budgets[1].processes(), Some(3));
    assert_eq!(budgets[1].fallback_share(), Some(30));

    fleets[0].shutdown().await.unwrap();
    fleets[1].sync_now().await.unwrap();
    assert_eq!(budgets[1].processes(), Some(2), "not counted for the ttl");
    assert_eq!(budgets[1].fallback_share(), Some(45));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_shut_down_is_stopped_in_every_clone() {
    let Some(url) = common::server_url("a_fleet_shut_down_is_stopped_in_every_clone") else {
        return;
    };
    let fleet = Fleet::without_evidence(common::manual_rounds(
        url,
        common::namespace("shutdown-stopped"),
    ))
    .unwrap();
    let budget = fleet
        .budget(
            FleetBudgetConfig::fixed_window("shared", 90, Duration::from_secs(3_600))
                .with_lease(LEASE),
        )
        .unwrap();
    let clone = fleet.clone();
    fleet.sync_now().await.unwrap();
    assert!(fleet.stats().connected);
    assert!(!clone.stats().stopped);
    assert_eq!(budget.leased(), u64::from(LEASE));
    assert_eq!(budget.processes(), Some(1));

    fleet.shutdown().await.unwrap();
    assert!(matches!(clone.sync_now().await, Err(Error::Stopped)));
    assert!(matches!(fleet.shutdown().await, Err(Error::Stopped)));
    // every clone reads as stopped, not as cut off from Redis: an alert on
    // an unreachable Redis stays quiet while the process drains
    let stats = clone.stats();
    assert!(!stats.connected);
    assert!(stats.stopped);
    assert_eq!(stats.unreachable_since_ms, None);
    assert_eq!(stats.unreachable_for(), None);
    // the lease went back; the budget spends from its fallback, the fair
    // share of the one process the fleet last counted: the whole allowance
    assert_eq!(budget.leased(), 0);
    let mut spent = 0;
    while spent < 1_000 && budget.try_spend(0, 1).is_ok() {
        spent += 1;
    }
    assert_eq!(spent, 90);
    assert_eq!(budget.spent(), 0, "nothing of it from a lease");
}

// On a runtime of one thread, the sync task runs only when the test awaits:
// no round of its own comes between the outcomes and the shutdown.
#[tokio::test(flavor = "current_thread")]
async fn its_last_outcomes_reach_the_fleet() {
    const CTX: Context<'static> = Context::new("api.example.com", 1, ErrorClass::Http(529));
    let Some(url) = common::server_url("its_last_outcomes_reach_the_fleet") else {
        return;
    };
    let namespace = common::namespace("shutdown-outcomes");
    let store = common::store(1);
    let fleet = Fleet::start(common::manual_rounds(&url, &namespace), store.clone()).unwrap();
    for _ in 0..3 {
        store.observe(&CTX, false, 5);
    }
    fleet.shutdown().await.unwrap();

    let reader = common::store(2);
    let newcomer = Fleet::start(common::manual_rounds(&url, &namespace), reader.clone()).unwrap();
    newcomer.sync_now().await.unwrap();
    assert_eq!(reader.evidence(&CTX, 10).failures(), 3.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_redis_it_says_so_and_still_stops() {
    let config =
        bayesretry_redis::FleetConfig::new(format!("redis://127.0.0.1:{}/", common::free_port()))
            .with_interval(Duration::from_secs(60))
            .with_connect_timeout(Duration::from_millis(200));
    let fleet = Fleet::without_evidence(config).unwrap();
    let _budget = fleet
        .budget(FleetBudgetConfig::fixed_window(
            "shared",
            ALLOWANCE,
            Duration::from_secs(3_600),
        ))
        .unwrap();
    assert!(matches!(fleet.shutdown().await, Err(Error::Redis(_))));
    assert!(matches!(fleet.sync_now().await, Err(Error::Stopped)));
    // stopped, with the last round's failure kept for the log and metrics
    let stats = fleet.stats();
    assert!(stats.stopped);
    assert!(!stats.connected);
    assert_eq!(stats.unreachable_for(), None);
    assert!(stats.last_error.is_some());
}

// A call refused for want of a fleet probe just before the process stopped
// asked its sync task for one, which a round claims (the round the call
// woke, or the last one). Shutting down, the process gives it back: held by
// a process that makes no more calls, the fleet's one probe of the round
// would count until Redis let the round's count go, a cooldown later, and
// every other process would refuse the endpoint meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_probe_it_claimed_and_never_sent_goes_to_the_other_processes() {
    const COOLDOWN_MS: u64 = 3_000;
    let Some(url) =
        common::server_url("the_probe_it_claimed_and_never_sent_goes_to_the_other_processes")
    else {
        return;
    };
    let config = common::manual_rounds(url, common::namespace("shutdown-probe"));
    let (a, b, breaker_a, breaker_b) =
        common::payments_opened_by_a(config, common::one_probe_rules(COOLDOWN_MS)).await;
    b.sync_now().await.unwrap();
    assert!(breaker_b.is_open_fleetwide("payments"));

    // The cooldown ends (on the server's clock too); A's next call finds no
    // probe and asks for one, and A stops
    tokio::time::sleep(Duration::from_millis(COOLDOWN_MS + 300)).await;
    assert!(!breaker_a.check("payments").is_allowed());
    a.shutdown().await.unwrap();

    // B's next call asks for a probe, and B's next round claims the fleet's one
    assert!(!breaker_b.check("payments").is_allowed());
    b.sync_now().await.unwrap();
    assert!(
        breaker_b.check("payments").is_allowed(),
        "the round's probe is B's, not held by the stopped A"
    );
}
