//! The one error type of this crate.

use core::fmt;

/// Why a [`HalfLife`](crate::HalfLife) or an [`Evidence`](crate::Evidence) was
/// rejected.
///
/// Each variant carries the offending value so that the message names it.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A half-life was NaN, infinite, or not greater than zero.
    InvalidHalfLife(f64),
    /// A count of successes or failures was NaN, infinite or negative.
    InvalidEvidence(f64),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::InvalidHalfLife(v) => {
                write!(f, "half-life must be finite and > 0 milliseconds, got {v}")
            }
            Error::InvalidEvidence(v) => {
                write!(f, "evidence must be finite and >= 0, got {v}")
            }
        }
    }
}

impl core::error::Error for Error {}
