//! The one error type of this crate.

use core::fmt;

/// Why a [`Config`](crate::Config) was rejected by [`build`](crate::Config::build).
///
/// Each variant carries the offending value (and, where the bound is another
/// setting, that setting too) so that the message names both.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// `confidence` was NaN or not strictly between 0 and 1.
    InvalidConfidence(f64),
    /// `open_below` was NaN or not strictly between 0 and 1.
    InvalidOpenBelow(f64),
    /// `min_strength` was NaN, infinite or negative.
    InvalidMinStrength(f64),
    /// `cooldown_ms` was zero.
    InvalidCooldown(u64),
    /// `cooldown_factor` was NaN, infinite or below 1.
    InvalidCooldownFactor(f64),
    /// `max_cooldown_ms` was below `cooldown_ms`.
    InvalidMaxCooldown {
        /// The rejected `max_cooldown_ms`.
        max_cooldown_ms: u64,
        /// The `cooldown_ms` it must not be below.
        cooldown_ms: u64,
    },
    /// `max_probes` was zero.
    InvalidMaxProbes(u32),
    /// `probes_to_close` was zero or above `max_probes`.
    InvalidProbesToClose {
        /// The rejected `probes_to_close`.
        probes_to_close: u32,
        /// The `max_probes` it must not exceed.
        max_probes: u32,
    },
    /// `half_life_ms` was zero.
    InvalidHalfLife(u64),
    /// The success value of a value-paced cooldown was NaN, infinite or not
    /// above 0.
    InvalidSuccessValue(f64),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::InvalidConfidence(v) => {
                write!(f, "confidence must be strictly between 0 and 1, got {v}")
            }
            Error::InvalidOpenBelow(v) => {
                write!(f, "open_below must be strictly between 0 and 1, got {v}")
            }
            Error::InvalidMinStrength(v) => {
                write!(f, "min_strength must be finite and >= 0, got {v}")
            }
            Error::InvalidCooldown(v) => write!(f, "cooldown_ms must be at least 1, got {v}"),
            Error::InvalidCooldownFactor(v) => {
                write!(f, "cooldown_factor must be finite and >= 1, got {v}")
            }
            Error::InvalidMaxCooldown {
                max_cooldown_ms,
                cooldown_ms,
            } => write!(
                f,
                "max_cooldown_ms must be at least cooldown_ms ({cooldown_ms}), got {max_cooldown_ms}"
            ),
            Error::InvalidMaxProbes(v) => write!(f, "max_probes must be at least 1, got {v}"),
            Error::InvalidProbesToClose {
                probes_to_close,
                max_probes,
            } => write!(
                f,
                "probes_to_close must be between 1 and max_probes ({max_probes}), got {probes_to_close}"
            ),
            Error::InvalidHalfLife(v) => write!(f, "half_life_ms must be at least 1, got {v}"),
            Error::InvalidSuccessValue(v) => write!(
                f,
                "the success value pacing the cooldown must be finite and > 0, got {v}"
            ),
        }
    }
}

impl core::error::Error for Error {}
