//! A shard refreshes its view of the other shards' class evidence every
//! `class_refresh_ms` of the callers' clock. One reading far ahead of the
//! others (a clock stepped forward and set right again, a caller passing
//! another clock's time) must not stop those refreshes until the real clock
//! has caught up with it: after the next ordinary reading past the interval,
//! the class level is what it would have been without the stray one.

#![allow(
    clippy::unwrap_used,
    reason = "the store's settings are valid by construction"
)]

use bayesretry_store::{Beta, Context, ErrorClass, MemoryStore, PosteriorStore, StoreConfig};

fn store() -> MemoryStore {
    StoreConfig::new()
        .with_shards(2)
        .with_hash_seed(7)
        .with_class_refresh_ms(1_000)
        .build()
        .unwrap()
}

/// The prior of a fresh context of `probe`'s endpoint and class, after
/// `probe` succeeded once and 64 other endpoints (in both shards) each
/// succeeded and failed in a proportion of their own,
/// with a stray read at `stray_ms` in between if given.
fn prior_after(stray_ms: Option<u64>) -> Beta {
    let store = store();
    let probe = Context::new("probe", 1, ErrorClass::Timeout);
    store.observe(&probe, true, 0);
    if let Some(stray_ms) = stray_ms {
        let _ = store.posterior(&probe.with_attempt(2), stray_ms);
    }
    for i in 0..64 {
        let name = format!("endpoint-{i}");
        let other = Context::new(&name, 1, ErrorClass::Timeout);
        store.observe_weighted(&other, f64::from(i), 64.0, 10_000);
    }
    store.prior(&probe.with_attempt(3), 20_000)
}

#[test]
fn a_read_far_ahead_is_followed_by_a_refresh_at_the_next_ordinary_reading() {
    let expected = prior_after(None);
    // the other endpoints' evidence reaches the class level
    assert!(expected.mean() < 0.5, "{expected:?}");
    for stray_ms in [3_000, 1 << 40, u64::MAX - 1, u64::MAX] {
        assert_eq!(
            prior_after(Some(stray_ms)),
            expected,
            "stray read at {stray_ms}"
        );
    }
}
