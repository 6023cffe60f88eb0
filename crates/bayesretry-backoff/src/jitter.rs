//! [`Jitter`]: how a delay is randomised so that clients stop retrying in step.

use core::time::Duration;

use crate::error::Error;
use crate::mix;
use crate::nanos;

/// How the scheduled delay `d` is randomised.
///
/// Many clients that fail together (an outage, a rate limit reset) and back off on
/// the same schedule retry together too, and fail together again. Jitter spreads
/// them out. Every variant draws from an interval `[lo, hi]`; `random` (a caller's
/// `u64`) picks the point linearly, as `lo + (hi - lo) · random / 2^64` in whole
/// nanoseconds, so `0` gives `lo` and `u64::MAX` the nanosecond just below `hi`.
/// Whatever the jitter, the result is then capped at the maximum delay: no jitter
/// can make a delay exceed it.
///
/// `d` here is the schedule's delay already capped at the maximum, so at the cap
/// the spread remains (full jitter keeps drawing from `[0, max]` rather than
/// piling every client onto `max`).
///
/// The variants follow Marc Brooker's "Exponential Backoff And Jitter" (AWS
/// Architecture Blog, 2015) where it names them.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Jitter {
    /// `d` itself. Deterministic; `random` is ignored.
    None,
    /// Uniform in `[0, d]`: the widest spread, and the least total load on a
    /// recovering server. A delay may come out near zero.
    Full,
    /// Uniform in `[d/2, d]`: keeps at least half of the schedule's delay.
    Equal,
    /// Uniform in `[base, 3 · previous]` (the top capped at the maximum), where
    /// `previous` is the delay returned for the attempt before: successive delays
    /// wander upward from the base instead of following a fixed curve. The
    /// [iterator](crate::Delays) and [`Backoff::delay_after`](crate::Backoff::delay_after)
    /// carry `previous`; the memoryless [`Backoff::delay`](crate::Backoff::delay)
    /// uses the schedule's delay for the attempt before in its place. Needs a base
    /// delay above zero.
    Decorrelated,
    /// Uniform in `[d · (1 - r), d · (1 + r)]` for the spread `r` in `[0, 1]`: the
    /// delay varies by ±`100 · r` %, then is capped.
    Proportional(f64),
    /// Uniform in `[d/2, d]` like [`Equal`](Jitter::Equal), but the point is chosen
    /// by a hash of `key` and the attempt number (SplitMix64) instead of `random`.
    /// One key always gets the same delays, so a client's schedule is reproducible
    /// without storing a seed, while different keys spread across the interval.
    /// Build the key from a name with [`Jitter::hashed`].
    Hashed {
        /// The caller's key: a client id, a host, a request id.
        key: u64,
    },
}

impl Jitter {
    /// [`Jitter::Hashed`] keyed by a name (hashed with FNV-1a, then mixed), so that
    /// `Jitter::hashed("worker-17")` is the same on every run and every machine.
    ///
    /// ```
    /// use bayesretry_backoff::Jitter;
    /// assert_eq!(Jitter::hashed("worker-17"), Jitter::hashed("worker-17"));
    /// assert_ne!(Jitter::hashed("worker-17"), Jitter::hashed("worker-18"));
    /// ```
    pub const fn hashed(name: &str) -> Jitter {
        Jitter::Hashed {
            key: mix::key_of(name.as_bytes()),
        }
    }

    /// Checks the jitter against the base delay it will be used with.
    pub(crate) fn validate(self, base: Duration) -> Result<(), Error> {
        match self {
            Jitter::Proportional(spread) if !(0.0..=1.0).contains(&spread) => {
                Err(Error::InvalidSpread(spread))
            }
            Jitter::Decorrelated if base.is_zero() => Err(Error::DecorrelatedWithZeroBase),
            _ => Ok(()),
        }
    }

    /// The jittered delay in nanoseconds, before the final cap.
    #[inline]
    pub(crate) fn apply(self, span: Span, attempt: u32, random: u64) -> u128 {
        let d = span.scheduled;
        match self {
            Jitter::None => d,
            Jitter::Full => nanos::between(0, d, random),
            Jitter::Equal => nanos::between(d - d / 2, d, random),
            Jitter::Decorrelated => {
                let top = span.previous.saturating_mul(3).min(span.max).max(span.base);
                nanos::between(span.base, top, random)
            }
            Jitter::Proportional(spread) => {
                // `as` saturates and maps NaN to 0; the spread is validated anyway
                let reach = (d as f64 * spread) as u128;
                nanos::between(d.saturating_sub(reach), d.saturating_add(reach), random)
            }
            Jitter::Hashed { key } => nanos::between(d - d / 2, d, mix::keyed(key, attempt)),
        }
    }
}

/// The nanosecond figures one jitter draw depends on; `base <= max`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Span {
    /// The schedule's delay, capped at `max`.
    pub(crate) scheduled: u128,
    /// The base delay.
    pub(crate) base: u128,
    /// The maximum delay.
    pub(crate) max: u128,
    /// The delay returned for the attempt before.
    pub(crate) previous: u128,
}
