//! Settings out of range are refused when a fleet, budget or breaker is made,
//! with a message that names the value; credentials never show in one. A
//! setting accepted is one Redis takes.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod common;

use core::time::Duration;

use bayesretry_redis::{Error, Fleet, FleetBreaker, FleetBudgetConfig, FleetConfig};
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore};

fn url() -> &'static str {
    "redis://app:hunter2@127.0.0.1:1/0"
}

#[tokio::test]
async fn settings_out_of_range_are_rejected_by_name() {
    let start = |config: FleetConfig| Fleet::without_evidence(config).unwrap_err();
    for namespace in ["", "a b", "{x}", &"n".repeat(65)] {
        let e = start(FleetConfig::new(url()).with_namespace(namespace));
        assert!(matches!(e, Error::InvalidNamespace(_)), "{e}");
    }
    let e = start(FleetConfig::new(url()).with_interval(Duration::ZERO));
    assert_eq!(
        e.to_string(),
        "sync interval must be at least 1 ms, got 0ns"
    );
    let e = start(FleetConfig::new(url()).with_ttl(Duration::from_millis(1_500)));
    assert!(matches!(e, Error::InvalidTtl { .. }), "{e}");
    // Redis would refuse it in every round's PEXPIRE
    for ttl in [
        Duration::MAX,
        FleetConfig::MAX_TTL + Duration::from_millis(1),
    ] {
        let e = start(FleetConfig::new(url()).with_ttl(ttl));
        assert!(matches!(e, Error::InvalidTtl { .. }), "{e}");
        assert!(e.to_string().contains("at most 2^40 ms"), "{e}");
    }
    let e = start(FleetConfig::new(url()).with_max_buffered(0));
    assert_eq!(e.to_string(), "max_buffered must be at least 1, got 0");
    let e = start(FleetConfig::new("http://app:hunter2@h/"));
    assert!(matches!(e, Error::InvalidUrl { .. }), "{e}");
    assert!(!e.to_string().contains("hunter2"), "{e}");
    assert!(!format!("{e:?}").contains("hunter2"), "{e:?}");
    #[cfg(not(feature = "tls"))]
    {
        let e = start(FleetConfig::new("rediss://app:hunter2@h/"));
        assert!(matches!(e, Error::TlsNotEnabled(_)), "{e}");
        assert!(!e.to_string().contains("hunter2"), "{e}");
    }

    let fleet = Fleet::without_evidence(FleetConfig::new(url())).unwrap();
    let window = Duration::from_secs(1);
    for (rules, named) in [
        (FleetBudgetConfig::fixed_window("b", 0, window), "max_cost"),
        (
            FleetBudgetConfig::fixed_window("b", 1, Duration::ZERO),
            "window",
        ),
        (FleetBudgetConfig::fixed_window("", 1, window), "name"),
        (
            FleetBudgetConfig::fixed_window("b", 1, window).with_lease(0),
            "lease",
        ),
        (FleetBudgetConfig::ratio("b", f64::NAN, 1, window), "ratio"),
        (FleetBudgetConfig::ratio("b", -0.5, 1, window), "ratio"),
    ] {
        let e = fleet.budget(rules).unwrap_err();
        assert!(e.to_string().contains(named), "{e} names {named}");
    }
    let e = fleet
        .breaker(bayesretry_breaker::Config::new().with_confidence(2.0))
        .unwrap_err();
    assert!(matches!(e, Error::InvalidBreaker(_)), "{e}");
    // an opening Redis could not hold (see FleetBreaker::MAX_COOLDOWN_MS)
    for max in [u64::MAX, FleetBreaker::MAX_COOLDOWN_MS + 1] {
        let e = fleet
            .breaker(bayesretry_breaker::Config::new().with_max_cooldown_ms(max))
            .unwrap_err();
        assert!(matches!(e, Error::InvalidMaxCooldown(_)), "{e}");
        assert_eq!(
            e.to_string(),
            format!("max_cooldown_ms of a fleet breaker must be at most 2^40 ms, got {max}")
        );
    }
    fleet
        .breaker(
            bayesretry_breaker::Config::new().with_max_cooldown_ms(FleetBreaker::MAX_COOLDOWN_MS),
        )
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_longest_cooldown_accepted_is_one_redis_takes() {
    let Some(url) = common::server_url("the_longest_cooldown_accepted_is_one_redis_takes") else {
        return;
    };
    let config = common::manual_rounds(url, common::namespace("longest-cooldown"));
    let (fleet_a, fleet_b) = (
        Fleet::without_evidence(config.clone()).unwrap(),
        Fleet::without_evidence(config).unwrap(),
    );
    // an opening of the longest cooldown, the first one
    let rules = common::one_probe_rules(FleetBreaker::MAX_COOLDOWN_MS)
        .with_max_cooldown_ms(FleetBreaker::MAX_COOLDOWN_MS);
    let (a, b) = (
        fleet_a.breaker(rules).unwrap(),
        fleet_b.breaker(rules).unwrap(),
    );
    assert!((0..100).any(|_| a.record("payments", false).is_some()));
    fleet_a.sync_now().await.unwrap();
    fleet_b.sync_now().await.unwrap();
    assert!(b.is_open_fleetwide("payments"));
    assert!(!b.check("payments").is_allowed());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_longest_ttl_accepted_is_one_redis_takes() {
    let Some(url) = common::server_url("the_longest_ttl_accepted_is_one_redis_takes") else {
        return;
    };
    let config = FleetConfig::new(url)
        .with_namespace(common::namespace("longest-ttl"))
        .with_ttl(FleetConfig::MAX_TTL);
    let store = MemoryStore::new();
    store.observe(&Context::new("db", 1, ErrorClass::Timeout), false, 1);
    let fleet = Fleet::start(config, store).unwrap();
    fleet.sync_now().await.unwrap();
    assert_eq!(fleet.stats().pushed, 1);
}

#[test]
fn a_fleet_needs_a_runtime() {
    let e = Fleet::without_evidence(FleetConfig::new(url())).unwrap_err();
    assert!(matches!(e, Error::NoRuntime), "{e}");
}
