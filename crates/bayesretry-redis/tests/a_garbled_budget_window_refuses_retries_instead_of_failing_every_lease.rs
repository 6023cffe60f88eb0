//! A budget window's hash whose count of grants is not a whole number
//! (edited by hand, written by a tool). Failing every lease on it, the sync
//! took Redis for unreachable, and every budget of the process — the other
//! budgets too — spent from its local fallback, on top of what the fleet had
//! granted. Now what the window granted is taken to be all of it: that
//! budget refuses retries for the rest of the window, and the others lease
//! from the fleet as before. So is a count with a leading zero, which
//! `tonumber` reads but `HINCRBY` refuses.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use core::time::Duration;

use bayesretry_budget::Budget;
use bayesretry_redis::{Fleet, FleetBudgetConfig};

/// A window that does not roll during the test (about 34 years).
const WINDOW: Duration = Duration::from_millis(1 << 40);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbled_budget_window_refuses_retries_instead_of_failing_every_lease() {
    let Some(url) = common::server_url(
        "a_garbled_budget_window_refuses_retries_instead_of_failing_every_lease",
    ) else {
        return;
    };
    // not a whole number; and digits with a leading zero, which a Lua
    // number reads but HINCRBY does not take
    for garbled in ["1.5", "01"] {
        refuses_retries_with_grants_at(&url, garbled).await;
    }
}

/// A window whose count of grants the test sets to `grants`.
async fn refuses_retries_with_grants_at(url: &str, grants: &str) {
    let url = url.to_owned();
    let namespace = common::namespace(&format!("garbled-window-{}", grants.len()));
    let fleet =
        Fleet::without_evidence(common::manual_rounds(url.clone(), namespace.clone())).unwrap();
    let garbled = fleet
        .budget(FleetBudgetConfig::fixed_window("garbled", 5, WINDOW).with_lease(1))
        .unwrap();
    let sound = fleet
        .budget(FleetBudgetConfig::fixed_window("sound", 5, WINDOW).with_lease(1))
        .unwrap();
    fleet.sync_now().await.unwrap();
    assert_eq!((garbled.leased(), sound.leased()), (1, 1));

    let mut conn = common::admin(&url);
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{{{namespace}}}:budget:garbled:*"))
        .query(&mut conn)
        .unwrap();
    assert_eq!(keys.len(), 1, "{keys:?}");
    let () = redis::cmd("HSET")
        .arg(&keys[0])
        .arg("s")
        .arg(grants)
        .query(&mut conn)
        .unwrap();

    let (mut from_garbled, mut from_sound) = (0, 0);
    for _ in 0..20 {
        if garbled.try_spend(0, 1).is_ok() {
            from_garbled += 1;
        }
        if sound.try_spend(0, 1).is_ok() {
            from_sound += 1;
        }
        // the outcome is in the spends
        let _ = fleet.sync_now().await;
    }
    assert_eq!(from_garbled, 1, "{grants}: only the unit leased before");
    assert_eq!(
        from_sound, 5,
        "{grants}: the fleet's allowance, from the fleet"
    );
    fleet.sync_now().await.unwrap();
    assert!(fleet.stats().connected, "{grants}");
}
