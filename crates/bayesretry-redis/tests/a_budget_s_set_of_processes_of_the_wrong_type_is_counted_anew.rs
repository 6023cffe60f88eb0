//! A fleet budget counts its processes in the sorted set `{ns}:bp:<name>`,
//! for its fallback's fair share. A key of another type there (written by
//! hand, or by a tool sharing the namespace) failed the count at every
//! round of every process, for good: the key has no time to live of its
//! own. No process then learned how many share the budget, and each kept
//! the whole allowance as its fallback — the fleet cut off from Redis could
//! spend one allowance per process again — while every round was counted a
//! failed one. Such a key is now replaced by the set, as the fleet's other
//! scripts replace a key of the wrong type.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use core::time::Duration;

use bayesretry_redis::{Fleet, FleetBudgetConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_s_set_of_processes_of_the_wrong_type_is_counted_anew() {
    let Some(url) =
        common::server_url("a_budget_s_set_of_processes_of_the_wrong_type_is_counted_anew")
    else {
        return;
    };
    let namespace = common::namespace("processes-wrong-type");
    let mut conn = common::admin(&url);
    let () = redis::cmd("SET")
        .arg(format!("{{{namespace}}}:bp:shared"))
        .arg("restored by hand")
        .query(&mut conn)
        .unwrap();

    let config = common::manual_rounds(url, namespace.clone());
    let (fleet_a, fleet_b) = (
        Fleet::without_evidence(config.clone()).unwrap(),
        Fleet::without_evidence(config).unwrap(),
    );
    let budget = |fleet: &Fleet| {
        fleet
            .budget(FleetBudgetConfig::fixed_window(
                "shared",
                100,
                Duration::from_secs(600),
            ))
            .unwrap()
    };
    let (a, b) = (budget(&fleet_a), budget(&fleet_b));
    fleet_a.sync_now().await.unwrap();
    fleet_b.sync_now().await.unwrap();
    fleet_a.sync_now().await.unwrap();
    assert_eq!(a.processes(), Some(2), "the two processes are counted");
    assert_eq!(b.processes(), Some(2));
    assert_eq!(a.fallback_share(), Some(50));
    assert_eq!(fleet_a.stats().failed_in_a_row, 0);
    let kind: String = redis::cmd("TYPE")
        .arg(format!("{{{namespace}}}:bp:shared"))
        .query(&mut conn)
        .unwrap();
    assert_eq!(kind, "zset");
}
