//! The one error type of this crate.

use core::fmt;

/// Why a [`Beta`](crate::Beta) could not be built or updated.
///
/// Each variant carries the offending value so that the message names it.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// `alpha` was NaN, infinite, or not greater than zero.
    InvalidAlpha(f64),
    /// `beta` was NaN, infinite, or not greater than zero.
    InvalidBeta(f64),
    /// Evidence passed to [`Beta::update`](crate::Beta::update) was NaN, infinite or negative.
    InvalidEvidence(f64),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::InvalidAlpha(v) => write!(f, "alpha must be finite and > 0, got {v}"),
            Error::InvalidBeta(v) => write!(f, "beta must be finite and > 0, got {v}"),
            Error::InvalidEvidence(v) => write!(f, "evidence must be finite and >= 0, got {v}"),
        }
    }
}

impl core::error::Error for Error {}
