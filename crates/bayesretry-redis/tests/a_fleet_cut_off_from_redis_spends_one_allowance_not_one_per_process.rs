//! A fleet budget's default fallback, what a process spends from alone
//! while Redis is away, used to be a local window of the whole allowance:
//! twenty replicas cut off together could spend twenty allowances. It is now
//! each process's fair share: the allowance divided by the number of
//! processes the fleet last saw sharing the budget, counted in Redis and
//! forgotten `ttl` after a process's last round; the whole allowance for a
//! process that never reached Redis; a fallback of the caller's own as it
//! is.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use alloc::sync::Arc;
use core::time::Duration;

use bayesretry_budget::{Budget, FixedWindowBudget, FixedWindowConfig};
use bayesretry_redis::{Fleet, FleetBudget, FleetBudgetConfig, FleetConfig};

extern crate alloc;

/// The allowance every test's budget shares.
const ALLOWANCE: u32 = 100;

/// How much `budget` spends from its fallback (Redis away, its lease spent
/// first), one unit at a time at one instant, until it is refused.
fn spend_from_the_fallback(budget: &FleetBudget) -> u64 {
    let leased = budget.leased();
    let mut spent = 0;
    while spent < 10_000 && budget.try_spend(0, 1).is_ok() {
        spent += 1;
    }
    spent - leased
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_processes_cut_off_together_spend_one_allowance_between_them() {
    let Some(mut server) = common::OwnedServer::start(
        "four_processes_cut_off_together_spend_one_allowance_between_them",
    ) else {
        return;
    };
    let window = common::window_clear_of_its_end(&server.url(), Duration::from_secs(600));
    let config = common::manual_rounds(server.url(), common::namespace("fair-share"))
        .with_connect_timeout(Duration::from_millis(200));
    let mut fleets = Vec::new();
    let mut budgets = Vec::new();
    for _ in 0..4 {
        let fleet = Fleet::without_evidence(config.clone()).unwrap();
        let budget = fleet
            .budget(FleetBudgetConfig::fixed_window("shared", ALLOWANCE, window))
            .unwrap();
        fleet.sync_now().await.unwrap();
        fleets.push(fleet);
        budgets.push(budget);
    }
    // a round each, once all four are there
    for fleet in &fleets {
        fleet.sync_now().await.unwrap();
    }
    for budget in &budgets {
        assert_eq!(budget.processes(), Some(4));
        assert_eq!(budget.fallback_share(), Some(ALLOWANCE / 4));
    }

    server.stop();
    for fleet in &fleets {
        assert!(fleet.sync_now().await.is_err());
        assert!(!fleet.stats().connected);
    }
    let from_fallbacks: Vec<u64> = budgets.iter().map(|b| spend_from_the_fallback(b)).collect();
    assert_eq!(
        from_fallbacks,
        [25, 25, 25, 25],
        "one allowance between them"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_that_stopped_count_until_the_ttl_only() {
    let Some(url) = common::server_url("processes_that_stopped_count_until_the_ttl_only") else {
        return;
    };
    let namespace = common::namespace("fair-share-ttl");
    let config = common::manual_rounds(url.clone(), namespace.clone());
    let window = Duration::from_secs(3_600);
    let fleets: Vec<Fleet> = (0..3)
        .map(|_| Fleet::without_evidence(config.clone()).unwrap())
        .collect();
    let budgets: Vec<Arc<FleetBudget>> = fleets
        .iter()
        .map(|f| {
            f.budget(FleetBudgetConfig::fixed_window("shared", ALLOWANCE, window))
                .unwrap()
        })
        .collect();
    for fleet in &fleets {
        fleet.sync_now().await.unwrap();
    }
    fleets[0].sync_now().await.unwrap();
    assert_eq!(budgets[0].processes(), Some(3));
    assert_eq!(budgets[0].fallback_share(), Some(33));

    // every process's last round, as Redis holds it, a ttl and a ms ago:
    // as if all of them had stopped
    let key = format!("{{{namespace}}}:bp:shared");
    let mut admin = common::admin(&url);
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query(&mut admin).unwrap();
    let ttl_ms = u64::try_from(config.ttl().as_millis()).unwrap();
    let long_ago = secs * 1_000 + micros / 1_000 - ttl_ms - 1;
    let ids: Vec<String> = redis::cmd("ZRANGE")
        .arg(&key)
        .arg(0)
        .arg(-1)
        .query(&mut admin)
        .unwrap();
    assert_eq!(ids.len(), 3);
    for id in &ids {
        let _: u64 = redis::cmd("ZADD")
            .arg(&key)
            .arg(long_ago)
            .arg(id)
            .query(&mut admin)
            .unwrap();
    }
    let pttl: i64 = redis::cmd("PTTL").arg(&key).query(&mut admin).unwrap();
    assert!(pttl > 0 && pttl <= i64::try_from(ttl_ms).unwrap(), "{pttl}");

    // the first one's round is the only one since
    fleets[0].sync_now().await.unwrap();
    assert_eq!(budgets[0].processes(), Some(1));
    assert_eq!(budgets[0].fallback_share(), Some(ALLOWANCE));
    fleets[1].sync_now().await.unwrap();
    assert_eq!(budgets[1].processes(), Some(2));
    assert_eq!(budgets[1].fallback_share(), Some(ALLOWANCE / 2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_never_reached_redis_spends_the_whole_allowance() {
    let config = FleetConfig::new(format!("redis://127.0.0.1:{}/", common::free_port()))
        .with_interval(Duration::from_secs(60))
        .with_connect_timeout(Duration::from_millis(200));
    let fleet = Fleet::without_evidence(config).unwrap();
    let budget = fleet
        .budget(FleetBudgetConfig::fixed_window(
            "shared",
            ALLOWANCE,
            Duration::from_secs(3_600),
        ))
        .unwrap();
    assert!(fleet.sync_now().await.is_err());
    assert_eq!(budget.processes(), None);
    assert_eq!(budget.fallback_share(), Some(ALLOWANCE));
    assert_eq!(spend_from_the_fallback(&budget), u64::from(ALLOWANCE));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fallback_of_the_caller_s_own_is_kept_as_it_is() {
    let Some(mut server) =
        common::OwnedServer::start("a_fallback_of_the_caller_s_own_is_kept_as_it_is")
    else {
        return;
    };
    let config = common::manual_rounds(server.url(), common::namespace("own-fallback"))
        .with_connect_timeout(Duration::from_millis(200));
    let window = common::window_clear_of_its_end(&server.url(), Duration::from_secs(600));
    let own = || {
        FixedWindowBudget::new(
            FixedWindowConfig::new()
                .with_max_cost_per_window(70)
                .with_window_ms(3_600_000)
                .build()
                .unwrap(),
        )
    };
    let (a, b) = (
        Fleet::without_evidence(config.clone()).unwrap(),
        Fleet::without_evidence(config).unwrap(),
    );
    let budget_a = a
        .budget(FleetBudgetConfig::fixed_window("shared", ALLOWANCE, window).with_fallback(own()))
        .unwrap();
    let _budget_b = b
        .budget(FleetBudgetConfig::fixed_window("shared", ALLOWANCE, window).with_fallback(own()))
        .unwrap();
    b.sync_now().await.unwrap();
    a.sync_now().await.unwrap();
    assert_eq!(budget_a.processes(), Some(2));
    assert_eq!(budget_a.fallback_share(), None);
    server.stop();
    assert!(a.sync_now().await.is_err());
    assert_eq!(spend_from_the_fallback(&budget_a), 70);
}
