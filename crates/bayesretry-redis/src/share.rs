//! [`FairShare`]: the default fallback of a fleet budget, one process's
//! share of the fleet's allowance.

use core::hash::BuildHasher;
use core::hash::BuildHasherDefault;
use core::sync::atomic::{AtomicU64, Ordering};
use std::hash::{DefaultHasher, RandomState};
use std::sync::{Mutex, PoisonError};

use bayesretry_budget::{Budget, Denied};

/// A local fixed window of `whole / processes`: what one process may spend
/// alone while Redis is away, if the fleet's processes share the allowance
/// evenly.
///
/// The allowance seldom divides evenly: `whole = q · processes + r`. Each
/// window a process may spend `q`, and one more in a share `r / processes`
/// of its windows, chosen by a hash of the window's number and a draw of
/// its own, so that the processes take the `r` extra units by turns and
/// the fleet's fallbacks spend the allowance per window on average — with
/// more processes than the allowance too (`q = 0`), where a floor of 1 per
/// process let the fleet spend one per process.
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
    /// The processes last counted sharing the budget; 0 before the fleet is
    /// counted, when the share is the whole.
    processes: AtomicU64,
    /// This process's draw: which windows give it one of the `r` extra
    /// units.
    turn: u64,
    /// The window spent in (its index), and what it spent; `None` before
    /// the first spend.
    spent: Mutex<Option<(u64, u64)>>,
}

impl FairShare {
    /// The whole of `whole` per window of `window_ms` (at least 1 ms), until
    /// the fleet is counted.
    pub(crate) fn new(whole: u32, window_ms: u64) -> FairShare {
        FairShare::with_turn(whole, window_ms, RandomState::new().hash_one(window_ms))
    }

    /// [`new`](FairShare::new), with `turn` as the process's draw.
    pub(crate) fn with_turn(whole: u32, window_ms: u64, turn: u64) -> FairShare {
        FairShare {
            whole,
            window_ms: window_ms.max(1),
            processes: AtomicU64::new(0),
            turn,
            spent: Mutex::new(None),
        }
    }

    /// The fleet was last seen with `processes` sharing the budget (0: not
    /// counted, the whole).
    pub(crate) fn set_processes(&self, processes: u64) {
        self.processes.store(processes, Ordering::Release);
    }

    /// What every window may spend now, at least: `whole / processes`,
    /// rounded down (the whole before the fleet is counted). Some windows
    /// may spend one more ([`share_in`](FairShare::share_in)).
    pub(crate) fn share(&self) -> u32 {
        match self.processes.load(Ordering::Acquire) {
            0 => self.whole,
            n => u32::try_from(u64::from(self.whole) / n).unwrap_or(self.whole),
        }
    }

    /// What window `index` may spend: the share, and one more if it is
    /// this process's turn for one of the units the division leaves over.
    fn share_in(&self, index: u64) -> u64 {
        let whole = u64::from(self.whole);
        match self.processes.load(Ordering::Acquire) {
            0 => whole,
            n => {
                let turn =
                    BuildHasherDefault::<DefaultHasher>::default().hash_one((self.turn, index));
                whole / n + u64::from(turn % n < whole % n)
            }
        }
    }
}

impl Budget for FairShare {
    fn try_spend(&self, now_ms: u64, cost: u32) -> Result<(), Denied> {
        if cost == 0 {
            return Ok(());
        }
        let index = now_ms / self.window_ms;
        let mut spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        let (window, so_far) = match *spent {
            // a caller behind the stored window is charged to it
            Some((window, so_far)) if window >= index => (window, so_far),
            _ => (index, 0),
        };
        let total = so_far.saturating_add(u64::from(cost));
        if total > self.share_in(window) {
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
        for (processes, expected) in [(1, 100), (3, 33), (4, 25), (100, 1), (1_000, 0), (0, 100)] {
            share.set_processes(processes);
            assert_eq!(share.share(), expected, "{processes} processes");
        }
        share.set_processes(u64::MAX);
        assert_eq!(share.share(), 0);
    }

    /// What `processes` fallbacks, each of a draw of its own, let the fleet
    /// spend in each of 2 000 windows when every process spends all it may.
    fn fleet_spends(whole: u32, processes: u64) -> Vec<u64> {
        let shares: Vec<FairShare> = (0..processes)
            .map(|p| {
                let share = FairShare::with_turn(whole, 1_000, p.wrapping_mul(0x9e37_79b9));
                share.set_processes(processes);
                share
            })
            .collect();
        (0..2_000_u64)
            .map(|window| {
                let now = window * 1_000;
                shares
                    .iter()
                    .map(|share| {
                        (0..=whole)
                            .take_while(|_| share.try_spend(now, 1).is_ok())
                            .count() as u64
                    })
                    .sum()
            })
            .collect()
    }

    #[test]
    fn the_units_left_over_go_by_turns_so_the_fleet_spends_its_allowance() {
        // 10 among 40 processes: 1 each was 40 a window, four allowances
        for (whole, processes) in [(10, 40), (100, 3), (7, 7), (5, 1_000)] {
            let spent = fleet_spends(whole, processes);
            let mean = spent.iter().sum::<u64>() as f64 / spent.len() as f64;
            let whole = f64::from(whole);
            // a binomial count of extra units a window: within 5 % of the
            // allowance on average, over 2 000 windows
            assert!(
                (mean - whole).abs() <= 0.05 * whole + 0.05,
                "{whole} among {processes}: {mean}"
            );
        }
        // an even division gives every window exactly its share
        assert!(fleet_spends(100, 4).iter().all(|&w| w == 100));
    }

    #[test]
    fn a_process_s_turns_are_its_own_share_of_the_windows() {
        let share = FairShare::with_turn(3, 1_000, 17);
        share.set_processes(10);
        let windows = (0..3_000_u64).filter(|&w| share.share_in(w) == 1).count();
        // 3 in 10 windows give it one unit, the rest none
        assert!((800..=1_000).contains(&windows), "{windows}");
        assert!((0..3_000_u64).all(|w| share.share_in(w) <= 1));
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
