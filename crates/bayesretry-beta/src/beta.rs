//! [`Beta`]: a Beta(α, β) belief about a success probability.

use core::fmt;

use crate::error::Error;
use crate::inc_beta::inc_beta_pair;
use crate::inverse::{inc_beta_inv, inc_beta_inv_complement};

/// A Beta(α, β) distribution: the conjugate belief about the probability that the
/// next attempt succeeds.
///
/// `α` and `β` are pseudo-counts of successes and failures (fractional counts are
/// fine: decayed evidence produces them). Observing an outcome adds one to the
/// matching count ([`observe`](Beta::observe)); that closed-form update is the whole
/// of Bayesian learning here. The distribution is `Copy`, 16 bytes, and every query
/// is a pure function of the two counts.
///
/// Both parameters are always finite and positive: [`Beta::new`] rejects anything
/// else, so no method has to check again.
///
/// ```
/// use bayesretry_beta::Beta;
/// // uniform prior, then 3 successes and 4 failures
/// let b = Beta::uniform().update(3.0, 4.0);
/// assert_eq!((b.alpha(), b.beta()), (4.0, 5.0));
/// assert!((b.mean() - 4.0 / 9.0).abs() < 1e-15);
/// // a 95 % upper credible bound on the success rate
/// let ub = b.upper_bound(0.95);
/// assert!((b.cdf(ub) - 0.95).abs() < 1e-14);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Beta {
    alpha: f64,
    beta: f64,
}

impl Beta {
    /// Beta(α, β). Fails unless both are finite and greater than zero (NaN included).
    ///
    /// ```
    /// use bayesretry_beta::{Beta, Error};
    /// assert!(Beta::new(2.0, 3.0).is_ok());
    /// assert_eq!(Beta::new(0.0, 1.0), Err(Error::InvalidAlpha(0.0)));
    /// assert!(Beta::new(1.0, f64::NAN).is_err());
    /// ```
    pub fn new(alpha: f64, beta: f64) -> Result<Beta, Error> {
        if !(alpha > 0.0 && alpha < f64::INFINITY) {
            return Err(Error::InvalidAlpha(alpha));
        }
        if !(beta > 0.0 && beta < f64::INFINITY) {
            return Err(Error::InvalidBeta(beta));
        }
        Ok(Beta { alpha, beta })
    }

    /// Beta(α, β) for parameters the caller has already shown to be finite
    /// and positive.
    pub(crate) const fn from_checked(alpha: f64, beta: f64) -> Beta {
        Beta { alpha, beta }
    }

    /// The uniform prior Beta(1, 1): every success rate equally plausible.
    pub const fn uniform() -> Beta {
        Beta {
            alpha: 1.0,
            beta: 1.0,
        }
    }

    /// α, the success pseudo-count.
    pub const fn alpha(&self) -> f64 {
        self.alpha
    }

    /// β, the failure pseudo-count.
    pub const fn beta(&self) -> f64 {
        self.beta
    }

    /// The posterior mean `α / (α + β)`: the expected success probability.
    pub fn mean(&self) -> f64 {
        // 1 / (1 + β/α) rather than α / (α + β): the sum overflows for counts near
        // f64::MAX, the ratio does not
        1.0 / (1.0 + self.beta / self.alpha)
    }

    /// The variance `αβ / ((α + β)² (α + β + 1))`.
    pub fn variance(&self) -> f64 {
        let s = self.alpha + self.beta;
        // written so that α, β near f64::MAX do not overflow
        (self.alpha / s) * (self.beta / s) / (s + 1.0)
    }

    /// The mode `(α - 1) / (α + β - 2)`, defined only when α > 1 and β > 1. With
    /// α ≤ 1 or β ≤ 1 the density is unbounded or maximal at an end point (or flat),
    /// and `None` says so rather than inventing a number.
    pub fn mode(&self) -> Option<f64> {
        if self.alpha > 1.0 && self.beta > 1.0 {
            Some(1.0 / (1.0 + (self.beta - 1.0) / (self.alpha - 1.0)))
        } else {
            None
        }
    }

    /// The strength `α + β`: how much evidence (plus prior) the belief rests on.
    pub fn strength(&self) -> f64 {
        self.alpha + self.beta
    }

    /// `P(X <= x)`; 0 below 0, 1 above 1, NaN for NaN.
    pub fn cdf(&self, x: f64) -> f64 {
        if x.is_nan() {
            return f64::NAN;
        }
        if x <= 0.0 {
            return 0.0;
        }
        if x >= 1.0 {
            return 1.0;
        }
        inc_beta_pair(self.alpha, self.beta, x, 1.0 - x).0
    }

    /// `P(X > x)`, computed directly (accurate where the cdf is close to 1).
    pub fn sf(&self, x: f64) -> f64 {
        if x.is_nan() {
            return f64::NAN;
        }
        if x <= 0.0 {
            return 1.0;
        }
        if x >= 1.0 {
            return 0.0;
        }
        inc_beta_pair(self.alpha, self.beta, x, 1.0 - x).1
    }

    /// The quantile: the `x` with `P(X <= x) = p`. NaN when `p` is outside [0, 1].
    pub fn quantile(&self, p: f64) -> f64 {
        inc_beta_inv(self.alpha, self.beta, p)
    }

    /// The equal-tailed credible interval holding `mass` of the probability: the
    /// `(1 - mass)/2` and `(1 + mass)/2` quantiles, the upper one solved from the
    /// upper tail so a tiny tail keeps its precision. `mass` outside [0, 1] or NaN
    /// gives `(NaN, NaN)`.
    ///
    /// ```
    /// use bayesretry_beta::Beta;
    /// let (lo, hi) = Beta::new(4.0, 5.0).unwrap().credible_interval(0.95);
    /// assert!(0.15 < lo && lo < 0.16 && 0.75 < hi && hi < 0.76);
    /// ```
    pub fn credible_interval(&self, mass: f64) -> (f64, f64) {
        if !(0.0..=1.0).contains(&mass) {
            return (f64::NAN, f64::NAN);
        }
        let tail = 0.5 * (1.0 - mass);
        (
            inc_beta_inv(self.alpha, self.beta, tail),
            inc_beta_inv_complement(self.alpha, self.beta, tail),
        )
    }

    /// One-sided upper credible bound: the `x` with `P(X <= x) = confidence`.
    ///
    /// "With this confidence, the success rate is at most x." The circuit breaker
    /// opens when this bound falls below its floor: even the optimistic reading of
    /// the evidence says the dependency is down.
    pub fn upper_bound(&self, confidence: f64) -> f64 {
        inc_beta_inv(self.alpha, self.beta, confidence)
    }

    /// One-sided lower credible bound: the `x` with `P(X >= x) = confidence`.
    pub fn lower_bound(&self, confidence: f64) -> f64 {
        if !(0.0..=1.0).contains(&confidence) {
            return f64::NAN;
        }
        inc_beta_inv_complement(self.alpha, self.beta, confidence)
    }

    /// The conjugate update with one outcome: α + 1 on success, β + 1 on failure.
    #[must_use]
    pub fn observe(self, success: bool) -> Beta {
        if success {
            self.update(1.0, 0.0)
        } else {
            self.update(0.0, 1.0)
        }
    }

    /// The conjugate update with (possibly fractional) evidence: Beta(α + s, β + f).
    ///
    /// Evidence that is NaN, infinite or negative is ignored (that count is left
    /// unchanged) so a bad input can never produce an invalid distribution; use
    /// [`try_update`](Beta::try_update) to be told instead. Counts saturate at
    /// `f64::MAX`.
    #[must_use]
    #[inline]
    pub fn update(self, successes: f64, failures: f64) -> Beta {
        // Evidence that is NaN, infinite or negative becomes 0 (`<` is false
        // for NaN, `max` turns a negative count into 0), and adding 0 to a
        // count, which is positive and finite, leaves it as it was: the same
        // bits as leaving it alone. Written as a test of the range (`0 ≤ e <
        // ∞`), the two comparisons were merged by the compiler into a test of
        // the float's class done on its bits, some 17 instructions per count,
        // and every decision updates a posterior several times.
        let add = |base: f64, e: f64| {
            let e = if e < f64::INFINITY { e.max(0.0) } else { 0.0 };
            (base + e).min(f64::MAX)
        };
        Beta {
            alpha: add(self.alpha, successes),
            beta: add(self.beta, failures),
        }
    }

    /// Like [`update`](Beta::update) but rejects NaN, infinite or negative evidence.
    pub fn try_update(self, successes: f64, failures: f64) -> Result<Beta, Error> {
        for e in [successes, failures] {
            if !(0.0..f64::INFINITY).contains(&e) {
                return Err(Error::InvalidEvidence(e));
            }
        }
        Ok(self.update(successes, failures))
    }

    /// Draws one success probability from the distribution.
    ///
    /// A ratio of two Gamma variates carried in log space, so it stays correct for
    /// α, β far below 1, where the plain ratio underflows to 0/0 for a large share of
    /// draws. The random stream comes from the caller.
    ///
    /// ```
    /// # #[cfg(feature = "rand")] {
    /// use bayesretry_beta::Beta;
    /// use rand::{SeedableRng, rngs::StdRng};
    /// let mut rng = StdRng::seed_from_u64(7);
    /// let x = Beta::new(2.0, 5.0).unwrap().sample(&mut rng);
    /// assert!((0.0..=1.0).contains(&x));
    /// # }
    /// ```
    #[cfg(feature = "rand")]
    pub fn sample<R: rand_core::Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        crate::sample::beta(self.alpha, self.beta, rng)
    }
}

impl Default for Beta {
    /// The uniform prior.
    fn default() -> Beta {
        Beta::uniform()
    }
}

impl fmt::Display for Beta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Beta({}, {})", self.alpha, self.beta)
    }
}
