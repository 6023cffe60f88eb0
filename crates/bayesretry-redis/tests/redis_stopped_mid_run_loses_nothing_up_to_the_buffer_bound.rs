//! Redis stopped mid-run and restarted empty: callers see no error while it is
//! down, and once it is back the fleet's evidence holds everything observed,
//! before the outage and during it. Beyond the buffer bound, updates wait in
//! the store for a later round, counted, and still reach the fleet.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

extern crate alloc;

mod common;

use alloc::sync::Arc;
use core::time::Duration;

use bayesretry_budget::Budget;
use bayesretry_policy::{Context, ErrorClass, RetryPolicy};
use bayesretry_redis::{Fleet, FleetBudgetConfig, FleetConfig};
use bayesretry_store::{MemoryStore, PosteriorStore, StoreConfig, WriterId};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outcomes_observed_while_redis_is_down_reach_the_fleet_after_it_restarts() {
    let Some(mut server) = common::OwnedServer::start("redis_stopped_mid_run") else {
        return;
    };
    let config = FleetConfig::new(server.url())
        .with_namespace(common::namespace("restart"))
        .with_interval(Duration::from_millis(20))
        .with_connect_timeout(Duration::from_millis(200))
        .with_response_timeout(Duration::from_millis(200));
    let policy = RetryPolicy::builder()
        .with_store_config(StoreConfig::new().with_writer(WriterId::new(11)))
        .build()
        .unwrap();
    let fleet = Fleet::start(config.clone(), policy.clone()).unwrap();
    // A window that does not end during the test, at any time of day: the
    // spends below, made once Redis has stopped but before the process
    // knows it, come from the lease, which a window's end would void.
    let window = common::window_clear_of_its_end(&server.url(), Duration::from_secs(3_600));
    let budget = fleet
        .budget(FleetBudgetConfig::fixed_window("restart", 1_000, window))
        .unwrap();
    fleet.sync_now().await.unwrap();

    let ctx = Context::new("billing", 1, ErrorClass::Http(503));
    let other = Context::new("billing", 2, ErrorClass::Timeout);
    for i in 0..10 {
        policy.observe(&ctx, i % 2 == 0);
    }
    fleet.sync_now().await.unwrap();
    assert!(fleet.stats().connected);

    server.stop();
    // Calls go on without an error: the policy answers from its store, the
    // budget from its lease (or its local fallback), the run loop succeeds.
    for i in 0..25 {
        policy.observe(&ctx, i % 5 == 0);
        assert!(budget.try_spend(policy.now_ms(), 1).is_ok());
    }
    policy.observe(&other, false);
    let answer: Result<u32, _> = policy
        .run("billing", |_| async {
            Ok::<_, bayesretry_policy::HttpStatus>(7)
        })
        .await;
    assert_eq!(answer.unwrap(), 7);
    assert!(fleet.sync_now().await.is_err());
    let down = fleet.stats();
    assert!(!down.connected);
    assert_eq!(down.buffered, 2, "{down:?}");
    assert_eq!(down.deferred, 0);

    server.restart();
    assert!(
        common::sync_until_back(&fleet, 200).await,
        "the fleet reconnected"
    );
    let stats = fleet.stats();
    assert!(stats.resyncs >= 1, "{stats:?}");
    assert_eq!(stats.buffered, 0);

    // A newcomer sees all 36 outcomes: 10 from before the outage, 26 from
    // during it, though Redis came back empty.
    let reader = Arc::new(MemoryStore::new());
    let newcomer = Fleet::start(config, reader.clone()).unwrap();
    newcomer.sync_now().await.unwrap();
    let seen = reader.evidence(&ctx, policy.now_ms());
    assert_eq!((seen.successes(), seen.failures()), (5.0 + 5.0, 5.0 + 20.0));
    assert_eq!(reader.evidence(&other, policy.now_ms()).failures(), 1.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_beyond_the_buffer_bound_are_counted_as_deferred() {
    // Nothing listens on this port: Redis is down from the start, and the
    // run needs no server.
    let url = format!("redis://127.0.0.1:{}/", common::free_port());
    let store = Arc::new(MemoryStore::new());
    let config = FleetConfig::new(url)
        .with_max_buffered(3)
        .with_connect_timeout(Duration::from_millis(100));
    let fleet = Fleet::start(config, store.clone()).unwrap();
    for attempt in 1..=5 {
        store.observe(&Context::new("db", attempt, ErrorClass::Timeout), false, 1);
    }
    assert!(fleet.sync_now().await.is_err());
    let stats = fleet.stats();
    assert_eq!((stats.buffered, stats.deferred), (3, 2), "{stats:?}");
    // The same versions are not counted twice.
    assert!(fleet.sync_now().await.is_err());
    assert_eq!(fleet.stats().deferred, 2);
    // Decisions never needed Redis.
    assert!(
        store
            .posterior(&Context::new("db", 1, ErrorClass::Timeout), 1)
            .mean()
            < 0.5
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_contexts_than_the_buffer_holds_all_reach_the_fleet() {
    let Some(server) = common::OwnedServer::start("redis_buffer_bound") else {
        return;
    };
    let config =
        common::manual_rounds(server.url(), common::namespace("bound")).with_max_buffered(2);
    let store = Arc::new(MemoryStore::new());
    let fleet = Fleet::start(config.clone(), store.clone()).unwrap();
    fleet.sync_now().await.unwrap();
    // five contexts change in one round, with Redis up all along
    let contexts: Vec<Context<'static>> = (1..=5)
        .map(|attempt| Context::new("db", attempt, ErrorClass::Timeout))
        .collect();
    for ctx in &contexts {
        store.observe(ctx, true, 1);
    }
    // two go up per round; the rest wait their turn, and nothing is lost
    for _ in 0..3 {
        fleet.sync_now().await.unwrap();
    }
    let stats = fleet.stats();
    assert_eq!(stats.buffered, 0, "{stats:?}");
    assert!(stats.deferred >= 3, "{stats:?}");
    let reader = Arc::new(MemoryStore::new());
    let newcomer = Fleet::start(config, reader.clone()).unwrap();
    newcomer.sync_now().await.unwrap();
    for ctx in &contexts {
        assert_eq!(reader.evidence(ctx, 1).successes(), 1.0, "{ctx:?}");
    }
}
