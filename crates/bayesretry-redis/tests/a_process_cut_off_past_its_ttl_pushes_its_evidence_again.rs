//! One process cut off from Redis for longer than `ttl` while the rest of
//! the fleet keeps syncing: its evidence expires from Redis (the fleet's
//! data lives on, so there is no new epoch). When it is back it pushes all
//! its evidence again, not only what changed meanwhile, and the fleet has it
//! whole.
//!
//! The cut is made with a Redis ACL user of the process's own, switched off
//! and its connections killed, then switched on again.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use core::time::Duration;

use bayesretry_redis::{Fleet, FleetConfig};
use bayesretry_store::{Context, ErrorClass, PosteriorStore};

/// A Redis ACL user, deleted when dropped.
struct User {
    admin: redis::Connection,
    name: String,
}

impl User {
    fn new(url: &str, name: String) -> User {
        let mut admin = common::admin(url);
        let _: () = redis::cmd("ACL")
            .arg("SETUSER")
            .arg(&name)
            .arg(&["reset", "on", ">pw", "~*", "+@all"][..])
            .query(&mut admin)
            .unwrap();
        User { admin, name }
    }

    /// Switches the user off (and drops its connections) or on again.
    fn set_on(&mut self, on: bool) {
        let _: () = redis::cmd("ACL")
            .arg("SETUSER")
            .arg(&self.name)
            .arg(if on { "on" } else { "off" })
            .query(&mut self.admin)
            .unwrap();
        if !on {
            let _: i64 = redis::cmd("CLIENT")
                .arg(&["KILL", "USER"][..])
                .arg(&self.name)
                .query(&mut self.admin)
                .unwrap();
        }
    }
}

impl Drop for User {
    fn drop(&mut self) {
        let _: Result<i64, _> = redis::cmd("ACL")
            .arg("DELUSER")
            .arg(&self.name)
            .query(&mut self.admin);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_cut_off_past_its_ttl_pushes_its_evidence_again() {
    let Some(url) = common::server_url("a_process_cut_off_past_its_ttl_pushes_its_evidence_again")
    else {
        return;
    };
    let mut user = User::new(&url, format!("cut-off-{}", std::process::id()));
    let config = FleetConfig::new(url)
        .with_namespace(common::namespace("cut-off"))
        .with_interval(Duration::from_millis(20))
        .with_ttl(Duration::from_millis(200))
        .with_connect_timeout(Duration::from_millis(100))
        .with_response_timeout(Duration::from_millis(100));
    // the rest of the fleet, syncing every 20 ms: the fleet's data lives on
    let _rest = Fleet::start(config.clone(), common::store(41)).unwrap();
    let writer = common::store(42);
    let fleet = Fleet::start(
        config
            .clone()
            .with_credentials(Some(user.name.clone()), "pw"),
        writer.clone(),
    )
    .unwrap();
    let before = Context::new("search", 1, ErrorClass::Timeout);
    let during = Context::new("search", 2, ErrorClass::Timeout);
    writer.observe(&before, false, 10);
    fleet.sync_now().await.unwrap();

    // cut off for three ttls
    user.set_on(false);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(!fleet.stats().connected);
    writer.observe(&during, false, 20);
    user.set_on(true);
    assert!(
        common::sync_until_back(&fleet, 100).await,
        "the process reconnected"
    );
    fleet.sync_now().await.unwrap();

    let reader = common::store(43);
    let newcomer = Fleet::start(config, reader.clone()).unwrap();
    newcomer.sync_now().await.unwrap();
    assert_eq!(reader.evidence(&during, 30).failures(), 1.0);
    assert_eq!(
        reader.evidence(&before, 30).failures(),
        1.0,
        "evidence from before the cut is gone from the fleet: {:?}",
        fleet.stats()
    );
}
