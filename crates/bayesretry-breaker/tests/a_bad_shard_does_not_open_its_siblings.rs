//! Per-shard breakers: a dead shard opens its own breaker and nobody else's, where
//! one breaker for the whole endpoint would stay closed. And the map stays bounded.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

use core::num::NonZeroUsize;

use bayesretry_breaker::{Admission, Config, KeyedBreaker, State, Transition};

type Key = (&'static str, u32);

fn keyed(max_keys: usize) -> KeyedBreaker<Key> {
    KeyedBreaker::new(
        Config::new().build().unwrap(),
        NonZeroUsize::new(max_keys).unwrap(),
    )
}

#[test]
fn a_bad_shard_does_not_open_its_siblings() {
    let breakers = keyed(64);
    let mut endpoint_wide = Config::new().build().unwrap();
    let mut opened = Vec::new();
    for now in 0..4_000_u64 {
        let shard = (now % 4) as u32;
        let key = ("orders-db", shard);
        // Shard 2 is down; shard 1 fails one call in five; 0 and 3 are fine.
        let success = shard != 2 && now % 20 != 1;
        // The endpoint-wide breaker, as if it were the only one, sees every call.
        assert!(endpoint_wide.check(now).is_allowed());
        assert_eq!(endpoint_wide.record(now, success), None);
        if !breakers.check(&key, now).is_allowed() {
            continue;
        }
        if let Some(transition) = breakers.record(&key, now, success) {
            opened.push((shard, transition));
        }
    }
    assert_eq!(opened.len(), 1);
    assert_eq!(opened[0].0, 2);
    assert!(matches!(opened[0].1, Transition::Opened { .. }));
    for shard in [0, 1, 3] {
        assert_eq!(breakers.state(&("orders-db", shard)), Some(State::Closed));
        assert_eq!(
            breakers.check(&("orders-db", shard), 4_000),
            Admission::Allowed
        );
    }
    assert!(!breakers.check(&("orders-db", 2), 4_000).is_allowed());
    // One breaker for the whole endpoint sees 70 % success and stays closed,
    // letting every call to the dead shard through.
    assert_eq!(endpoint_wide.state(), State::Closed);
}

#[test]
fn checking_an_unknown_key_admits_without_an_entry() {
    let breakers = keyed(4);
    assert_eq!(breakers.check(&("a", 1), 0), Admission::Allowed);
    assert!(breakers.is_empty());
    assert_eq!(breakers.record(&("a", 1), 0, true), None);
    assert_eq!(breakers.len(), 1);
}

#[test]
fn the_map_holds_at_most_max_keys_and_evicts_the_least_recently_used() {
    let breakers = keyed(4);
    for shard in 0..4 {
        let _ = breakers.record(&("db", shard), 0, false);
    }
    // Shard 0 is used again, so shard 1 is now the least recently used.
    let _ = breakers.check(&("db", 0), 1);
    for shard in 10..12 {
        let _ = breakers.record(&("db", shard), 2, true);
    }
    assert_eq!(breakers.len(), 4);
    assert_eq!(breakers.max_keys(), 4);
    for (shard, kept) in [
        (0, true),
        (1, false),
        (2, false),
        (3, true),
        (10, true),
        (11, true),
    ] {
        assert_eq!(
            breakers.state(&("db", shard)).is_some(),
            kept,
            "shard {shard}"
        );
    }
}

#[test]
fn an_open_shard_that_keeps_being_checked_survives_key_churn() {
    let breakers = keyed(8);
    let dead = ("db", 0);
    let mut now = 0;
    while breakers.record(&dead, now, false).is_none() {
        now += 1;
    }
    // A thousand one-off keys pass through, while calls to the dead shard keep
    // being refused (each check is a use).
    for tenant in 1..1_000 {
        now += 1;
        assert!(!breakers.check(&dead, now).is_allowed());
        let _ = breakers.record(&("db", tenant), now, true);
        assert!(breakers.len() <= 8);
    }
    assert!(matches!(breakers.state(&dead), Some(State::Open { .. })));
}

#[test]
fn removing_a_key_forgets_its_breaker() {
    let breakers = keyed(4);
    let _ = breakers.record(&("db", 1), 0, false);
    assert!(breakers.remove(&("db", 1)).is_some());
    assert!(breakers.remove(&("db", 1)).is_none());
    assert!(breakers.is_empty());
    assert!(breakers.snapshot(&("db", 1)).is_none());
}
