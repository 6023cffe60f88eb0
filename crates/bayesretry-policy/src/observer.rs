//! [`Observer`]: sees every decision and every outcome, and cannot break a call.

use core::panic::AssertUnwindSafe;
use std::panic::catch_unwind;

use bayesretry_decision::Decision;
use bayesretry_store::Context;

/// Watches a policy: every decision it makes and every outcome it learns from.
///
/// For metrics, logs and audit trails. Both methods do nothing by default. An
/// observer that panics is contained: the panic is caught and the call goes on
/// as if the observer had returned (the process's panic hook still reports it).
pub trait Observer: Send + Sync + 'static {
    /// A decision was made for `ctx`, the context of the attempt that just failed.
    ///
    /// One per failure, the decision the call acts on, and one more for a
    /// retry decided and then not made: a retry stopped after its wait (judged
    /// again on a longer run of failures, or refused by the breaker or by a
    /// server's hold) is followed by the stop, for the same `ctx`. So every
    /// retry an observer hears of is followed by an outcome
    /// ([`on_observe`](Observer::on_observe)) or by that stop, unless its call
    /// was cancelled or dropped.
    fn on_decision(&self, decision: &Decision, ctx: &Context<'_>) {
        let _ = (decision, ctx);
    }

    /// The attempt after `ctx` ended, a success or a failure, and the store
    /// learned it.
    fn on_observe(&self, ctx: &Context<'_>, success: bool) {
        let _ = (ctx, success);
    }
}

/// Runs an observer callback, containing any panic.
pub(crate) fn contained(callback: impl FnOnce()) {
    // the observer's state may be left half-updated by its own panic; the
    // policy's is not touched inside, so no invariant of ours can break
    let _ = catch_unwind(AssertUnwindSafe(callback));
}
