//! The one error type of this crate.

use core::fmt;

/// Why a [`Config`](crate::Config) was rejected by [`build`](crate::Config::build).
///
/// Each variant carries the offending value, and the message names it together
/// with the bound it broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// `max_attempts` was zero: a call makes at least its first attempt.
    InvalidMaxAttempts(u32),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::InvalidMaxAttempts(v) => write!(f, "max_attempts must be at least 1, got {v}"),
        }
    }
}

impl core::error::Error for Error {}
