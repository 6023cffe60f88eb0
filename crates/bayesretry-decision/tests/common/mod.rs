//! A tiny in-test posterior store: one fixed posterior per attempt number, and a
//! count of the lookups made; and the engine most tests decide with.

#![allow(
    dead_code,
    reason = "each test file uses a different part of this module"
)]
#![allow(
    clippy::unwrap_used,
    reason = "test support: the posteriors are built from valid, fixed figures"
)]

use core::sync::atomic::{AtomicUsize, Ordering};

use bayesretry_beta::Beta;
use bayesretry_cost::CostModel;
use bayesretry_decision::{Config, DecisionEngine, Strategy};
use bayesretry_store::{Context, PosteriorStore};

/// An engine with `strategy` for V = 10, c = 1: a retry pays when q > 0.1.
pub(crate) fn engine(strategy: Strategy) -> DecisionEngine {
    Config::new(CostModel::new(10.0, 1.0).unwrap())
        .with_strategy(strategy)
        .build()
        .unwrap()
}

/// `posteriors[k]` is the posterior of every context whose attempt is `k` (the
/// belief that attempt `k + 1` succeeds after attempt `k` failed); attempts past
/// the end get the last one. Observations are ignored: the beliefs are fixed.
#[derive(Debug)]
pub(crate) struct TableStore {
    posteriors: Vec<Beta>,
    lookups: AtomicUsize,
}

impl TableStore {
    /// A store with the given posteriors, indexed by attempt number (index 0 is
    /// the context of attempt 0, which no call reaches; give it anything).
    pub(crate) fn new(posteriors: Vec<Beta>) -> TableStore {
        assert!(!posteriors.is_empty());
        TableStore {
            posteriors,
            lookups: AtomicUsize::new(0),
        }
    }

    /// One posterior for every attempt.
    pub(crate) fn uniform_over_attempts(posterior: Beta) -> TableStore {
        TableStore::new(vec![posterior])
    }

    /// A store whose posterior at attempt `k` has mean `means[k]` and strength 20.
    pub(crate) fn with_means(means: &[f64]) -> TableStore {
        TableStore::new(means.iter().map(|&m| mean_beta(m)).collect())
    }

    /// How many posteriors have been read.
    pub(crate) fn lookups(&self) -> usize {
        self.lookups.load(Ordering::Relaxed)
    }
}

/// Beta with mean `m` and strength 20.
pub(crate) fn mean_beta(m: f64) -> Beta {
    Beta::new(20.0 * m, 20.0 * (1.0 - m)).unwrap()
}

impl PosteriorStore for TableStore {
    fn posterior(&self, ctx: &Context<'_>, _now_ms: u64) -> Beta {
        self.lookups.fetch_add(1, Ordering::Relaxed);
        let index = (ctx.attempt() as usize).min(self.posteriors.len() - 1);
        self.posteriors[index]
    }

    fn observe(&self, _ctx: &Context<'_>, _success: bool, _now_ms: u64) {}

    fn observe_weighted(&self, _ctx: &Context<'_>, _s: f64, _f: f64, _now_ms: u64) {}
}
