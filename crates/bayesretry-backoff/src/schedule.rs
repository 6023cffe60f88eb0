//! [`Schedule`]: how the delay grows with the attempt number, before jitter.

use core::time::Duration;

use crate::error::Error;
use crate::nanos;
use crate::power::scaled_power;

/// How long to wait after a failed attempt, before jitter and before the cap.
///
/// `attempt` is the number of the attempt that just failed: 1 for the first call,
/// 2 for the first retry, and so on (0 is read as 1). `base` is the configured
/// [base delay](crate::Config::with_base_delay).
///
/// A schedule may return any duration, however large: the [`Backoff`](crate::Backoff)
/// caps it at the maximum delay, both before jitter (so jitter keeps spreading
/// clients apart once the schedule has reached the cap) and after.
///
/// The three built-in schedules are [`Constant`], [`Linear`] and [`Exponential`].
/// Any `Fn(u32) -> Duration` is a schedule too, a plain `fn` pointer or a closure
/// holding a table, called with the attempt number alone:
///
/// ```
/// use core::time::Duration;
/// use bayesretry_backoff::{Config, Jitter};
///
/// let steps = [1, 1, 2, 3, 5, 8];
/// let fibonacci = move |attempt: u32| {
///     let i = (attempt.max(1) - 1) as usize;
///     Duration::from_secs(steps.get(i).copied().unwrap_or(13))
/// };
/// let backoff = Config::new()
///     .with_schedule(fibonacci)
///     .with_jitter(Jitter::None)
///     .build()?;
/// assert_eq!(backoff.delay(5, 0), Duration::from_secs(5));
/// assert_eq!(backoff.delay(1000, 0), Duration::from_secs(13));
/// # Ok::<(), bayesretry_backoff::Error>(())
/// ```
pub trait Schedule {
    /// The delay after failed attempt `attempt`, before jitter and the cap.
    fn delay(&self, base: Duration, attempt: u32) -> Duration;

    /// Checks the schedule's own parameters; [`Config::build`](crate::Config::build)
    /// calls it. The default accepts everything.
    fn validate(&self) -> Result<(), Error> {
        Ok(())
    }

    /// Whether the delay never decreases as the attempt number grows. When it
    /// does not, the [iterator](crate::Delays) stops computing the schedule once
    /// it has reached the max delay. The default, `false`, is always safe; the
    /// built-in schedules return `true`.
    fn is_non_decreasing(&self) -> bool {
        false
    }
}

impl<F> Schedule for F
where
    F: Fn(u32) -> Duration,
{
    #[inline]
    fn delay(&self, _base: Duration, attempt: u32) -> Duration {
        self(attempt)
    }
}

/// The base delay after every attempt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Constant;

impl Schedule for Constant {
    #[inline]
    fn delay(&self, base: Duration, _attempt: u32) -> Duration {
        base
    }

    fn is_non_decreasing(&self) -> bool {
        true
    }
}

/// `base + step · (attempt - 1)`: the delay grows by `step` after each failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Linear {
    step: Duration,
}

impl Linear {
    /// A schedule growing by `step` per attempt.
    pub const fn new(step: Duration) -> Linear {
        Linear { step }
    }

    /// The growth per attempt.
    pub const fn step(&self) -> Duration {
        self.step
    }
}

impl Schedule for Linear {
    #[inline]
    fn delay(&self, base: Duration, attempt: u32) -> Duration {
        let n = u128::from(attempt.saturating_sub(1));
        // below 2^94 · 2^32 + 2^94: no overflow
        nanos::to_duration(nanos::of(base) + nanos::of(self.step) * n)
    }

    fn is_non_decreasing(&self) -> bool {
        true
    }
}

/// `base · factor^(attempt - 1)`: the delay is multiplied by `factor` after each
/// failure.
///
/// The factor must be finite and at least 1, which [`Config::build`](crate::Config::build)
/// checks. The result saturates: attempt 60 with factor 2 is not a wrapped-around
/// small number but the longest duration, which the backoff then caps. The
/// computation is exact for integral factors and never decreases in the attempt
/// number for any factor, even one a hair above 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exponential {
    factor: f64,
}

impl Exponential {
    /// A schedule multiplying the delay by `factor` per attempt.
    pub const fn new(factor: f64) -> Exponential {
        Exponential { factor }
    }

    /// The growth factor per attempt.
    pub const fn factor(&self) -> f64 {
        self.factor
    }
}

impl Default for Exponential {
    /// Doubling: factor 2.
    fn default() -> Exponential {
        Exponential::new(2.0)
    }
}

impl Schedule for Exponential {
    #[inline]
    fn delay(&self, base: Duration, attempt: u32) -> Duration {
        let n = attempt.saturating_sub(1);
        nanos::to_duration(scaled_power(nanos::of(base), self.factor, n))
    }

    fn validate(&self) -> Result<(), Error> {
        if !(self.factor >= 1.0 && self.factor < f64::INFINITY) {
            return Err(Error::InvalidFactor(self.factor));
        }
        Ok(())
    }

    /// True for every factor [`validate`](Schedule::validate) accepts.
    fn is_non_decreasing(&self) -> bool {
        self.validate().is_ok()
    }
}
