//! With hierarchical priors off (or nothing to borrow), every context is the
//! plain conjugate update of the configured prior.

use bayesretry_store::{Beta, Context, ErrorClass, PosteriorStore, StoreConfig};

#[test]
fn off_every_context_starts_from_the_prior() {
    let store = StoreConfig::new()
        .with_hierarchical_priors(false)
        .build()
        .unwrap();
    for _ in 0..100 {
        store.observe(&Context::new("a", 1, ErrorClass::Http(429)), true, 0);
    }
    let fresh = Context::new("b", 1, ErrorClass::Http(429));
    assert_eq!(store.posterior(&fresh, 0), Beta::uniform());
    store.observe(&fresh, false, 0);
    store.observe(&fresh, true, 0);
    store.observe(&fresh, false, 0);
    assert_eq!(store.posterior(&fresh, 0), Beta::new(2.0, 3.0).unwrap());
    assert_eq!(store.prior(&fresh, 0), Beta::uniform());
}

#[test]
fn a_zero_cap_is_the_same_as_off() {
    let prior = Beta::new(2.0, 5.0).unwrap();
    let store = StoreConfig::new()
        .with_prior(prior)
        .with_max_borrowed(0.0)
        .build()
        .unwrap();
    for _ in 0..10 {
        store.observe(&Context::new("a", 1, ErrorClass::Timeout), true, 0);
    }
    assert_eq!(
        store.posterior(&Context::new("b", 1, ErrorClass::Timeout), 0),
        prior
    );
}

#[test]
fn on_with_an_empty_store_is_the_plain_prior_too() {
    let store = StoreConfig::new().build().unwrap();
    let ctx = Context::new("a", 3, ErrorClass::Connect);
    assert_eq!(store.posterior(&ctx, 0), Beta::uniform());
    store.observe(&ctx, true, 0);
    assert_eq!(store.posterior(&ctx, 0), Beta::new(2.0, 1.0).unwrap());
}
