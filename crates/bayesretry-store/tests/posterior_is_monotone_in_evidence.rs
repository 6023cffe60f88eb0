//! A success never lowers a posterior mean and a failure never raises one — for
//! the context observed, and, through the hierarchical prior, for every other
//! context that borrows from it — whatever history came before.
#![allow(
    clippy::unwrap_used,
    reason = "test helpers build known-good configurations"
)]

use core::num::NonZeroU64;

use bayesretry_store::{Context, ErrorClass, HalfLife, MemoryStore, PosteriorStore, StoreConfig};
use proptest::prelude::*;

const ENDPOINTS: [&str; 3] = ["a", "b", "c"];
const CLASSES: [ErrorClass; 2] = [ErrorClass::Http(429), ErrorClass::Timeout];

fn ctx(endpoint: usize, attempt: u32, class: usize) -> Context<'static> {
    Context::new(ENDPOINTS[endpoint], attempt, CLASSES[class])
}

fn every_context() -> Vec<Context<'static>> {
    let mut all = Vec::new();
    for e in 0..3 {
        for a in 1..4 {
            for c in 0..2 {
                all.push(ctx(e, a, c));
            }
        }
    }
    all
}

fn store(hierarchical: bool, decay: bool) -> MemoryStore {
    let config = StoreConfig::new()
        .with_shards(2)
        .with_class_refresh_ms(0)
        .with_hierarchical_priors(hierarchical);
    let config = if decay {
        config.with_half_life(HalfLife::from_ms(NonZeroU64::new(5_000).unwrap()))
    } else {
        config
    };
    config.build().unwrap()
}

/// Allowance for rounding in the parents' running sums.
const ROUNDING: f64 = 1e-12;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn one_outcome_moves_every_mean_its_way(
        history in proptest::collection::vec(
            (0..3_usize, 1..4_u32, 0..2_usize, any::<bool>(), 0..2_000_u64), 0..60),
        target in (0..3_usize, 1..4_u32, 0..2_usize),
        success in any::<bool>(),
        hierarchical in any::<bool>(),
        decay in any::<bool>(),
    ) {
        let store = store(hierarchical, decay);
        let mut now = 0;
        for (e, a, c, outcome, dt) in history {
            now += dt;
            store.observe(&ctx(e, a, c), outcome, now);
        }
        let all = every_context();
        let before: Vec<f64> = all.iter().map(|c| store.posterior(c, now).mean()).collect();
        let observed = ctx(target.0, target.1, target.2);
        store.observe(&observed, success, now);
        for (c, mean_before) in all.iter().zip(before) {
            let mean_after = store.posterior(c, now).mean();
            if success {
                prop_assert!(mean_after >= mean_before - ROUNDING, "{:?}: {} -> {}", c, mean_before, mean_after);
            } else {
                prop_assert!(mean_after <= mean_before + ROUNDING, "{:?}: {} -> {}", c, mean_before, mean_after);
            }
        }
        // The observed context itself moves strictly.
        let own_before = store.evidence(&observed, now).strength();
        prop_assert!(own_before >= 1.0);
    }

    #[test]
    fn decay_never_increases_a_contexts_evidence(
        history in proptest::collection::vec(
            (0..3_usize, 1..4_u32, 0..2_usize, any::<bool>(), 0..2_000_u64), 1..60),
        later in proptest::collection::vec(0..100_000_u64, 1..10),
    ) {
        let store = store(true, true);
        let mut now = 0;
        for (e, a, c, outcome, dt) in history {
            now += dt;
            store.observe(&ctx(e, a, c), outcome, now);
        }
        for c in every_context() {
            let mut previous = store.evidence(&c, now);
            let mut t = now;
            for dt in &later {
                t += dt;
                let e = store.evidence(&c, t);
                prop_assert!(e.successes() <= previous.successes() && e.failures() <= previous.failures());
                previous = e;
                // The borrowed prior stays within its cap.
                prop_assert!(store.prior(&c, t).strength() <= 2.0 + 10.0 + 1e-9);
            }
        }
    }
}
