//! `observe_weighted` folds fractional evidence in and ignores any count that
//! is negative, NaN or infinite — the other count still counts — so no input
//! can make a posterior invalid.
#![allow(clippy::unwrap_used, reason = "the expected posteriors are known-good")]

use bayesretry_store::{Beta, Context, ErrorClass, MemoryStore, PosteriorStore};

const CTX: Context<'static> = Context::new("batch", 1, ErrorClass::Http(503));

#[test]
fn fractional_evidence_adds_up() {
    let store = MemoryStore::new();
    store.observe_weighted(&CTX, 2.5, 0.5, 0);
    assert_eq!(store.posterior(&CTX, 0), Beta::new(3.5, 1.5).unwrap());
}

#[test]
fn bad_counts_are_ignored_one_by_one() {
    let store = MemoryStore::new();
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0] {
        store.observe_weighted(&CTX, bad, 1.0, 0);
        store.observe_weighted(&CTX, 1.0, bad, 0);
        store.observe_weighted(&CTX, bad, bad, 0);
    }
    let e = store.evidence(&CTX, 0);
    assert_eq!((e.successes(), e.failures()), (4.0, 4.0));
    let posterior = store.posterior(&CTX, 0);
    assert!(posterior.alpha().is_finite() && posterior.beta().is_finite());
}

#[test]
fn all_bad_or_zero_evidence_creates_no_context() {
    let store = MemoryStore::new();
    store.observe_weighted(&CTX, f64::NAN, -2.0, 0);
    store.observe_weighted(&CTX, 0.0, 0.0, 0);
    assert!(store.is_empty());
}

#[test]
fn huge_evidence_saturates() {
    let store = MemoryStore::new();
    store.observe_weighted(&CTX, f64::MAX, 0.0, 0);
    store.observe_weighted(&CTX, f64::MAX, 0.0, 0);
    let posterior = store.posterior(&CTX, 0);
    assert_eq!(posterior.alpha(), f64::MAX);
    assert!(posterior.mean() > 0.99);
}
