//! [`Decay`]: evidence read at a later moment, and new outcomes folded into it.

use bayesretry_beta::Beta;

use crate::evidence::{Evidence, Stamped};
use crate::half_life::HalfLife;
use crate::math;

/// Exponential decay of evidence with a [`HalfLife`]: evidence stamped at `t0` is
/// worth `2^(−(now − t0) / half_life)` of itself at `now`.
///
/// A `Decay` is a `Copy` rule, not state: it holds the half-life and nothing
/// else, and every method is a pure function of its arguments. Time is a
/// monotonic millisecond count passed in by the caller; a `now_ms` before the
/// evidence's stamp (two threads whose readings of the clock cross, or a clock
/// that steps back) counts as no time elapsed: the evidence is read undecayed and
/// its stamp never moves back.
///
/// ```
/// use core::num::NonZeroU64;
/// use bayesretry_decay::{Beta, Decay, HalfLife, Stamped};
///
/// let decay = Decay::new(HalfLife::from_ms(NonZeroU64::new(1_000).unwrap()));
/// let mut seen = Stamped::EMPTY;
/// for _ in 0..8 {
///     seen = decay.observe(seen, 0, false);
/// }
/// // One half-life later the 8 failures weigh 4; two later, 2.
/// let posterior = |now| decay.posterior(Beta::uniform(), seen, now);
/// assert_eq!(posterior(0), Beta::new(1.0, 9.0).unwrap());
/// assert_eq!(posterior(1_000), Beta::new(1.0, 5.0).unwrap());
/// assert_eq!(posterior(2_000), Beta::new(1.0, 3.0).unwrap());
/// // A reading from a clock that lags the stamp sees no decay at all.
/// assert_eq!(decay.at(decay.at(seen, 1_000), 500).evidence().failures(), 4.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Decay {
    half_life: HalfLife,
}

impl Decay {
    /// Decay with `half_life`.
    pub const fn new(half_life: HalfLife) -> Decay {
        Decay { half_life }
    }

    /// No decay: evidence is kept forever, the plain conjugate update.
    pub const fn never() -> Decay {
        Decay {
            half_life: HalfLife::NEVER,
        }
    }

    /// The half-life.
    pub const fn half_life(&self) -> HalfLife {
        self.half_life
    }

    /// What one unit of evidence is worth after `elapsed_ms`: `2^(−elapsed /
    /// half_life)`, in [0, 1]. Exactly 1 without decay or without elapsed time;
    /// never NaN (it reaches 0 after some 1 075 half-lives).
    #[inline]
    pub fn factor(&self, elapsed_ms: u64) -> f64 {
        if elapsed_ms == 0 || self.half_life.is_never() {
            return 1.0;
        }
        // elapsed > 0 and the half-life is finite and positive: the quotient is
        // positive, at worst +inf, and 2^(-inf) = 0.
        math::exp2(-(elapsed_ms as f64) / self.half_life.raw_ms())
    }

    /// The factor from `from_ms` to `to_ms`; 1 when `to_ms` is not after
    /// `from_ms`.
    #[inline]
    pub fn factor_between(&self, from_ms: u64, to_ms: u64) -> f64 {
        self.factor(to_ms.saturating_sub(from_ms))
    }

    /// How many half-lives old evidence is when stores forget it: 64, at which
    /// it is worth 2⁻⁶⁴ (about 5·10⁻²⁰) of itself, less than the rounding of
    /// any count it could be added to.
    pub const FORGET_AFTER_HALF_LIVES: u32 = 64;

    /// The stamp before which evidence is forgotten at `now_ms`: evidence
    /// stamped before it is more than
    /// [`FORGET_AFTER_HALF_LIVES`](Decay::FORGET_AFTER_HALF_LIVES) half-lives
    /// old. `None` without decay (nothing is ever forgotten), and while no
    /// stamp is that old.
    ///
    /// Stores drop such evidence from their snapshots and files, and a writer's
    /// forgotten entry no longer stands in the way of its newer ones: without
    /// that, a file shared by processes that restart under new writer ids would
    /// grow by an entry per context at every restart, for good.
    ///
    /// ```
    /// use core::num::NonZeroU64;
    /// use bayesretry_decay::{Decay, HalfLife};
    ///
    /// let decay = Decay::new(HalfLife::from_ms(NonZeroU64::new(1_000).unwrap()));
    /// assert_eq!(decay.forgotten_before(64_000), None);
    /// assert_eq!(decay.forgotten_before(64_001), Some(1));
    /// assert_eq!(decay.forgotten_before(100_000), Some(36_000));
    /// assert_eq!(Decay::never().forgotten_before(u64::MAX), None);
    /// ```
    #[must_use]
    pub fn forgotten_before(&self, now_ms: u64) -> Option<u64> {
        let horizon = self.half_life.raw_ms() * f64::from(Decay::FORGET_AFTER_HALF_LIVES);
        if !horizon.is_finite() {
            return None;
        }
        // Ages are whole milliseconds, so `age > horizon` is `age > ⌊horizon⌋`:
        // the cast truncates (and saturates past 2^64 ms, forgetting nothing).
        match now_ms.checked_sub(horizon as u64) {
            Some(cutoff) if cutoff > 0 => Some(cutoff),
            _ => None,
        }
    }

    /// `stamped` brought up to `now_ms`: its evidence decayed, its stamp moved to
    /// `now_ms`. A `now_ms` before the stamp changes nothing.
    #[inline]
    #[must_use]
    pub fn at(&self, stamped: Stamped, now_ms: u64) -> Stamped {
        if now_ms <= stamped.at_ms() {
            return stamped;
        }
        let factor = self.factor(now_ms - stamped.at_ms());
        Stamped::new(stamped.evidence().scaled(factor), now_ms)
    }

    /// The evidence of `stamped` as it is worth at `now_ms`.
    #[inline]
    pub fn evidence_at(&self, stamped: Stamped, now_ms: u64) -> Evidence {
        self.at(stamped, now_ms).evidence()
    }

    /// The posterior at `now_ms`: `prior` updated with the evidence of `stamped`
    /// as it is worth then. As evidence fades the posterior returns toward the
    /// prior, widening as it goes.
    #[inline]
    pub fn posterior(&self, prior: Beta, stamped: Stamped, now_ms: u64) -> Beta {
        self.evidence_at(stamped, now_ms).posterior(prior)
    }

    /// The same as [`posterior`](Decay::posterior), from the evidence and its
    /// stamp given apart.
    #[inline]
    pub fn posterior_from(
        &self,
        prior: Beta,
        evidence: Evidence,
        last_update_ms: u64,
        now_ms: u64,
    ) -> Beta {
        self.posterior(prior, Stamped::new(evidence, last_update_ms), now_ms)
    }

    /// `stamped` brought up to `now_ms`, with `evidence` added: how new outcomes
    /// are folded in. The stamp becomes the later of the two times, so an outcome
    /// reported with a lagging clock is added undecayed and turns no time back.
    #[inline]
    #[must_use]
    pub fn fold(&self, stamped: Stamped, now_ms: u64, evidence: Evidence) -> Stamped {
        let current = self.at(stamped, now_ms);
        Stamped::new(current.evidence().plus(evidence), current.at_ms())
    }

    /// [`fold`](Decay::fold) with one outcome.
    #[inline]
    #[must_use]
    pub fn observe(&self, stamped: Stamped, now_ms: u64, success: bool) -> Stamped {
        self.fold(stamped, now_ms, Evidence::outcome(success))
    }

    /// The sum of two stamped evidences, as of the later stamp: each decayed from
    /// its own stamp. This is how evidence from several sources (contexts of one
    /// endpoint, writers of one context) adds up.
    #[inline]
    #[must_use]
    pub fn combine(&self, a: Stamped, b: Stamped) -> Stamped {
        let at = a.at_ms().max(b.at_ms());
        let sum = self.evidence_at(a, at).plus(self.evidence_at(b, at));
        Stamped::new(sum, at)
    }

    /// `total` without `part`, as of the later stamp, each count at least zero:
    /// the inverse of [`combine`](Decay::combine), up to rounding.
    #[inline]
    #[must_use]
    pub fn remove(&self, total: Stamped, part: Stamped) -> Stamped {
        let at = total.at_ms().max(part.at_ms());
        let rest = self
            .evidence_at(total, at)
            .minus(self.evidence_at(part, at));
        Stamped::new(rest, at)
    }
}

impl From<HalfLife> for Decay {
    fn from(half_life: HalfLife) -> Decay {
        Decay::new(half_life)
    }
}

#[cfg(test)]
mod tests {
    use core::num::NonZeroU64;

    use super::Decay;
    use crate::{Evidence, HalfLife, Stamped};

    fn decay(ms: u64) -> Decay {
        Decay::new(HalfLife::from_ms(NonZeroU64::new(ms).unwrap()))
    }

    #[test]
    fn whole_half_lives_halve_exactly() {
        let d = decay(250);
        assert_eq!(d.factor(0), 1.0);
        assert_eq!(d.factor(250), 0.5);
        assert_eq!(d.factor(750), 0.125);
        assert_eq!(Decay::never().factor(u64::MAX), 1.0);
        assert_eq!(d.factor(u64::MAX), 0.0);
    }

    #[test]
    fn a_tiny_half_life_gives_zero_not_nan() {
        let d = Decay::new(HalfLife::new(f64::MIN_POSITIVE / 4.0).unwrap());
        assert_eq!(d.factor(1), 0.0);
        assert_eq!(d.factor(0), 1.0);
    }

    #[test]
    fn combine_and_remove_undo_each_other() {
        let d = decay(1_000);
        let a = Stamped::new(Evidence::new(4.0, 2.0).unwrap(), 1_000);
        let b = Stamped::new(Evidence::new(1.0, 3.0).unwrap(), 3_000);
        let both = d.combine(a, b);
        assert_eq!(both.at_ms(), 3_000);
        assert_eq!(both.evidence(), Evidence::new(2.0, 3.5).unwrap());
        assert_eq!(
            d.remove(both, b).evidence(),
            Evidence::new(1.0, 0.5).unwrap()
        );
        assert_eq!(d.remove(b, both).evidence(), Evidence::NONE);
    }
}
