//! A key of the fleet's that holds the wrong type (a tool wrote to the same
//! namespace, a hand edit): Redis refuses the part of a round that reads it,
//! round after round. That part fails alone. Taking the refusal for Redis
//! being away, the sync used to cut the whole round short and send every
//! budget of the process to its local fallback, which spent on top of what
//! the fleet had granted — for as long as the key stayed.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use core::time::Duration;

use bayesretry_breaker::Config;
use bayesretry_budget::Budget;
use bayesretry_redis::{Fleet, FleetBudgetConfig};

/// A window that does not roll during the test (about 34 years).
const WINDOW: Duration = Duration::from_millis(1 << 40);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_of_the_wrong_type_fails_its_own_part_of_a_round_only() {
    let Some(url) =
        common::server_url("a_key_of_the_wrong_type_fails_its_own_part_of_a_round_only")
    else {
        return;
    };
    let namespace = common::namespace("wrong-type");
    let fleet =
        Fleet::without_evidence(common::manual_rounds(url.clone(), namespace.clone())).unwrap();
    let budget = fleet
        .budget(FleetBudgetConfig::fixed_window("retries", 5, WINDOW).with_lease(1))
        .unwrap();
    let breaker = fleet.breaker(Config::new()).unwrap();
    fleet.sync_now().await.unwrap();

    // the breakers' hash, a string
    let mut conn = common::admin(&url);
    let () = redis::cmd("SET")
        .arg(format!("{{{namespace}}}:br"))
        .arg("not a hash")
        .query(&mut conn)
        .unwrap();

    let mut spent = 0;
    for _ in 0..20 {
        if budget.try_spend(0, 1).is_ok() {
            spent += 1;
        }
        assert!(breaker.check("payments").is_allowed());
        assert!(
            fleet.sync_now().await.is_err(),
            "the breakers' part of the round fails"
        );
    }
    assert_eq!(spent, 5, "the fleet's allowance, from the fleet");
    assert!(fleet.stats().connected, "{:?}", fleet.stats());
}
