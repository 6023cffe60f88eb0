//! Over random histories, every posterior the store returns equals, bit for
//! bit, what a straightforward model computes: one map per level (context,
//! endpoint and class, class), each sum folded with the same decay as the
//! outcomes arrive, and the hierarchical prior taken from the three sums at
//! read time. Endpoint names come in lengths on both sides of every width the
//! store compares names at, and in pairs that differ in one byte only.

#![allow(clippy::unwrap_used, reason = "test inputs are valid by construction")]

use core::num::NonZeroU64;
use std::collections::HashMap;

use bayesretry_decay::{Decay, Stamped};
use bayesretry_store::{
    Beta, Context, ErrorClass, Evidence, HalfLife, MemoryStore, PosteriorStore, StoreConfig,
    borrowed_evidence,
};
use proptest::prelude::*;

const NAMES: [&str; 12] = [
    "",
    "abc",
    "abcdefgh",
    "abcdefgi",
    "api.example",
    "0123456789abcdef",
    "0123456789abcdeg",
    "0123456789abcdef0",
    "1123456789abcdef0",
    "api-042.example.com/v1/chat",
    "api-042.example.com/v1/chas",
    "api-042.example.com/v1/chat/completions",
];

const CLASSES: [ErrorClass; 5] = [
    ErrorClass::Http(429),
    ErrorClass::Http(503),
    ErrorClass::Timeout,
    ErrorClass::Custom("quota"),
    ErrorClass::Custom("quotb"),
];

/// The model: every level's evidence, folded as outcomes arrive.
#[derive(Default)]
struct Model {
    contexts: HashMap<(usize, u32, usize), Stamped>,
    groups: HashMap<(usize, usize), Stamped>,
    classes: HashMap<usize, Stamped>,
}

impl Model {
    fn observe(&mut self, decay: &Decay, key: (usize, u32, usize), success: bool, now: u64) {
        let e = Evidence::outcome(success);
        let fold = |s: &mut Stamped| *s = decay.fold(*s, now, e);
        fold(self.contexts.entry(key).or_default());
        fold(self.groups.entry((key.0, key.2)).or_default());
        fold(self.classes.entry(key.2).or_default());
    }

    fn posterior(&self, decay: &Decay, key: (usize, u32, usize), now: u64, hier: bool) -> Beta {
        let at = |s: Option<&Stamped>| s.map_or(Evidence::NONE, |s| decay.evidence_at(*s, now));
        let own = at(self.contexts.get(&key));
        let lent = if hier {
            let group = at(self.groups.get(&(key.0, key.2)));
            let class = at(self.classes.get(&key.2));
            borrowed_evidence(own, group, class, 10.0)
        } else {
            Evidence::NONE
        };
        lent.plus(own).posterior(Beta::uniform())
    }
}

fn store(half_life: HalfLife, hier: bool) -> MemoryStore {
    StoreConfig::new()
        .with_half_life(half_life)
        .with_hierarchical_priors(hier)
        .with_shards(1)
        .with_class_refresh_ms(0)
        .with_hash_seed(11)
        .build()
        .unwrap()
}

proptest! {
    #[test]
    fn every_read_equals_the_model(
        decays in any::<bool>(),
        hier in any::<bool>(),
        steps in proptest::collection::vec(
            (0..NAMES.len(), 1_u32..4, 0..CLASSES.len(), any::<bool>(), any::<bool>(), 0_u64..3_000),
            1..200,
        ),
    ) {
        let half_life = if decays {
            HalfLife::from_ms(NonZeroU64::new(5_000).unwrap())
        } else {
            HalfLife::NEVER
        };
        let decay = Decay::new(half_life);
        let store = store(half_life, hier);
        let mut model = Model::default();
        let mut now = 0;
        for (name, attempt, class, observe, success, dt) in steps {
            now += dt;
            let key = (name, attempt, class);
            let ctx = Context::new(NAMES[name], attempt, CLASSES[class]);
            if observe {
                store.observe(&ctx, success, now);
                model.observe(&decay, key, success, now);
            }
            let got = store.posterior(&ctx, now);
            let want = model.posterior(&decay, key, now, hier);
            prop_assert_eq!(got.alpha().to_bits(), want.alpha().to_bits(), "{:?}", key);
            prop_assert_eq!(got.beta().to_bits(), want.beta().to_bits(), "{:?}", key);
            // A context never observed reads its borrowed prior too.
            let later = ctx.with_attempt(attempt + 10);
            let got = store.posterior(&later, now);
            let want = model.posterior(&decay, (name, attempt + 10, class), now, hier);
            prop_assert_eq!(got.alpha().to_bits(), want.alpha().to_bits());
            prop_assert_eq!(got.beta().to_bits(), want.beta().to_bits());
        }
        prop_assert_eq!(store.len(), model.contexts.len());
    }
}

proptest! {
    /// A caller that writes every endpoint name into one reused buffer passes
    /// names of equal length at the same address: the store must not take one
    /// for another. Two stores, sharded, with the same seed and history, one
    /// given names from the buffer and one given them from constants, hold the
    /// same contexts and return the same posteriors, bit for bit.
    #[test]
    fn a_reused_name_buffer_reads_what_distinct_names_do(
        steps in proptest::collection::vec(
            (0..NAMES.len(), 1_u32..4, 0..CLASSES.len(), any::<bool>(), any::<bool>()),
            1..200,
        ),
    ) {
        let sharded = || {
            StoreConfig::new()
                .with_shards(8)
                .with_hash_seed(5)
                .build()
                .unwrap()
        };
        // One store after the other: each thread remembers the last name it
        // hashed, and the buffer's calls must follow each other to meet it.
        let mut buffer = String::with_capacity(64);
        let reused = sharded();
        let mut seen = Vec::new();
        for (now, &(name, attempt, class, observe, success)) in (0_u64..).zip(&steps) {
            buffer.clear();
            buffer.push_str(NAMES[name]);
            let ctx = Context::new(&buffer, attempt, CLASSES[class]);
            if observe {
                reused.observe(&ctx, success, now);
            }
            let p = reused.posterior(&ctx, now);
            seen.push((p.alpha().to_bits(), p.beta().to_bits(), reused.len()));
        }
        let distinct = sharded();
        for (now, (&(name, attempt, class, observe, success), &seen)) in
            (0_u64..).zip(steps.iter().zip(&seen))
        {
            let ctx = Context::new(NAMES[name], attempt, CLASSES[class]);
            if observe {
                distinct.observe(&ctx, success, now);
            }
            let p = distinct.posterior(&ctx, now);
            prop_assert_eq!((p.alpha().to_bits(), p.beta().to_bits(), distinct.len()), seen);
        }
    }
}
