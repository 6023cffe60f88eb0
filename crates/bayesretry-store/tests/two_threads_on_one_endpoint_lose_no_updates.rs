//! Threads hammering one shared context (and so one shard) lose no update: the
//! final counts are exact.

extern crate alloc;

use alloc::sync::Arc;
use std::sync::Barrier;
use std::thread;

use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore, StoreConfig};

const PER_THREAD: u32 = 50_000;

#[test]
fn two_threads_on_one_endpoint_lose_no_updates() {
    let store = StoreConfig::new()
        .with_hierarchical_priors(false)
        .build()
        .unwrap();
    let ctx = Context::new("shared", 1, ErrorClass::Http(503));
    let barrier = Barrier::new(2);
    thread::scope(|s| {
        for t in 0..2_u32 {
            let (store, barrier) = (&store, &barrier);
            s.spawn(move || {
                barrier.wait();
                for i in 0..PER_THREAD {
                    // Thread 0 records successes, thread 1 failures; both also
                    // read, and touch other attempts of the same endpoint.
                    store.observe(&ctx, t == 0, u64::from(i));
                    let _ = store.posterior(&ctx, u64::from(i));
                    store.observe(&ctx.with_attempt(2 + i % 3), t == 0, u64::from(i));
                }
            });
        }
    });
    let posterior = store.posterior(&ctx, u64::from(PER_THREAD));
    assert_eq!(posterior.alpha(), 1.0 + f64::from(PER_THREAD));
    assert_eq!(posterior.beta(), 1.0 + f64::from(PER_THREAD));
    assert_eq!(store.len(), 4);
}

#[test]
fn weighted_updates_from_many_threads_add_up_exactly() {
    let store = MemoryStore::new();
    let ctx = Context::new("batch", 2, ErrorClass::Timeout);
    thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..10_000 {
                    // 0.5 and 0.25 are exact in binary: no rounding to blame.
                    store.observe_weighted(&ctx, 0.5, 0.25, 0);
                }
            });
        }
    });
    let e = store.evidence(&ctx, 0);
    assert_eq!((e.successes(), e.failures()), (20_000.0, 10_000.0));
}

#[test]
fn the_store_is_send_and_sync_and_shareable() {
    fn shared<T: PosteriorStore + Send + Sync>(_: &T) {}
    let store = Arc::new(MemoryStore::new());
    shared(&store);
    shared(&&*store);
    let boxed: Box<dyn PosteriorStore> = Box::new(MemoryStore::new());
    shared(&boxed);
    let ctx = Context::new("a", 1, ErrorClass::Timeout);
    boxed.observe(&ctx, true, 0);
    assert_eq!(boxed.posterior(&ctx, 0).alpha(), 2.0);
}
