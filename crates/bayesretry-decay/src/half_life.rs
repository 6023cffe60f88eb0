//! [`HalfLife`]: how fast evidence fades, checked once when it is made.

use core::fmt;
use core::num::NonZeroU64;

use crate::error::Error;

/// The time, in milliseconds, over which evidence loses half its weight — or
/// [`NEVER`](HalfLife::NEVER), for evidence that is kept forever.
///
/// A valid half-life is finite and greater than zero; [`HalfLife::new`] rejects
/// anything else (NaN included), so [`Decay`](crate::Decay) never checks again.
///
/// # Default
///
/// [`HalfLife::NEVER`]: no decay, the plain conjugate update.
///
/// ```
/// use core::num::NonZeroU64;
/// use bayesretry_decay::{Error, HalfLife};
///
/// let minute = HalfLife::from_ms(NonZeroU64::new(60_000).unwrap());
/// assert_eq!(minute, HalfLife::new(60_000.0)?);
/// assert_eq!(minute.as_ms(), Some(60_000.0));
/// assert_eq!(HalfLife::NEVER.as_ms(), None);
/// assert_eq!(HalfLife::new(0.0), Err(Error::InvalidHalfLife(0.0)));
/// assert!(HalfLife::new(f64::NAN).is_err());
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HalfLife {
    /// Milliseconds; `f64::INFINITY` for never.
    ms: f64,
}

impl HalfLife {
    /// Evidence never fades.
    pub const NEVER: HalfLife = HalfLife { ms: f64::INFINITY };

    /// A half-life of `ms` milliseconds, finite and greater than zero (fractions
    /// are fine).
    pub const fn new(ms: f64) -> Result<HalfLife, Error> {
        if ms > 0.0 && ms < f64::INFINITY {
            Ok(HalfLife { ms })
        } else {
            Err(Error::InvalidHalfLife(ms))
        }
    }

    /// A half-life of a whole number of milliseconds: valid by construction.
    pub const fn from_ms(ms: NonZeroU64) -> HalfLife {
        HalfLife {
            ms: ms.get() as f64,
        }
    }

    /// The half-life in milliseconds, or `None` for [`NEVER`](HalfLife::NEVER).
    pub const fn as_ms(&self) -> Option<f64> {
        if self.is_never() { None } else { Some(self.ms) }
    }

    /// Whether evidence is kept forever.
    pub const fn is_never(&self) -> bool {
        self.ms == f64::INFINITY
    }

    /// Milliseconds, `f64::INFINITY` for never.
    pub(crate) const fn raw_ms(&self) -> f64 {
        self.ms
    }
}

impl Default for HalfLife {
    /// [`HalfLife::NEVER`].
    fn default() -> HalfLife {
        HalfLife::NEVER
    }
}

impl fmt::Display for HalfLife {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.as_ms() {
            Some(ms) => write!(f, "{ms} ms"),
            None => f.write_str("never"),
        }
    }
}
