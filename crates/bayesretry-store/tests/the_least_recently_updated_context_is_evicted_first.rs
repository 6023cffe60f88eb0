//! When a shard is full, the context it forgets is the one updated longest
//! ago; reading a context does not count as an update.

use bayesretry_store::{Beta, Context, ErrorClass, PosteriorStore, StoreConfig};

fn ctx(i: u32) -> Context<'static> {
    Context::new("api", i, ErrorClass::Timeout)
}

#[test]
fn the_least_recently_updated_goes_first() {
    let store = StoreConfig::new()
        .with_max_contexts(3)
        .with_shards(1)
        .with_hierarchical_priors(false)
        .build()
        .unwrap();
    for i in 1..=3 {
        store.observe(&ctx(i), true, 0);
    }
    store.observe(&ctx(1), true, 0); // 1 is now the most recent; 2 the oldest
    let _ = store.posterior(&ctx(2), 0); // reading does not save it
    store.observe(&ctx(4), true, 0);
    assert_eq!(store.len(), 3);
    assert_eq!(store.posterior(&ctx(2), 0), Beta::uniform());
    assert_eq!(store.posterior(&ctx(1), 0), Beta::new(3.0, 1.0).unwrap());
    assert_eq!(store.posterior(&ctx(3), 0), Beta::new(2.0, 1.0).unwrap());
    assert_eq!(store.posterior(&ctx(4), 0), Beta::new(2.0, 1.0).unwrap());
}

#[test]
fn an_evicted_context_leaves_its_parents() {
    let store = StoreConfig::new()
        .with_max_contexts(2)
        .with_shards(1)
        .build()
        .unwrap();
    for _ in 0..20 {
        store.observe(&Context::new("a", 1, ErrorClass::Http(429)), false, 0);
    }
    let fresh = Context::new("b", 1, ErrorClass::Http(429));
    assert!(store.prior(&fresh, 0).beta() > 10.0);
    // Two other contexts push "a" out: its twenty failures go with it.
    store.observe(&Context::new("c", 1, ErrorClass::Timeout), true, 0);
    store.observe(&Context::new("d", 1, ErrorClass::Timeout), true, 0);
    assert_eq!(store.prior(&fresh, 0), Beta::uniform());
    assert_eq!(store.len(), 2);
}
