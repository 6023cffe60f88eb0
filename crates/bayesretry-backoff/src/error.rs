//! The one error type of this crate.

use core::fmt;
use core::time::Duration;

/// Why a [`Config`](crate::Config) could not be built into a [`Backoff`](crate::Backoff).
///
/// Each variant carries the offending value, and the message names it together
/// with the bound it broke.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The base delay was longer than the maximum delay, so no delay could honour both.
    BaseAboveMax {
        /// The base delay that was asked for.
        base: Duration,
        /// The maximum delay it exceeds.
        max: Duration,
    },
    /// The exponential factor was NaN, infinite, or below 1 (a shrinking "backoff").
    InvalidFactor(f64),
    /// The spread of [`Jitter::Proportional`](crate::Jitter::Proportional) was NaN or
    /// outside [0, 1].
    InvalidSpread(f64),
    /// [`Jitter::Decorrelated`](crate::Jitter::Decorrelated) was asked for with a zero
    /// base delay: every delay would be zero, because each one is drawn between the
    /// base and three times the one before.
    DecorrelatedWithZeroBase,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::BaseAboveMax { base, max } => {
                write!(f, "base delay must be <= max delay ({max:?}), got {base:?}")
            }
            Error::InvalidFactor(v) => {
                write!(f, "exponential factor must be finite and >= 1, got {v}")
            }
            Error::InvalidSpread(v) => {
                write!(
                    f,
                    "proportional jitter spread must be within [0, 1], got {v}"
                )
            }
            Error::DecorrelatedWithZeroBase => {
                write!(f, "decorrelated jitter needs a base delay > 0ns, got 0ns")
            }
        }
    }
}

impl core::error::Error for Error {}
