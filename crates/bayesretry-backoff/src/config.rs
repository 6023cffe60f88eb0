//! [`Config`]: the settings of a backoff, checked once by [`Config::build`].

use core::time::Duration;

use crate::backoff::Backoff;
use crate::error::Error;
use crate::jitter::Jitter;
use crate::schedule::{Exponential, Schedule};

/// The settings of a [`Backoff`]: a schedule, its base and maximum delay, a jitter,
/// and how many delays the [iterator](crate::Delays) yields.
///
/// Set what differs from the defaults with the `with_*` methods, then call
/// [`build`](Config::build), which checks everything at once; a [`Backoff`] exists
/// only for a valid config.
///
/// # Default
///
/// | setting | default |
/// |---|---|
/// | schedule | [`Exponential`], factor 2 |
/// | base delay | 500 ms |
/// | max delay | 30 s |
/// | jitter | [`Jitter::Full`] |
/// | max retries | none: the iterator never ends by itself |
///
/// The base delay and the doubling are those of the official OpenAI and Anthropic
/// Python clients. Their cap is 8 s; this one is 30 s, because here the retry
/// policy, not the schedule, decides when to stop, and a server's `Retry-After`
/// takes over from the schedule whenever it asks for longer.
///
/// ```
/// use core::time::Duration;
/// use bayesretry_backoff::{Config, Error, Jitter};
///
/// let backoff = Config::new()
///     .with_factor(1.5)
///     .with_base_delay(Duration::from_millis(200))
///     .with_jitter(Jitter::Equal)
///     .build()?;
/// assert_eq!(backoff.scheduled_delay(3), Duration::from_millis(450));
///
/// let err = Config::new().with_factor(0.5).build().unwrap_err();
/// assert_eq!(err, Error::InvalidFactor(0.5));
/// assert_eq!(err.to_string(), "exponential factor must be finite and >= 1, got 0.5");
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config<S = Exponential> {
    pub(crate) schedule: S,
    pub(crate) base_delay: Duration,
    pub(crate) max_delay: Duration,
    pub(crate) jitter: Jitter,
    pub(crate) max_retries: Option<u32>,
}

impl Config<Exponential> {
    /// The default config (see [`Config`]): exponential, factor 2, 500 ms up to
    /// 30 s, full jitter, no limit on retries.
    pub const fn new() -> Config<Exponential> {
        Config {
            schedule: Exponential::new(2.0),
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            jitter: Jitter::Full,
            max_retries: None,
        }
    }

    /// Sets the exponential growth factor (default 2). Must be finite and at least
    /// 1; [`build`](Config::build) checks.
    pub const fn with_factor(mut self, factor: f64) -> Config<Exponential> {
        self.schedule = Exponential::new(factor);
        self
    }
}

impl Default for Config<Exponential> {
    fn default() -> Config<Exponential> {
        Config::new()
    }
}

impl<S> Config<S> {
    /// Replaces the schedule: [`Constant`](crate::Constant),
    /// [`Linear`](crate::Linear), [`Exponential`], or any `Fn(u32) -> Duration`.
    pub fn with_schedule<T: Schedule>(self, schedule: T) -> Config<T> {
        Config {
            schedule,
            base_delay: self.base_delay,
            max_delay: self.max_delay,
            jitter: self.jitter,
            max_retries: self.max_retries,
        }
    }

    /// Sets the base delay: the schedule's delay after the first failure, and the
    /// floor of decorrelated jitter. Must not exceed the max delay.
    pub const fn with_base_delay(mut self, base_delay: Duration) -> Self {
        self.base_delay = base_delay;
        self
    }

    /// Sets the maximum delay. No delay the backoff returns exceeds it, whatever
    /// the schedule, the jitter and the attempt number.
    pub const fn with_max_delay(mut self, max_delay: Duration) -> Self {
        self.max_delay = max_delay;
        self
    }

    /// Sets the jitter.
    pub const fn with_jitter(mut self, jitter: Jitter) -> Self {
        self.jitter = jitter;
        self
    }

    /// Makes the [iterator](crate::Delays) end after `max_retries` delays. The
    /// memoryless [`Backoff::delay`] ignores it.
    pub const fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = Some(max_retries);
        self
    }

    /// Lets the iterator run without end (the default): whoever drives it decides
    /// when to stop.
    pub const fn without_max_retries(mut self) -> Self {
        self.max_retries = None;
        self
    }

    /// The schedule.
    pub const fn schedule(&self) -> &S {
        &self.schedule
    }

    /// The base delay.
    pub const fn base_delay(&self) -> Duration {
        self.base_delay
    }

    /// The maximum delay.
    pub const fn max_delay(&self) -> Duration {
        self.max_delay
    }

    /// The jitter.
    pub const fn jitter(&self) -> Jitter {
        self.jitter
    }

    /// How many delays the iterator yields, if limited.
    pub const fn max_retries(&self) -> Option<u32> {
        self.max_retries
    }

    /// Checks the config and returns the [`Backoff`] it describes.
    ///
    /// # Errors
    ///
    /// - [`Error::BaseAboveMax`] when the base delay exceeds the max delay;
    /// - the schedule's own error, such as [`Error::InvalidFactor`] for an
    ///   exponential factor that is NaN, infinite or below 1;
    /// - [`Error::InvalidSpread`] for a proportional jitter spread outside [0, 1]
    ///   or NaN;
    /// - [`Error::DecorrelatedWithZeroBase`] for decorrelated jitter with a zero
    ///   base delay.
    pub fn build(self) -> Result<Backoff<S>, Error>
    where
        S: Schedule,
    {
        if self.base_delay > self.max_delay {
            return Err(Error::BaseAboveMax {
                base: self.base_delay,
                max: self.max_delay,
            });
        }
        self.schedule.validate()?;
        self.jitter.validate(self.base_delay)?;
        Ok(Backoff::from_valid(self))
    }
}
