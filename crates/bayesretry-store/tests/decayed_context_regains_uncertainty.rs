//! With a half-life, a context that stops receiving outcomes decays back toward
//! its prior: its posterior widens, so it is re-explored, and a breaker reading
//! it could close again. Its parents decay with it.
#![allow(clippy::unwrap_used, reason = "test helpers build known-good values")]

use core::num::NonZeroU64;

use bayesretry_store::{Context, ErrorClass, HalfLife, PosteriorStore, StoreConfig};

fn minute() -> HalfLife {
    HalfLife::from_ms(NonZeroU64::new(60_000).unwrap())
}

#[test]
fn a_stopped_context_regains_uncertainty() {
    let store = StoreConfig::new()
        .with_half_life(minute())
        .with_hierarchical_priors(false)
        .build()
        .unwrap();
    let ctx = Context::new("down", 1, ErrorClass::ConnectionRefused);
    for now in 0..60 {
        store.observe(&ctx, false, now);
    }
    let verdict = store.posterior(&ctx, 60);
    assert!(verdict.upper_bound(0.95) < 0.06, "{verdict}");
    // Ten minutes without a single outcome: ten half-lives.
    let later = store.posterior(&ctx, 600_060);
    assert!(later.upper_bound(0.95) > 0.5, "{later}");
    let failures_left = later.beta() - 1.0;
    assert!(
        (failures_left - 60.0 / 1024.0).abs() < 0.01,
        "{failures_left}"
    );
    // A new outcome then weighs as much as all the old ones.
    store.observe(&ctx, true, 600_060);
    let after = store.evidence(&ctx, 600_060);
    assert_eq!(after.successes(), 1.0);
    assert!(after.failures() < 0.1);
}

#[test]
fn parents_decay_with_their_contexts() {
    let store = StoreConfig::new()
        .with_half_life(minute())
        .with_shards(1)
        .build()
        .unwrap();
    for _ in 0..100 {
        store.observe(&Context::new("a", 1, ErrorClass::Http(429)), false, 0);
    }
    let fresh = Context::new("b", 1, ErrorClass::Http(429));
    // At first the class lends its full 10 failures…
    assert!((store.prior(&fresh, 0).beta() - 11.0).abs() < 1e-9);
    // …after 5 half-lives it still holds 3.125 and lends them all…
    let prior = store.prior(&fresh, 300_000);
    assert!((prior.beta() - 1.0 - 100.0 / 32.0).abs() < 1e-9, "{prior}");
    // …and after 20 it lends next to nothing.
    assert!(store.prior(&fresh, 1_200_000).beta() - 1.0 < 1e-3);
}

#[test]
fn a_lagging_clock_does_not_undo_decay_or_lose_outcomes() {
    let store = StoreConfig::new()
        .with_half_life(minute())
        .with_hierarchical_priors(false)
        .build()
        .unwrap();
    let ctx = Context::new("a", 1, ErrorClass::Timeout);
    store.observe(&ctx, false, 120_000);
    store.observe(&ctx, false, 60_000); // read before the other, recorded after
    assert_eq!(store.evidence(&ctx, 120_000).failures(), 2.0);
    assert_eq!(store.evidence(&ctx, 0).failures(), 2.0);
}
