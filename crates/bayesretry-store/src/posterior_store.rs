//! [`PosteriorStore`]: the role trait of anything that keeps posteriors.

use bayesretry_beta::Beta;

use crate::context::Context;

/// Where posteriors live. `&self` methods; implementations are `Send + Sync`.
///
/// The decision engine reads [`posterior`](PosteriorStore::posterior) to decide
/// whether the attempt after a context is worth making, and the run loop reports
/// what that attempt did with [`observe`](PosteriorStore::observe). A store is
/// shared by every call in flight, so both take `&self` and use interior
/// mutability; how (a sharded mutex, a file, a Redis server) is the
/// implementation's business. Time is passed in as a monotonic `now_ms`, so a
/// store that decays evidence reads no clock of its own.
///
/// `&T`, `Arc<T>` and `Box<T>` (the last two with `alloc`) are stores when `T`
/// is, so an engine can own its store or share one.
///
/// ```
/// use bayesretry_store::{Beta, Context, ErrorClass, PosteriorStore};
///
/// /// A store that knows nothing and learns nothing: the uniform prior, always.
/// struct Uniform;
/// impl PosteriorStore for Uniform {
///     fn posterior(&self, _: &Context<'_>, _: u64) -> Beta { Beta::uniform() }
///     fn observe(&self, _: &Context<'_>, _: bool, _: u64) {}
///     fn observe_weighted(&self, _: &Context<'_>, _: f64, _: f64, _: u64) {}
/// }
///
/// fn mean(store: impl PosteriorStore) -> f64 {
///     store.posterior(&Context::new("db", 1, ErrorClass::Timeout), 0).mean()
/// }
/// assert_eq!(mean(&Uniform), 0.5);
/// ```
pub trait PosteriorStore: Send + Sync {
    /// The posterior that the attempt after `ctx` succeeds, at `now_ms` (decay and
    /// hierarchical prior applied).
    fn posterior(&self, ctx: &Context<'_>, now_ms: u64) -> Beta;

    /// Fold one outcome of the attempt after `ctx` into its evidence.
    fn observe(&self, ctx: &Context<'_>, success: bool, now_ms: u64);

    /// Fold fractional evidence (batched or merged outcomes). Negative/NaN/inf
    /// evidence is ignored.
    fn observe_weighted(&self, ctx: &Context<'_>, successes: f64, failures: f64, now_ms: u64);
}

/// Forwards the trait through a pointer type, so a `&MemoryStore`, an
/// `Arc<MemoryStore>` or a `Box<dyn PosteriorStore>` is a store too.
macro_rules! forward_through_pointer {
    ($($(#[$attr:meta])* $ptr:ty;)*) => {$(
        $(#[$attr])*
        impl<T: PosteriorStore + ?Sized> PosteriorStore for $ptr {
            #[inline]
            fn posterior(&self, ctx: &Context<'_>, now_ms: u64) -> Beta {
                (**self).posterior(ctx, now_ms)
            }

            #[inline]
            fn observe(&self, ctx: &Context<'_>, success: bool, now_ms: u64) {
                (**self).observe(ctx, success, now_ms);
            }

            #[inline]
            fn observe_weighted(&self, ctx: &Context<'_>, successes: f64, failures: f64, now_ms: u64) {
                (**self).observe_weighted(ctx, successes, failures, now_ms);
            }
        }
    )*};
}

forward_through_pointer! {
    &T;
    #[cfg(feature = "alloc")]
    alloc::sync::Arc<T>;
    #[cfg(feature = "alloc")]
    alloc::boxed::Box<T>;
}
