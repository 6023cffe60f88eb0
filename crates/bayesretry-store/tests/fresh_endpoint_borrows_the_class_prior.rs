//! A context with no evidence of its own borrows its prior from its parents —
//! the same endpoint and class at other attempts, and the same class at other
//! endpoints — worth at most `max_borrowed` pseudo-observations, with the
//! parents' mean.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

use bayesretry_store::{Beta, Context, ErrorClass, MemoryStore, PosteriorStore, StoreConfig};

/// One shard and no refresh delay: every parent sum is exact at once.
fn exact() -> MemoryStore {
    StoreConfig::new().with_shards(1).build().unwrap()
}

fn observe_many(store: &MemoryStore, ctx: &Context<'_>, successes: u32, failures: u32) {
    for _ in 0..successes {
        store.observe(ctx, true, 0);
    }
    for _ in 0..failures {
        store.observe(ctx, false, 0);
    }
}

#[test]
fn a_fresh_endpoint_starts_from_what_the_class_did_elsewhere() {
    let store = exact();
    // 429s clear 90 % of the time on two other endpoints.
    observe_many(&store, &Context::new("a", 1, ErrorClass::Http(429)), 45, 5);
    observe_many(&store, &Context::new("b", 1, ErrorClass::Http(429)), 45, 5);
    let fresh = Context::new("c", 1, ErrorClass::Http(429));
    let prior = store.posterior(&fresh, 0);
    // Beta(1, 1) plus 10 pseudo-observations at 90 %: Beta(10, 2).
    assert!((prior.alpha() - 10.0).abs() < 1e-12, "{prior}");
    assert!((prior.beta() - 2.0).abs() < 1e-12, "{prior}");
    assert_eq!(store.prior(&fresh, 0), prior);
    // Nothing was created by asking.
    assert_eq!(store.len(), 2);
}

#[test]
fn other_classes_lend_nothing() {
    let store = exact();
    observe_many(&store, &Context::new("a", 1, ErrorClass::Http(500)), 0, 50);
    let fresh = Context::new("c", 1, ErrorClass::Http(429));
    assert_eq!(store.posterior(&fresh, 0), Beta::uniform());
}

#[test]
fn the_endpoints_other_attempts_come_first() {
    let store = exact();
    // Elsewhere 429s clear; on this endpoint, retries after a 429 at attempt 1
    // failed 30 times out of 30: the later attempt leans on the endpoint.
    observe_many(&store, &Context::new("a", 1, ErrorClass::Http(429)), 100, 0);
    let here = Context::new("z", 1, ErrorClass::Http(429));
    observe_many(&store, &here, 0, 30);
    let prior = store.posterior(&here.with_attempt(2), 0);
    // Pool: class capped to (10, 0) plus the endpoint's (0, 30), capped to 10.
    let mean_of_pool = 10.0 / 40.0;
    let expected = Beta::new(1.0 + 10.0 * mean_of_pool, 1.0 + 10.0 * (1.0 - mean_of_pool)).unwrap();
    assert!((prior.alpha() - expected.alpha()).abs() < 1e-12, "{prior}");
    assert!((prior.beta() - expected.beta()).abs() < 1e-12, "{prior}");
}

#[test]
fn own_evidence_is_not_counted_twice() {
    let store = exact();
    let ctx = Context::new("only", 1, ErrorClass::Timeout);
    store.observe(&ctx, false, 0);
    // The context is its group's and class's only member: it borrows nothing,
    // and its one failure counts once.
    assert_eq!(store.posterior(&ctx, 0), Beta::new(1.0, 2.0).unwrap());
}

#[test]
fn own_outcomes_outweigh_the_borrowed_prior() {
    let store = exact();
    observe_many(&store, &Context::new("a", 1, ErrorClass::Http(503)), 200, 0);
    let ctx = Context::new("b", 1, ErrorClass::Http(503));
    assert!(store.posterior(&ctx, 0).mean() > 0.9);
    observe_many(&store, &ctx, 0, 100);
    let posterior = store.posterior(&ctx, 0);
    // 11 pseudo-successes against 101 failures at most.
    assert!(posterior.mean() < 0.1, "{posterior}");
    assert!(posterior.strength() <= 2.0 + 10.0 + 100.0 + 1e-9);
}

#[test]
fn the_class_level_reaches_across_shards() {
    // 32 shards: the fresh endpoints land in other shards than "a" (most of
    // them). After the refresh interval, every shard sees the class.
    let store = StoreConfig::new()
        .with_shards(32)
        .with_class_refresh_ms(100)
        .build()
        .unwrap();
    for now in 0..64 {
        store.observe(&Context::new("a", 1, ErrorClass::Http(529)), true, now);
    }
    for i in 0..50 {
        let name = format!("fresh-{i}");
        let prior = store.posterior(&Context::new(&name, 1, ErrorClass::Http(529)), 1_000);
        assert!((prior.alpha() - 11.0).abs() < 1e-9, "{name}: {prior}");
        assert!((prior.beta() - 1.0).abs() < 1e-9, "{name}: {prior}");
    }
}
