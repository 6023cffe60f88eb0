//! Four processes hammering one fleet budget spend, together, exactly its
//! allowance: never more, and nothing left stranded once all have asked.
//!
//! The test binary spawns itself four times with `BAYESRETRY_TEST_ROLE=spender`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    missing_docs,
    reason = "a test binary"
)]

mod common;

use core::time::Duration;
use std::process::{Command, Stdio};

use bayesretry_budget::Budget;
use bayesretry_redis::{Fleet, FleetBudgetConfig, FleetConfig};

/// The fleet's allowance.
const CAP: u32 = 777;
/// A window that does not roll during the test (about 34 years).
const WINDOW: Duration = Duration::from_millis(1 << 40);

fn main() {
    if std::env::var("BAYESRETRY_TEST_ROLE").as_deref() == Ok("spender") {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
            .block_on(spender());
    } else {
        coordinator();
    }
}

/// Spends one unit at a time until the fleet's allowance is gone.
async fn spender() {
    let url = std::env::var("BAYESRETRY_REDIS_URL").unwrap();
    let namespace = std::env::var("BAYESRETRY_TEST_NAMESPACE").unwrap();
    let config = FleetConfig::new(url)
        .with_namespace(namespace)
        .with_interval(Duration::from_millis(10));
    let fleet = Fleet::without_evidence(config).unwrap();
    let budget = fleet
        .budget(FleetBudgetConfig::fixed_window("hammered", CAP, WINDOW).with_lease(7))
        .unwrap();
    fleet.sync_now().await.unwrap();
    let mut spent = 0_u64;
    let mut finished = false;
    for _ in 0..1_000_000 {
        // every spend is from a fleet lease, never the local fallback
        assert!(fleet.stats().connected, "redis stayed up");
        match budget.try_spend(0, 1) {
            Ok(()) => spent += 1,
            Err(_) if budget.is_exhausted() => {
                finished = true;
                break;
            }
            Err(_) => tokio::task::yield_now().await,
        }
    }
    assert!(finished, "the allowance ran out");
    assert_eq!(budget.spent(), spent);
    println!("{spent}");
}

fn coordinator() {
    let name = "four_processes_never_overspend_one_budget";
    let Some(url) = common::server_url(name) else {
        return;
    };
    let namespace = common::namespace("budget");
    let children: Vec<_> = (0..4)
        .map(|_| {
            Command::new(std::env::current_exe().unwrap())
                .env("BAYESRETRY_TEST_ROLE", "spender")
                .env("BAYESRETRY_REDIS_URL", &url)
                .env("BAYESRETRY_TEST_NAMESPACE", &namespace)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut total = 0_u64;
    let mut each = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "a spender failed");
        let spent: u64 = String::from_utf8(out.stdout)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        each.push(spent);
        total += spent;
    }
    assert!(total <= u64::from(CAP), "overspent: {each:?}");
    assert_eq!(total, u64::from(CAP), "spent by each process: {each:?}");
    println!("test {name} ... ok (spent by each process: {each:?})");
}
