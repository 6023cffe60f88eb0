//! [`FairShare`]: the default fallback of a fleet budget, one process's
//! share of the fleet's allowance.

use core::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};

use bayesretry_budget::{Budget, Denied};

/// A local fixed window of `whole / processes` (at least 1): what one
/// process may spend alone while Redis is away, if the fleet's processes
/// share the allowance evenly.
///
/// The share changes as the fleet is counted ([`set_processes`]); what the
/// current window spent is kept across a change, so that a process whose
/// share grows or shrinks mid-window is held to the new share on what it
/// already spent. Windows are aligned as a `FixedWindowBudget`'s are, on
/// multiples of their length on the caller's clock; a caller whose clock
/// lags the stored window is charged to it (the strict side).
///
/// [`set_processes`]: FairShare::set_processes
#[derive(Debug)]
pub(crate) struct FairShare {
    whole: u32,
    window_ms: u64,
    share: AtomicU32,
    /// The window spent in (its index), and what it spent; `None` before
    /// the first spend.
    spent: Mutex<Option<(u64, u64)>>,
}

impl FairShare {
    /// The whole of `whole` per window of `window_ms` (at least 1 ms), until
    /// the fleet is counted.
    pub(crate) fn new(whole: u32, window_ms: u64) -> FairShare {
        FairShare {
            whole,
            window_ms: window_ms.max(1),
            share: AtomicU32::new(whole),
            spent: Mutex::new(None),
        }
    }

    /// The fleet was last seen with `processes` sharing the budget: the
    /// share is `whole / processes`, at least 1 (and the whole for 0).
    pub(crate) fn set_processes(&self, processes: u64) {
        let share = u64::from(self.whole) / processes.max(1);
        let share = u32::try_from(share).unwrap_or(self.whole).max(1);
        self.share.store(share, Ordering::Release);
    }

    /// What one window may spend now.
    pub(crate) fn share(&self) -> u32 {
        self.share.load(Ordering::Acquire)
    }
}

impl Budget for FairShare {
    fn try_spend(&self, now_ms: u64, cost: u32) -> Result<(), Denied> {
        if cost == 0 {
            return Ok(());
        }
        let share = u64::from(self.share());
        let index = now_ms / self.window_ms;
        let mut spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        let (window, so_far) = match *spent {
            // a caller behind the stored window is charged to it
            Some((window, so_far)) if window >= index => (window, so_far),
            _ => (index, 0),
        };
        let total = so_far.saturating_add(u64::from(cost));
        if total > share {
            let end = window.saturating_add(1).saturating_mul(self.window_ms);
            return Err(Denied::exhausted(end));
        }
        *spent = Some((window, total));
        Ok(())
    }

    fn deposit(&self, _now_ms: u64) {}

    /// Gives `cost` back to the window it was spent in, if that window is
    /// still the stored one.
    fn refund(&self, spent_at_ms: u64, cost: u32) {
        let index = spent_at_ms / self.window_ms;
        let mut spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((window, so_far)) = *spent {
            if window == index {
                *spent = Some((window, so_far.saturating_sub(u64::from(cost))));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_is_the_allowance_divided_by_the_processes_seen() {
        let share = FairShare::new(100, 1_000);
        assert_eq!(share.share(), 100, "the whole before the fleet is counted");
        for (processes, expected) in [(1, 100), (3, 33), (4, 25), (100, 1), (1_000, 1), (0, 100)] {
            share.set_processes(processes);
            assert_eq!(share.share(), expected, "{processes} processes");
        }
        share.set_processes(u64::MAX);
        assert_eq!(share.share(), 1);
    }

    #[test]
    fn a_window_spends_its_share_and_no_more() {
        let share = FairShare::new(100, 1_000);
        share.set_processes(4);
        assert!((0..25).all(|_| share.try_spend(10, 1).is_ok()));
        let denied = share.try_spend(10, 1).unwrap_err();
        assert_eq!(denied.retry_at_ms(), Some(1_000));
        assert!(share.try_spend(1_000, 25).is_ok(), "a new window");
        assert!(
            share.try_spend(999, 1).is_err(),
            "a lagging caller is charged to it"
        );
    }

    #[test]
    fn a_share_cut_mid_window_counts_what_the_window_spent() {
        let share = FairShare::new(100, 1_000);
        assert!(share.try_spend(0, 30).is_ok());
        share.set_processes(4);
        assert!(share.try_spend(0, 1).is_err(), "30 spent of a share of 25");
        share.set_processes(2);
        assert!(share.try_spend(0, 20).is_ok());
        assert!(share.try_spend(0, 1).is_err());
    }

    #[test]
    fn a_refund_gives_back_to_its_own_window_only() {
        let share = FairShare::new(2, 1_000);
        share.try_spend(0, 2).unwrap();
        share.refund(0, 1);
        assert!(share.try_spend(0, 1).is_ok());
        share.try_spend(1_500, 2).unwrap();
        share.refund(500, 2);
        assert!(
            share.try_spend(1_500, 1).is_err(),
            "the old window's refund"
        );
        share.refund(1_500, u32::MAX);
        assert!(share.try_spend(1_500, 2).is_ok());
    }
}
