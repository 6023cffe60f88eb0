//! The store of classic mode: believes nothing, learns nothing.

use bayesretry_store::{Beta, Context, PosteriorStore};

/// A store that always answers the uniform prior and ignores every outcome. With
/// the classic cost model (success worth 1, attempts free) every retry the hard
/// checks allow has a positive expected value, so the loop retries up to its
/// fixed count: classic semantics, through the same decision engine.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Fixed;

impl PosteriorStore for Fixed {
    fn posterior(&self, _: &Context<'_>, _: u64) -> Beta {
        Beta::uniform()
    }

    fn observe(&self, _: &Context<'_>, _: bool, _: u64) {}

    fn observe_weighted(&self, _: &Context<'_>, _: f64, _: f64, _: u64) {}
}
