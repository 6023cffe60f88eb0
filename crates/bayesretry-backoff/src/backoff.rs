//! [`Backoff`]: a validated config, and the pure functions from an attempt number
//! and a random word to a delay.

use core::time::Duration;

use crate::config::Config;
use crate::delays::Delays;
use crate::jitter::{Jitter, Span};
use crate::nanos;
use crate::schedule::{Exponential, Schedule};

/// A validated backoff: the delay to wait after each failed attempt.
///
/// Made by [`Config::build`]; every `Backoff` has a base delay at most its max
/// delay, a valid schedule and a valid jitter. It is a policy, not a timer: it
/// never sleeps, reads no clock and owns no random generator. Each delay is a pure
/// function of the attempt number and a random `u64` the caller supplies
/// ([`delay`](Backoff::delay)), or comes from an iterator seeded by the caller
/// ([`delays`](Backoff::delays)); whatever drives the retries does the sleeping.
///
/// A delay is computed in three steps:
///
/// 1. the [schedule](Schedule) gives the delay for the attempt, saturating instead
///    of overflowing, and it is capped at the max delay;
/// 2. the [jitter](crate::Jitter) draws a delay around it;
/// 3. the result is capped at the max delay again.
///
/// The cap before jitter keeps the spread alive once the schedule reaches the cap
/// (otherwise every client would wait exactly the max delay, in step); the cap
/// after jitter makes the max delay a hard bound for jitters that can draw above
/// the schedule (proportional, decorrelated). Adding jitter after the cap, as some
/// libraries do, can nearly double the promised maximum.
///
/// # The first delays are worked out once
///
/// A retry loop asks for the delay after attempt 1, 2, 3 far more often than
/// after attempt 40, and the schedule's exact arithmetic (128-bit, double-double
/// for a non-integral factor) is the dearest part of a delay. So a backoff built
/// on a schedule that [never decreases](Schedule::is_non_decreasing) — every
/// built-in one — works out the capped schedule for attempts 0 to 7 when it is
/// built, and a delay for those attempts costs only its jitter. A schedule that
/// does not say it is non-decreasing (a closure, say) is asked on every call,
/// never ahead of time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff<S = Exponential> {
    config: Config<S>,
    /// The capped schedule in nanoseconds for attempts `0..CACHED`, when the
    /// schedule is a built-in (non-decreasing) one and the delay fits a `u64`;
    /// `NOT_CACHED` otherwise.
    scheduled: [u64; CACHED],
}

/// Attempts whose scheduled delay a backoff works out when it is built.
const CACHED: usize = 8;
/// A slot of the table with no delay worked out.
const NOT_CACHED: u64 = u64::MAX;

impl Default for Backoff<Exponential> {
    /// The backoff of the default [`Config`].
    fn default() -> Backoff<Exponential> {
        Backoff::from_valid(Config::new())
    }
}

impl<S> Backoff<S> {
    /// The config this backoff was built from.
    pub const fn config(&self) -> &Config<S> {
        &self.config
    }
}

impl<S: Schedule> Backoff<S> {
    /// Wraps a config that [`Config::build`] has checked, working out the first
    /// delays of a non-decreasing schedule.
    pub(crate) fn from_valid(config: Config<S>) -> Backoff<S> {
        let mut backoff = Backoff {
            config,
            scheduled: [NOT_CACHED; CACHED],
        };
        if backoff.config.schedule.is_non_decreasing() {
            let mut table = [NOT_CACHED; CACHED];
            for (attempt, slot) in (0_u32..).zip(table.iter_mut()) {
                *slot = u64::try_from(backoff.scheduled_nanos(attempt)).unwrap_or(NOT_CACHED);
            }
            backoff.scheduled = table;
        }
        backoff
    }

    /// The schedule's delay after failed attempt `attempt` (1 for the first call),
    /// capped at the max delay, before jitter. For the built-in schedules it never
    /// decreases as `attempt` grows.
    ///
    /// ```
    /// use core::time::Duration;
    /// use bayesretry_backoff::Config;
    ///
    /// let backoff = Config::new().build()?; // 500 ms, doubling, up to 30 s
    /// assert_eq!(backoff.scheduled_delay(1), Duration::from_millis(500));
    /// assert_eq!(backoff.scheduled_delay(3), Duration::from_secs(2));
    /// assert_eq!(backoff.scheduled_delay(u32::MAX), Duration::from_secs(30));
    /// # Ok::<(), bayesretry_backoff::Error>(())
    /// ```
    pub fn scheduled_delay(&self, attempt: u32) -> Duration {
        nanos::to_duration(self.scheduled_nanos(attempt))
    }

    /// The delay after failed attempt `attempt` (1 for the first call), with the
    /// jitter's point chosen by `random`, linearly: `0` gives the bottom of the
    /// jitter's interval and `u64::MAX` (just under) its top. Pass a uniformly
    /// random word for real jitter, or a fixed one to reproduce a delay.
    ///
    /// This form has no memory, so
    /// [`Jitter::Decorrelated`](crate::Jitter::Decorrelated) takes the schedule's
    /// delay for the attempt before as the previous delay; use
    /// [`delay_after`](Backoff::delay_after) or the [iterator](Backoff::delays) to
    /// carry the real one. Never exceeds the max delay; never panics, for any
    /// `attempt` up to `u32::MAX`.
    ///
    /// ```
    /// use core::time::Duration;
    /// use bayesretry_backoff::{Config, Jitter};
    ///
    /// let backoff = Config::new().with_jitter(Jitter::Full).build()?;
    /// // full jitter draws from [0, 2 s] after attempt 3
    /// assert_eq!(backoff.delay(3, 0), Duration::ZERO);
    /// assert_eq!(backoff.delay(3, 1 << 63), Duration::from_secs(1));
    /// assert!(backoff.delay(3, u64::MAX) < Duration::from_secs(2));
    /// # Ok::<(), bayesretry_backoff::Error>(())
    /// ```
    #[inline]
    pub fn delay(&self, attempt: u32, random: u64) -> Duration {
        // The common case in 64-bit arithmetic: a delay worked out when the
        // backoff was built, under no, full or equal jitter. The result is the
        // one the general path gives: `between` of a span below 2^64 ns is
        // `⌊span · random / 2^64⌋` above its low end, and the cached delay is
        // already capped.
        if let Some(&scheduled) = usize::try_from(attempt)
            .ok()
            .and_then(|at| self.scheduled.get(at))
        {
            let jittered = match self.config.jitter {
                _ if scheduled == NOT_CACHED => None,
                Jitter::None => Some(scheduled),
                Jitter::Full => Some(nanos::fraction_u64(scheduled, random)),
                Jitter::Equal => {
                    let half = scheduled / 2;
                    Some(scheduled - half + nanos::fraction_u64(half, random))
                }
                _ => None,
            };
            if let Some(nanos) = jittered {
                return nanos::from_u64(nanos);
            }
        }
        self.delay_general(attempt, random)
    }

    /// [`delay`](Backoff::delay) for every schedule and jitter, in 128-bit
    /// arithmetic.
    #[inline(never)]
    fn delay_general(&self, attempt: u32, random: u64) -> Duration {
        // only decorrelated jitter reads the previous delay; spare the others the
        // cost of a second schedule evaluation
        let previous = match self.config.jitter {
            Jitter::Decorrelated => self.scheduled_nanos(attempt.saturating_sub(1)),
            _ => 0,
        };
        self.jittered(attempt, previous, random)
    }

    /// Like [`delay`](Backoff::delay), with the delay returned for the attempt
    /// before given explicitly; only
    /// [`Jitter::Decorrelated`](crate::Jitter::Decorrelated) reads it. This is the
    /// step the [iterator](Backoff::delays) takes, for a caller that keeps its own
    /// state.
    pub fn delay_after(&self, attempt: u32, previous: Duration, random: u64) -> Duration {
        self.jittered(attempt, nanos::of(previous), random)
    }

    /// [`delay`](Backoff::delay) with the random word drawn from `rng`: exactly one
    /// `next_u64` call, whether or not the jitter uses it.
    #[cfg(feature = "rand")]
    pub fn delay_from_rng<R>(&self, attempt: u32, rng: &mut R) -> Duration
    where
        R: rand_core::Rng + ?Sized,
    {
        self.delay(attempt, rng.next_u64())
    }

    /// An iterator over the delays after attempts 1, 2, 3, ..., its jitter drawn
    /// from a SplitMix64 generator seeded with `seed`: the same seed gives the same
    /// delays. It ends after [`max_retries`](Config::with_max_retries) delays, if
    /// set; otherwise it never ends.
    ///
    /// ```
    /// use core::time::Duration;
    /// use bayesretry_backoff::{Config, Jitter};
    ///
    /// let backoff = Config::new()
    ///     .with_jitter(Jitter::None)
    ///     .with_max_retries(4)
    ///     .build()?;
    /// let delays: Vec<u64> = backoff.delays(0).map(|d| d.as_millis() as u64).collect();
    /// assert_eq!(delays, [500, 1000, 2000, 4000]);
    /// # Ok::<(), bayesretry_backoff::Error>(())
    /// ```
    pub fn delays(&self, seed: u64) -> Delays<S>
    where
        S: Clone,
    {
        Delays::new(self.clone(), seed)
    }

    /// The schedule's delay in nanoseconds, capped at the max delay.
    #[inline]
    pub(crate) fn scheduled_nanos(&self, attempt: u32) -> u128 {
        if let Some(&cached) = usize::try_from(attempt)
            .ok()
            .and_then(|at| self.scheduled.get(at))
        {
            if cached != NOT_CACHED {
                return u128::from(cached);
            }
        }
        let config = &self.config;
        let scheduled = config.schedule.delay(config.base_delay, attempt);
        nanos::of(scheduled).min(nanos::of(config.max_delay))
    }

    fn jittered(&self, attempt: u32, previous: u128, random: u64) -> Duration {
        self.jitter_around(self.scheduled_nanos(attempt), attempt, previous, random)
    }

    /// Steps 2 and 3: jitter around `scheduled` (already capped), then cap.
    pub(crate) fn jitter_around(
        &self,
        scheduled: u128,
        attempt: u32,
        previous: u128,
        random: u64,
    ) -> Duration {
        let max = nanos::of(self.config.max_delay);
        let span = Span {
            scheduled,
            base: nanos::of(self.config.base_delay),
            max,
            previous,
        };
        let jittered = self.config.jitter.apply(span, attempt, random);
        nanos::to_duration(jittered.min(max))
    }
}
