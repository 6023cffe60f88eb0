//! The merge laws, over snapshots of random histories written by several
//! writers (each writer snapshotted at several moments): merging is
//! commutative, associative and idempotent, for snapshots and for stores.
#![cfg(feature = "serde")]
#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

use core::num::NonZeroU64;

use bayesretry_store::{
    Context, ErrorClass, HalfLife, MemoryStore, PosteriorStore, Snapshot, StoreConfig, WriterId,
};
use proptest::prelude::*;

const ENDPOINTS: [&str; 3] = ["a", "b", "c"];
const CLASSES: [ErrorClass; 3] = [
    ErrorClass::Http(429),
    ErrorClass::Timeout,
    ErrorClass::Custom("quota"),
];

#[derive(Clone, Debug)]
struct Op {
    endpoint: usize,
    attempt: u32,
    class: usize,
    success: bool,
    dt: u64,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    let op = (
        0..3_usize,
        1..4_u32,
        0..3_usize,
        any::<bool>(),
        0..5_000_u64,
    )
        .prop_map(|(endpoint, attempt, class, success, dt)| Op {
            endpoint,
            attempt,
            class,
            success,
            dt,
        });
    proptest::collection::vec(op, 0..40)
}

/// Four shards; the class level is refreshed on every read, so that stores
/// that merged in different orders are compared on exact sums rather than on
/// views of other shards refreshed at different moments.
fn store(writer: u64, decay: bool) -> MemoryStore {
    let config = StoreConfig::new()
        .with_writer(WriterId::new(writer))
        .with_shards(4)
        .with_class_refresh_ms(0);
    let config = if decay {
        config.with_half_life(HalfLife::from_ms(NonZeroU64::new(10_000).unwrap()))
    } else {
        config
    };
    config.build().unwrap()
}

/// A writer's history, snapshotted halfway and at the end.
fn snapshots(writer: u64, decay: bool, ops: &[Op]) -> (Snapshot, Snapshot) {
    let store = store(writer, decay);
    let mut now = 0;
    let mut halfway = Snapshot::new();
    for (i, op) in ops.iter().enumerate() {
        now += op.dt;
        let ctx = Context::new(ENDPOINTS[op.endpoint], op.attempt, CLASSES[op.class]);
        store.observe(&ctx, op.success, now);
        if i == ops.len() / 2 {
            halfway = store.snapshot(now);
        }
    }
    (halfway, store.snapshot(now))
}

fn contexts() -> impl Iterator<Item = Context<'static>> {
    ENDPOINTS.into_iter().flat_map(|e| {
        (1..5).flat_map(move |a| CLASSES.into_iter().map(move |c| Context::new(e, a, c)))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn snapshot_merge_is_a_join(
        a in ops(), b in ops(), c in ops(), decay in any::<bool>(),
    ) {
        let (a1, a2) = snapshots(1, decay, &a);
        let (b1, b2) = snapshots(2, decay, &b);
        let (_, c2) = snapshots(3, decay, &c);
        // Commutative.
        prop_assert_eq!(a2.clone().merged(&b2), b2.clone().merged(&a2));
        prop_assert_eq!(a1.clone().merged(&b2), b2.clone().merged(&a1));
        // Associative.
        prop_assert_eq!(
            a2.clone().merged(&b1).merged(&c2),
            a2.clone().merged(&b1.clone().merged(&c2))
        );
        // Idempotent.
        prop_assert_eq!(a2.clone().merged(&a2), a2.clone());
        let ab = a2.clone().merged(&b2);
        prop_assert_eq!(ab.clone().merged(&ab), ab.clone());
        // A writer's later snapshot supersedes its earlier one.
        prop_assert_eq!(a1.clone().merged(&a2), a2.clone());
    }

    #[test]
    fn stores_that_merged_the_same_snapshots_agree(
        a in ops(), b in ops(), c in ops(), decay in any::<bool>(),
    ) {
        let (a1, a2) = snapshots(1, decay, &a);
        let (_, b2) = snapshots(2, decay, &b);
        let (_, c2) = snapshots(3, decay, &c);
        let x = store(9, decay);
        for s in [&a1, &b2, &a2, &c2] {
            x.merge(s);
        }
        let y = store(9, decay);
        for s in [&c2, &a2, &b2, &a2, &c2, &a1, &b2] {
            y.merge(s);
        }
        let now = [&a2, &b2, &c2].iter().map(|s| s.taken_at_ms()).max().unwrap_or(0);
        prop_assert_eq!(x.snapshot(now), y.snapshot(now));
        prop_assert_eq!(
            x.snapshot(now),
            a2.clone().merged(&b2).merged(&c2)
        );
        for ctx in contexts() {
            // A context's own evidence is summed in writer order: exact.
            prop_assert_eq!(x.evidence(&ctx, now + 1_000), y.evidence(&ctx, now + 1_000));
            // Parent sums were adjusted in different orders: equal to rounding.
            let (px, py) = (x.posterior(&ctx, now + 1_000), y.posterior(&ctx, now + 1_000));
            prop_assert!((px.alpha() - py.alpha()).abs() <= 1e-9 * px.alpha(), "{} {}", px, py);
            prop_assert!((px.beta() - py.beta()).abs() <= 1e-9 * px.beta(), "{} {}", px, py);
        }
    }
}
