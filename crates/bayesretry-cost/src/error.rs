//! The one error type of this crate.

use core::fmt;

/// Why a [`CostModel`](crate::CostModel) could not be built.
///
/// Each variant carries the offending value, and the message names it together
/// with the bound it broke.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The success value was NaN, infinite, or not greater than zero.
    InvalidSuccessValue(f64),
    /// The attempt cost was NaN, infinite, or negative.
    InvalidAttemptCost(f64),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::InvalidSuccessValue(v) => {
                write!(f, "success value must be finite and > 0, got {v}")
            }
            Error::InvalidAttemptCost(v) => {
                write!(f, "attempt cost must be finite and >= 0, got {v}")
            }
        }
    }
}

impl core::error::Error for Error {}
