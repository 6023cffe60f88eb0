//! The one error type of this crate.

use core::fmt;

use crate::fixed_window::FixedWindowConfig;
use crate::ratio::RatioConfig;

/// Why a budget configuration was rejected by its `build()`.
///
/// Each variant carries the offending value so that the message names it, together
/// with the bound it broke.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// `max_cost_per_window` was zero or above [`FixedWindowConfig::MAX_COST`].
    InvalidMaxCost(u32),
    /// `window_ms` was zero.
    InvalidWindow(u64),
    /// `percent` was NaN, negative or above [`RatioConfig::MAX_PERCENT`].
    InvalidPercent(f64),
    /// `ttl_ms` was outside [`RatioConfig::MIN_TTL_MS`]`..=`[`RatioConfig::MAX_TTL_MS`].
    InvalidTtl(u64),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::InvalidMaxCost(v) => write!(
                f,
                "max_cost_per_window must be between 1 and {}, got {v}",
                FixedWindowConfig::MAX_COST
            ),
            Error::InvalidWindow(v) => write!(f, "window_ms must be at least 1, got {v}"),
            Error::InvalidPercent(v) => write!(
                f,
                "percent must be between 0 and {}, got {v}",
                RatioConfig::MAX_PERCENT
            ),
            Error::InvalidTtl(v) => write!(
                f,
                "ttl_ms must be between {} and {}, got {v}",
                RatioConfig::MIN_TTL_MS,
                RatioConfig::MAX_TTL_MS
            ),
        }
    }
}

impl core::error::Error for Error {}
