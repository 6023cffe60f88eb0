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
/// do not depend on traffic (the fixed window) ignore deposits.
pub trait Budget {
    /// Spends `cost` on one retry at `now_ms`, or says why not.
    ///
    /// A zero cost is always granted. Nothing is spent when the answer is
    /// [`Denied`](crate::Denied).
    fn try_spend(&self, now_ms: u64, cost: u32) -> Result<(), crate::Denied>;

    /// Records one first attempt at `now_ms`.
    fn deposit(&self, now_ms: u64);
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
}
