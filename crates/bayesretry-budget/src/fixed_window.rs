//! The fixed-window cost cap: at most `max_cost_per_window` of retry cost in each
//! window of `window_ms`.
//!
//! # State
//!
//! The whole state is one 64-bit word: the low 32 bits of the window index in the
//! high half, a "used" flag in bit 31, the cost spent so far in bits 0..31. A spend is
//! one compare-and-swap of that word, so the check against the cap and the update
//! cannot be separated by another thread: the cap holds exactly under any
//! interleaving.
//!
//! A window index is `now_ms / window_ms`. A caller whose window is newer than the
//! stored one starts it afresh; a caller a little *behind* (its `now_ms` was read
//! just before another thread's) is charged to the newer window, which only ever
//! makes the budget stricter. Only the low 32 bits of the index are stored, so a
//! budget left idle for exactly a multiple of 2³² windows (136 years of one-second
//! windows) may count a stale window's spending once: again the strict direction.

use core::cell::Cell;
#[cfg(feature = "std")]
use core::sync::atomic::AtomicU64;

use crate::denied::Denied;
use crate::error::Error;
use crate::word::{MAX_CAS_ATTEMPTS, Word};

/// Set in every word written by a spend; a zero word is a budget never used.
const USED: u64 = 1 << 31;
/// The bits holding the cost spent in the stored window.
const SPENT: u64 = USED - 1;
/// How many windows a caller may lag behind the stored window and still be charged
/// to it. Further behind is read as the index having wrapped: a new window.
const MAX_LAG_WINDOWS: u32 = 1 << 16;

/// The configuration of a fixed-window cost cap: a [`Clone`] value built with
/// `with_*` setters and checked by [`build`](FixedWindowConfig::build).
///
/// # Default
///
/// - `max_cost_per_window`: 100
/// - `window_ms`: 60 000 (one minute)
///
/// ```
/// use bayesretry_budget::{Error, FixedWindowConfig};
/// let rules = FixedWindowConfig::new()
///     .with_max_cost_per_window(50)
///     .with_window_ms(1_000)
///     .build()
///     .unwrap();
/// assert_eq!(rules.max_cost_per_window(), 50);
/// assert_eq!(
///     FixedWindowConfig::new().with_window_ms(0).build(),
///     Err(Error::InvalidWindow(0))
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedWindowConfig {
    max_cost_per_window: u32,
    window_ms: u64,
}

impl FixedWindowConfig {
    /// The largest `max_cost_per_window`: the spent cost is packed in 31 bits.
    pub const MAX_COST: u32 = (1 << 31) - 1;

    /// The defaults listed above.
    pub const fn new() -> FixedWindowConfig {
        FixedWindowConfig {
            max_cost_per_window: 100,
            window_ms: 60_000,
        }
    }

    /// The most retry cost granted in one window, in the caller's units (retries,
    /// tokens, cents): each [`try_spend`](crate::Budget::try_spend) states its cost.
    /// Between 1 and [`MAX_COST`](Self::MAX_COST).
    pub const fn with_max_cost_per_window(self, max_cost_per_window: u32) -> Self {
        FixedWindowConfig {
            max_cost_per_window,
            ..self
        }
    }

    /// The window length in milliseconds, at least 1. Windows are aligned to
    /// multiples of it on the caller's clock: `[k·window_ms, (k + 1)·window_ms)`.
    pub const fn with_window_ms(self, window_ms: u64) -> Self {
        FixedWindowConfig { window_ms, ..self }
    }

    /// Checks the configuration and returns the rules the budgets run on.
    pub const fn build(self) -> Result<FixedWindow, Error> {
        if self.max_cost_per_window == 0 || self.max_cost_per_window > Self::MAX_COST {
            return Err(Error::InvalidMaxCost(self.max_cost_per_window));
        }
        if self.window_ms == 0 {
            return Err(Error::InvalidWindow(self.window_ms));
        }
        Ok(FixedWindow {
            max_cost_per_window: self.max_cost_per_window,
            window_ms: self.window_ms,
        })
    }
}

impl Default for FixedWindowConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// The checked rules of a fixed-window cost cap, from [`FixedWindowConfig::build`]:
/// `Copy`, and shared by the state that follows them ([`FixedWindowLedger`], and
/// with `std` `FixedWindowBudget`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FixedWindow {
    max_cost_per_window: u32,
    window_ms: u64,
}

impl FixedWindow {
    /// The most retry cost granted in one window.
    pub const fn max_cost_per_window(&self) -> u32 {
        self.max_cost_per_window
    }

    /// The window length in milliseconds.
    pub const fn window_ms(&self) -> u64 {
        self.window_ms
    }

    /// When the window holding `now_ms` ends (and the next begins).
    pub const fn window_end_ms(&self, now_ms: u64) -> u64 {
        (now_ms / self.window_ms)
            .saturating_add(1)
            .saturating_mul(self.window_ms)
    }

    fn try_spend_in<W: Word>(&self, word: &W, now_ms: u64, cost: u32) -> Result<(), Denied> {
        if cost == 0 {
            return Ok(());
        }
        if cost > self.max_cost_per_window {
            return Err(Denied::oversized());
        }
        let index = now_ms / self.window_ms;
        let mut current = word.get();
        for _ in 0..MAX_CAS_ATTEMPTS {
            let (window, spent) = resolve(current, index);
            let total = spent + u64::from(cost);
            if total > u64::from(self.max_cost_per_window) {
                let end = window.saturating_add(1).saturating_mul(self.window_ms);
                return Err(Denied::exhausted(end));
            }
            match word.replace(current, pack(window, total)) {
                Ok(()) => return Ok(()),
                Err(seen) => current = seen,
            }
        }
        Err(Denied::contended())
    }

    /// Takes `cost` back from the window holding `spent_at_ms`, if that window is
    /// still the stored one. A spend charged to a newer window (its caller's clock
    /// lagged) is not found there and stays spent: the strict side. Contended past
    /// the cap, the refund is dropped, the strict side again.
    fn refund_in<W: Word>(&self, word: &W, spent_at_ms: u64, cost: u32) {
        let index = spent_at_ms / self.window_ms;
        let mut current = word.get();
        for _ in 0..MAX_CAS_ATTEMPTS {
            if current & USED == 0 || (current >> 32) as u32 != index as u32 {
                return;
            }
            let spent = (current & SPENT).saturating_sub(u64::from(cost));
            match word.replace(current, pack(index, spent)) {
                Ok(()) => return,
                Err(seen) => current = seen,
            }
        }
    }

    fn remaining_in<W: Word>(&self, word: &W, now_ms: u64) -> u32 {
        let (_, spent) = resolve(word.get(), now_ms / self.window_ms);
        let spent = u32::try_from(spent).unwrap_or(u32::MAX);
        self.max_cost_per_window.saturating_sub(spent)
    }
}

/// The word for `window` (full index, truncated here) with `spent` cost.
#[inline]
fn pack(window: u64, spent: u64) -> u64 {
    (window << 32) | USED | (spent & SPENT)
}

/// The window a caller at window `index` is charged to, and what that window has
/// spent, given the stored `word`.
#[inline]
fn resolve(word: u64, index: u64) -> (u64, u64) {
    if word & USED == 0 {
        return (index, 0);
    }
    let stored = (word >> 32) as u32;
    let behind = stored.wrapping_sub(index as u32);
    if behind == 0 {
        (index, word & SPENT)
    } else if behind <= MAX_LAG_WINDOWS {
        // The caller read its clock before another thread moved the window on.
        (index.wrapping_add(u64::from(behind)), word & SPENT)
    } else {
        // The caller is past the stored window (or the index wrapped): a new window.
        (index, 0)
    }
}

/// A fixed-window cost cap owned by one caller: `&mut self`, no atomics, for
/// single-threaded and `no_std` use. `FixedWindowBudget` is the shared form.
///
/// ```
/// use bayesretry_budget::{FixedWindowConfig, FixedWindowLedger, Reason};
/// let rules = FixedWindowConfig::new()
///     .with_max_cost_per_window(3)
///     .with_window_ms(1_000)
///     .build()
///     .unwrap();
/// let mut ledger = FixedWindowLedger::new(rules);
/// assert!(ledger.try_spend(10, 2).is_ok());
/// let denied = ledger.try_spend(20, 2).unwrap_err();
/// assert_eq!(denied.reason(), Reason::Exhausted);
/// assert_eq!(denied.retry_at_ms(), Some(1_000));
/// assert!(ledger.try_spend(1_000, 3).is_ok()); // a new window
/// ```
#[derive(Debug, Clone)]
pub struct FixedWindowLedger {
    rules: FixedWindow,
    word: Cell<u64>,
}

impl FixedWindowLedger {
    /// A ledger with nothing spent.
    pub const fn new(rules: FixedWindow) -> FixedWindowLedger {
        FixedWindowLedger {
            rules,
            word: Cell::new(0),
        }
    }

    /// The rules this ledger follows.
    pub const fn rules(&self) -> &FixedWindow {
        &self.rules
    }

    /// Spends `cost` at `now_ms` if the window has room; see [`crate::Budget::try_spend`].
    pub fn try_spend(&mut self, now_ms: u64, cost: u32) -> Result<(), Denied> {
        self.rules.try_spend_in(&self.word, now_ms, cost)
    }

    /// Gives back `cost` of a spend granted at `spent_at_ms` whose retry was not
    /// made; see [`crate::Budget::refund`]. Nothing is given back once the window
    /// has rolled on.
    pub fn refund(&mut self, spent_at_ms: u64, cost: u32) {
        self.rules.refund_in(&self.word, spent_at_ms, cost);
    }

    /// The cost still available in the window holding `now_ms`.
    pub fn remaining(&self, now_ms: u64) -> u32 {
        self.rules.remaining_in(&self.word, now_ms)
    }
}

/// A fixed-window cost cap shared by every thread: `&self`, `Send + Sync`, one
/// `AtomicU64`, lock-free.
///
/// Each spend is a single compare-and-swap of the window's packed state, so no
/// interleaving of threads can grant more than `max_cost_per_window` in a window.
/// First attempts do not matter to it: [`deposit`](crate::Budget::deposit) is a
/// no-op.
///
/// ```
/// use bayesretry_budget::{Budget, FixedWindowBudget, FixedWindowConfig};
/// let budget = FixedWindowBudget::new(
///     FixedWindowConfig::new().with_max_cost_per_window(10).build().unwrap(),
/// );
/// std::thread::scope(|s| {
///     for _ in 0..2 {
///         s.spawn(|| for _ in 0..10 { let _ = budget.try_spend(5, 1); });
///     }
/// });
/// assert_eq!(budget.remaining(5), 0); // 20 tries, exactly 10 granted
/// ```
#[cfg(feature = "std")]
#[derive(Debug)]
pub struct FixedWindowBudget {
    rules: FixedWindow,
    word: AtomicU64,
}

#[cfg(feature = "std")]
impl FixedWindowBudget {
    /// A budget with nothing spent.
    pub const fn new(rules: FixedWindow) -> FixedWindowBudget {
        FixedWindowBudget {
            rules,
            word: AtomicU64::new(0),
        }
    }

    /// The rules this budget follows.
    pub const fn rules(&self) -> &FixedWindow {
        &self.rules
    }

    /// Spends `cost` at `now_ms` if the window has room; see [`crate::Budget::try_spend`].
    #[inline]
    pub fn try_spend(&self, now_ms: u64, cost: u32) -> Result<(), Denied> {
        self.rules.try_spend_in(&self.word, now_ms, cost)
    }

    /// Gives back `cost` of a spend granted at `spent_at_ms` whose retry was not
    /// made; see [`crate::Budget::refund`]. Nothing is given back once the window
    /// has rolled on.
    #[inline]
    pub fn refund(&self, spent_at_ms: u64, cost: u32) {
        self.rules.refund_in(&self.word, spent_at_ms, cost);
    }

    /// The cost still available in the window holding `now_ms` (a snapshot: other
    /// threads may spend it the next moment).
    pub fn remaining(&self, now_ms: u64) -> u32 {
        self.rules.remaining_in(&self.word, now_ms)
    }
}

#[cfg(feature = "std")]
impl crate::Budget for FixedWindowBudget {
    #[inline]
    fn try_spend(&self, now_ms: u64, cost: u32) -> Result<(), Denied> {
        FixedWindowBudget::try_spend(self, now_ms, cost)
    }

    #[inline]
    fn deposit(&self, _now_ms: u64) {}

    #[inline]
    fn refund(&self, spent_at_ms: u64, cost: u32) {
        FixedWindowBudget::refund(self, spent_at_ms, cost);
    }
}

#[cfg(test)]
mod tests {
    use super::{MAX_LAG_WINDOWS, SPENT, USED, pack, resolve};

    #[test]
    fn a_fresh_word_is_an_empty_window() {
        assert_eq!(resolve(0, 7), (7, 0));
    }

    #[test]
    fn a_late_caller_is_charged_to_the_newer_window() {
        let word = pack(100_000, 4);
        assert_eq!(resolve(word, 100_000), (100_000, 4));
        assert_eq!(resolve(word, 99_999), (100_000, 4));
        assert_eq!(resolve(word, 100_001), (100_001, 0));
        let far = 100_000 - u64::from(MAX_LAG_WINDOWS) - 1;
        assert_eq!(resolve(word, far), (far, 0));
    }

    #[test]
    fn the_window_index_wraps_at_32_bits() {
        let word = pack(u64::from(u32::MAX), 3);
        assert_eq!(resolve(word, 1 << 32), (1 << 32, 0));
        assert_eq!(word & USED, USED);
        assert_eq!(word & SPENT, 3);
    }
}
