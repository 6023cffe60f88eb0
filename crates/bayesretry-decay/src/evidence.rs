//! [`Evidence`]: counts of outcomes above the prior; [`Stamped`]: the same, with
//! the time they were last brought up to date.

use core::fmt;

use bayesretry_beta::Beta;

use crate::error::Error;

/// Successes and failures observed above the prior, as (possibly fractional)
/// pseudo-counts.
///
/// Both counts are always finite and at least zero: [`Evidence::new`] rejects
/// anything else, and every operation saturates at `f64::MAX` and at zero instead
/// of overflowing or going negative, so evidence can always be added to a
/// [`Beta`] prior.
///
/// ```
/// use bayesretry_decay::{Beta, Evidence};
///
/// let e = Evidence::new(3.0, 1.0)?.plus(Evidence::outcome(false));
/// assert_eq!((e.successes(), e.failures(), e.strength()), (3.0, 2.0, 5.0));
/// assert_eq!(e.posterior(Beta::uniform()), Beta::new(4.0, 3.0).unwrap());
/// // Capped at 2 pseudo-observations, the mean (3 / 5) is kept.
/// let capped = e.capped(2.0);
/// assert!((capped.successes() - 1.2).abs() < 1e-15);
/// assert!((capped.failures() - 0.8).abs() < 1e-15);
/// assert!(Evidence::new(-1.0, 0.0).is_err());
/// # Ok::<(), bayesretry_decay::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Evidence {
    successes: f64,
    failures: f64,
}

impl Evidence {
    /// No evidence at all.
    pub const NONE: Evidence = Evidence {
        successes: 0.0,
        failures: 0.0,
    };

    /// `successes` and `failures`, each finite and at least zero.
    #[inline]
    pub const fn new(successes: f64, failures: f64) -> Result<Evidence, Error> {
        if !(successes >= 0.0 && successes < f64::INFINITY) {
            return Err(Error::InvalidEvidence(successes));
        }
        if !(failures >= 0.0 && failures < f64::INFINITY) {
            return Err(Error::InvalidEvidence(failures));
        }
        Ok(Evidence {
            successes,
            failures,
        })
    }

    /// Like [`new`](Evidence::new), but a count that is NaN, infinite or negative
    /// is taken as zero instead of rejected.
    #[inline]
    pub const fn new_lenient(successes: f64, failures: f64) -> Evidence {
        Evidence {
            successes: valid_or_zero(successes),
            failures: valid_or_zero(failures),
        }
    }

    /// One outcome: a success or a failure.
    #[inline]
    pub const fn outcome(success: bool) -> Evidence {
        if success {
            Evidence {
                successes: 1.0,
                failures: 0.0,
            }
        } else {
            Evidence {
                successes: 0.0,
                failures: 1.0,
            }
        }
    }

    /// The success count.
    #[inline]
    pub const fn successes(&self) -> f64 {
        self.successes
    }

    /// The failure count.
    #[inline]
    pub const fn failures(&self) -> f64 {
        self.failures
    }

    /// Successes plus failures: how many outcomes this evidence is worth
    /// (saturating at `f64::MAX`).
    #[inline]
    pub fn strength(&self) -> f64 {
        (self.successes + self.failures).min(f64::MAX)
    }

    /// Whether both counts are zero.
    #[inline]
    pub fn is_none(&self) -> bool {
        self.successes == 0.0 && self.failures == 0.0
    }

    /// The share of successes, `None` without evidence.
    #[inline]
    pub fn mean(&self) -> Option<f64> {
        if self.is_none() {
            None
        } else {
            // as in `Beta::mean`: no overflow for counts near f64::MAX
            Some(1.0 / (1.0 + self.failures / self.successes))
        }
    }

    /// Both kinds of evidence together, each count saturating at `f64::MAX`.
    #[must_use]
    #[inline]
    pub fn plus(self, other: Evidence) -> Evidence {
        Evidence {
            successes: (self.successes + other.successes).min(f64::MAX),
            failures: (self.failures + other.failures).min(f64::MAX),
        }
    }

    /// This evidence without `other`'s, each count at least zero: how an aggregate
    /// forgets a member it had added.
    #[must_use]
    #[inline]
    pub fn minus(self, other: Evidence) -> Evidence {
        Evidence {
            successes: (self.successes - other.successes).max(0.0),
            failures: (self.failures - other.failures).max(0.0),
        }
    }

    /// Both counts multiplied by `factor`, saturating at `f64::MAX`. A factor that
    /// is NaN or not greater than zero gives [`Evidence::NONE`].
    #[must_use]
    #[inline]
    pub fn scaled(self, factor: f64) -> Evidence {
        if !(factor > 0.0) {
            return Evidence::NONE;
        }
        Evidence {
            successes: (self.successes * factor).min(f64::MAX),
            failures: (self.failures * factor).min(f64::MAX),
        }
    }

    /// The evidence scaled down, if need be, to a strength of at most
    /// `max_strength`, keeping its mean: what an equivalent sample size cap does.
    /// A `max_strength` that is NaN or not greater than zero gives
    /// [`Evidence::NONE`].
    #[must_use]
    #[inline]
    pub fn capped(self, max_strength: f64) -> Evidence {
        let strength = self.strength();
        if strength <= max_strength {
            return self;
        }
        if !(max_strength > 0.0) {
            return Evidence::NONE;
        }
        // strength > max_strength > 0, so the ratio is in (0, 1): the counts
        // shrink by one factor and their ratio, the mean, is kept.
        let k = max_strength / strength;
        Evidence {
            successes: self.successes * k,
            failures: self.failures * k,
        }
    }

    /// The posterior: `prior` updated with this evidence.
    #[inline]
    pub fn posterior(&self, prior: Beta) -> Beta {
        prior.update(self.successes, self.failures)
    }
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} successes, {} failures",
            self.successes, self.failures
        )
    }
}

const fn valid_or_zero(count: f64) -> f64 {
    if count >= 0.0 && count < f64::INFINITY {
        count
    } else {
        0.0
    }
}

/// [`Evidence`] as of the moment it was last brought up to date, a monotonic
/// millisecond count chosen by the caller.
///
/// It is what a store keeps per context: 24 bytes, `Copy`. A [`Decay`](crate::Decay)
/// reads it at any later moment, and folds new outcomes into it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stamped {
    evidence: Evidence,
    at_ms: u64,
}

impl Stamped {
    /// No evidence, as of time 0: where every context starts.
    pub const EMPTY: Stamped = Stamped {
        evidence: Evidence::NONE,
        at_ms: 0,
    };

    /// `evidence` as of `at_ms`.
    #[inline]
    pub const fn new(evidence: Evidence, at_ms: u64) -> Stamped {
        Stamped { evidence, at_ms }
    }

    /// The evidence as of [`at_ms`](Stamped::at_ms), not decayed.
    #[inline]
    pub const fn evidence(&self) -> Evidence {
        self.evidence
    }

    /// When the evidence was last brought up to date.
    #[inline]
    pub const fn at_ms(&self) -> u64 {
        self.at_ms
    }
}
