//! A fixed-size posterior store with no allocation: one pair of atomic counters per
//! (attempt, error class) of a single endpoint.

use core::sync::atomic::{AtomicU32, Ordering};

use bayesretry::beta::Beta;
use bayesretry::store::{Context, ErrorClass, PosteriorStore};

/// Attempts 1 to `ATTEMPTS` have a row each; later attempts share the last row.
const ATTEMPTS: usize = 4;
/// Error classes with a column: 429, 500, 503, anything else.
const CLASSES: usize = 4;
const SLOTS: usize = ATTEMPTS * CLASSES;

/// Success and failure counts for every slot, over the uniform prior Beta(1, 1).
#[derive(Debug)]
pub(crate) struct TableStore {
    successes: [AtomicU32; SLOTS],
    failures: [AtomicU32; SLOTS],
}

impl TableStore {
    pub(crate) const fn new() -> TableStore {
        TableStore {
            successes: [const { AtomicU32::new(0) }; SLOTS],
            failures: [const { AtomicU32::new(0) }; SLOTS],
        }
    }

    pub(crate) fn clear(&self) {
        for counter in self.successes.iter().chain(self.failures.iter()) {
            counter.store(0, Ordering::Relaxed);
        }
    }

    fn slot(ctx: &Context<'_>) -> usize {
        let attempt = (ctx.attempt().clamp(1, ATTEMPTS as u32) - 1) as usize;
        let class = match ctx.error_class() {
            ErrorClass::Http(429) => 0,
            ErrorClass::Http(500) => 1,
            ErrorClass::Http(503) => 2,
            _ => 3,
        };
        attempt * CLASSES + class
    }
}

impl PosteriorStore for TableStore {
    fn posterior(&self, ctx: &Context<'_>, _now_ms: u64) -> Beta {
        let slot = Self::slot(ctx);
        let successes = self
            .successes
            .get(slot)
            .map_or(0, |c| c.load(Ordering::Relaxed));
        let failures = self
            .failures
            .get(slot)
            .map_or(0, |c| c.load(Ordering::Relaxed));
        Beta::new(1.0 + f64::from(successes), 1.0 + f64::from(failures))
            .unwrap_or_else(|_| Beta::uniform())
    }

    fn observe(&self, ctx: &Context<'_>, success: bool, _now_ms: u64) {
        let counters = if success {
            &self.successes
        } else {
            &self.failures
        };
        add(counters.get(Self::slot(ctx)), 1);
    }

    fn observe_weighted(&self, ctx: &Context<'_>, successes: f64, failures: f64, _now_ms: u64) {
        // The table counts whole outcomes: fractions are dropped, NaN and negatives
        // count as none (an `as` cast from f64 saturates and maps NaN to 0).
        let slot = Self::slot(ctx);
        add(self.successes.get(slot), successes as u32);
        add(self.failures.get(slot), failures as u32);
    }
}

/// Adds `n` to a counter, saturating at `u32::MAX`.
fn add(counter: Option<&AtomicU32>, n: u32) {
    if let Some(counter) = counter {
        let _ = counter.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
            Some(c.saturating_add(n))
        });
    }
}
