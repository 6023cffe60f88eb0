//! [`Delays`]: a backoff as an `Iterator<Item = Duration>`.

use core::iter::FusedIterator;
use core::time::Duration;

use crate::backoff::Backoff;
use crate::mix::SplitMix64;
use crate::nanos;
use crate::schedule::{Exponential, Schedule};

/// The delays of a [`Backoff`] after attempts 1, 2, 3, ..., as an iterator.
///
/// Made by [`Backoff::delays`]. It holds the backoff, the number of delays
/// yielded, the previous delay (for decorrelated jitter) and a SplitMix64
/// generator seeded by the caller, 8 bytes of state: the same seed gives the same
/// delays on every run and every target. Each step is exactly
/// [`Backoff::delay_after`] with the previous delay and the generator's next word.
/// It never sleeps; a retry loop takes the next delay and sleeps on it however it
/// likes (a tokio timer, a blocking sleep, a simulator advancing a fake clock).
///
/// It ends after the config's [`max_retries`](crate::Config::with_max_retries)
/// delays, if set, and otherwise never ends: past attempt `u32::MAX` it keeps
/// yielding the delay of that attempt.
#[derive(Clone, Debug)]
pub struct Delays<S = Exponential> {
    backoff: Backoff<S>,
    rng: SplitMix64,
    retries: u32,
    /// The previous delay, in nanoseconds.
    previous: u128,
    /// Whether the schedule has reached the max delay and, never decreasing,
    /// will stay there: then it need not be computed again.
    at_cap: bool,
}

impl<S> Delays<S> {
    pub(crate) fn new(backoff: Backoff<S>, seed: u64) -> Delays<S> {
        let previous = nanos::of(backoff.config().base_delay());
        Delays {
            backoff,
            rng: SplitMix64::new(seed),
            retries: 0,
            previous,
            at_cap: false,
        }
    }

    /// How many delays have been yielded (saturating at `u32::MAX`).
    pub const fn retries(&self) -> u32 {
        self.retries
    }

    /// The backoff this iterator follows.
    pub const fn backoff(&self) -> &Backoff<S> {
        &self.backoff
    }

    fn remaining(&self) -> Option<u32> {
        let max = self.backoff.config().max_retries()?;
        Some(max.saturating_sub(self.retries))
    }
}

impl<S: Schedule> Iterator for Delays<S> {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        if self.remaining() == Some(0) {
            return None;
        }
        let attempt = self.retries.saturating_add(1);
        let max = nanos::of(self.backoff.config().max_delay());
        let scheduled = if self.at_cap {
            max
        } else {
            let scheduled = self.backoff.scheduled_nanos(attempt);
            self.at_cap = scheduled == max && self.backoff.config().schedule().is_non_decreasing();
            scheduled
        };
        let random = self.rng.next_u64();
        let delay = self
            .backoff
            .jitter_around(scheduled, attempt, self.previous, random);
        self.retries = attempt;
        self.previous = nanos::of(delay);
        Some(delay)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self.remaining() {
            Some(n) => {
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                (n, Some(n))
            }
            None => (usize::MAX, None),
        }
    }
}

impl<S: Schedule> FusedIterator for Delays<S> {}
