//! One 64-bit word of budget state, read and compare-and-swapped.
//!
//! The shared budgets keep their state in `AtomicU64`s and the single-owner ledgers in
//! `Cell<u64>`s; both run the same accounting code through this trait, so the `no_std`
//! ledger and the lock-free budget cannot drift apart.

use core::cell::Cell;
#[cfg(feature = "std")]
use core::sync::atomic::{AtomicU64, Ordering};

/// How many compare-and-swap attempts one operation makes before it gives up.
///
/// A failed attempt means another thread changed the word in between, so each
/// failure is progress made by someone else; 64 in a row means the word is contended
/// far beyond what a retry budget sees in practice. Past this cap the operation fails
/// closed (a spend is denied, a deposit dropped) instead of spinning without bound.
pub(crate) const MAX_CAS_ATTEMPTS: u32 = 64;

/// A 64-bit cell that can be read and conditionally replaced.
pub(crate) trait Word {
    /// The current value.
    fn get(&self) -> u64;

    /// Replaces the value with `new` if it is still `current`; otherwise returns the
    /// value found.
    fn replace(&self, current: u64, new: u64) -> Result<(), u64>;
}

impl Word for Cell<u64> {
    #[inline]
    fn get(&self) -> u64 {
        Cell::get(self)
    }

    #[inline]
    fn replace(&self, current: u64, new: u64) -> Result<(), u64> {
        let seen = Cell::get(self);
        if seen == current {
            self.set(new);
            Ok(())
        } else {
            Err(seen)
        }
    }
}

/// Sequentially consistent on purpose: the ratio budget writes its reservation and
/// then reads the other buckets, and only a single total order of those writes and
/// reads guarantees that of two racing spends the later one sees the earlier one
/// (see `ratio.rs`). On x86-64 and AArch64 this costs nothing over acquire/release
/// for the loads; the compare-and-swap is a full barrier either way.
#[cfg(feature = "std")]
impl Word for AtomicU64 {
    #[inline]
    fn get(&self) -> u64 {
        self.load(Ordering::SeqCst)
    }

    #[inline]
    fn replace(&self, current: u64, new: u64) -> Result<(), u64> {
        self.compare_exchange(current, new, Ordering::SeqCst, Ordering::SeqCst)
            .map(|_| ())
    }
}
