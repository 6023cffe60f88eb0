//! [`Budget`]: the role every shared retry budget plays.

/// A retry budget shared by every call a client makes: first attempts
/// [`deposit`](Budget::deposit), retries [`try_spend`](Budget::try_spend).
///
/// Methods take `&self` and the time as a monotonic millisecond count, `now_ms`,
/// passed in by the caller: a budget never reads a clock. The implementations in
/// this crate are lock-free and `Send + Sync`, so one budget behind an `Arc` (or a
/// `&'static`) serves every thread.
///
/// Call `deposit` once per *first* attempt, before or after making it, and
/// `try_spend` before each *retry*; a retry that is denied is not made. Budgets that
/// do not depend on traffic (the fixed window) ignore deposits. A retry that was
/// granted but is then not made after all — its call cancelled during the backoff,
/// or stopped by a later check — is handed back with [`refund`](Budget::refund).
pub trait Budget {
    /// Spends `cost` on one retry at `now_ms`, or says why not.
    ///
    /// A zero cost is always granted. Nothing is spent when the answer is
    /// [`Denied`](crate::Denied).
    fn try_spend(&self, now_ms: u64, cost: u32) -> Result<(), crate::Denied>;

    /// Records one first attempt at `now_ms`.
    fn deposit(&self, now_ms: u64);

    /// Gives back `cost` of a spend granted at `spent_at_ms` whose retry was not
    /// made: pass the `now_ms` and the `cost` that [`try_spend`](Budget::try_spend)
    /// was given, once per granted spend at most.
    ///
    /// A budget is meant to bound the retries a client *makes*. A caller that is
    /// granted a retry and then drops it — its call cancelled while it backs off,
    /// its deadline passed during the wait, the breaker refusing the attempt —
    /// sent nothing, and if the grant stayed spent, every such call would drain
    /// the budget without a single retry going out: under the cancellations and
    /// timeouts of a busy service, every other caller would get fewer retries than
    /// configured, and for no load on the server at all.
    ///
    /// The refund goes back to the window (or bucket) that `spent_at_ms` falls
    /// in, and only while the budget still counts it: once that window has
    /// rolled on, the spend has left the budget's accounts and there is nothing
    /// to give back. A refund gives back at most what its spend took, from a
    /// window that counted it, so every window stays within its cap; on a
    /// clock that runs on, the budget then grants exactly what it would have
    /// had the spend never been asked for. (Where callers' clocks disagree, a
    /// spend in a newer window may have moved the budget on to it, and callers
    /// whose clocks lag are charged there from then on: the refund gives the
    /// unit back, it does not move the budget back.)
    ///
    /// The provided implementation does nothing: a budget that cannot take a
    /// spend back keeps it, which errs on the strict side, as a budget should.
    #[inline]
    fn refund(&self, spent_at_ms: u64, cost: u32) {
        let _ = (spent_at_ms, cost);
    }
}

impl<B: Budget + ?Sized> Budget for &B {
    #[inline]
    fn try_spend(&self, now_ms: u64, cost: u32) -> Result<(), crate::Denied> {
        (**self).try_spend(now_ms, cost)
    }

    #[inline]
    fn deposit(&self, now_ms: u64) {
        (**self).deposit(now_ms);
    }

    #[inline]
    fn refund(&self, spent_at_ms: u64, cost: u32) {
        (**self).refund(spent_at_ms, cost);
    }
}

#[cfg(feature = "std")]
impl<B: Budget + ?Sized> Budget for alloc::sync::Arc<B> {
    #[inline]
    fn try_spend(&self, now_ms: u64, cost: u32) -> Result<(), crate::Denied> {
        (**self).try_spend(now_ms, cost)
    }

    #[inline]
    fn deposit(&self, now_ms: u64) {
        (**self).deposit(now_ms);
    }

    #[inline]
    fn refund(&self, spent_at_ms: u64, cost: u32) {
        (**self).refund(spent_at_ms, cost);
    }
}
