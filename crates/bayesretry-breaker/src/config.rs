//! [`Config`]: the settings of a breaker, checked once by [`Config::build`].

use bayesretry_beta::Beta;

use crate::breaker::Breaker;
use crate::error::Error;

/// The settings of a [`Breaker`]: a small `Copy` value built with `with_*` setters
/// and checked by [`build`](Config::build), which returns the breaker itself.
///
/// # Default
///
/// - `prior`: Beta(1, 1), the uniform prior
/// - `confidence`: 0.95
/// - `open_below`: 0.05
/// - `min_strength`: 10 outcomes above the prior
/// - `cooldown_ms`: 10 000; `cooldown_factor`: 2; `max_cooldown_ms`: 300 000
/// - `max_probes`: 1; `probes_to_close`: 1
/// - no decay (no half-life)
/// - no value pacing: the cooldown follows the fixed schedule above
/// - the failure run not read: only the credible bound opens the breaker
///
/// With these, a run of failures on a fresh endpoint opens the breaker at the 58th:
/// only then does the 95 % upper bound of Beta(1, 59) fall below 5 %.
///
/// ```
/// use bayesretry_breaker::{Config, Error};
/// let breaker = Config::new()
///     .with_open_below(0.2)
///     .with_cooldown_ms(5_000)
///     .with_half_life_ms(60_000)
///     .build()
///     .unwrap();
/// assert_eq!(breaker.config().open_below(), 0.2);
/// assert_eq!(
///     Config::new().with_confidence(1.0).build().unwrap_err(),
///     Error::InvalidConfidence(1.0)
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    prior: Beta,
    confidence: f64,
    open_below: f64,
    min_strength: f64,
    cooldown_ms: u64,
    cooldown_factor: f64,
    max_cooldown_ms: u64,
    max_probes: u32,
    probes_to_close: u32,
    half_life_ms: Option<u64>,
    success_value: Option<f64>,
    reads_failure_run: bool,
}

impl Config {
    /// The defaults listed above.
    pub const fn new() -> Config {
        Config {
            prior: Beta::uniform(),
            confidence: 0.95,
            open_below: 0.05,
            min_strength: 10.0,
            cooldown_ms: 10_000,
            cooldown_factor: 2.0,
            max_cooldown_ms: 300_000,
            max_probes: 1,
            probes_to_close: 1,
            half_life_ms: None,
            success_value: None,
            reads_failure_run: false,
        }
    }

    /// The belief about the success rate before any outcome: where the posterior
    /// starts, and where it returns when the breaker closes.
    pub const fn with_prior(self, prior: Beta) -> Self {
        Config { prior, ..self }
    }

    /// How sure the breaker must be that the endpoint is down before it opens,
    /// strictly between 0 and 1: the level of the one-sided upper credible bound it
    /// compares with `open_below`.
    pub const fn with_confidence(self, confidence: f64) -> Self {
        Config { confidence, ..self }
    }

    /// The success rate below which an endpoint counts as down, strictly between 0
    /// and 1. The breaker opens once the upper credible bound is below it.
    pub const fn with_open_below(self, open_below: f64) -> Self {
        Config { open_below, ..self }
    }

    /// How many outcomes above the prior (successes plus failures, after decay) the
    /// posterior must rest on before the breaker may open, finite and at least 0.
    /// The credible bound already accounts for thin evidence; this is a floor under
    /// it for priors that are confident on their own.
    pub const fn with_min_strength(self, min_strength: f64) -> Self {
        Config {
            min_strength,
            ..self
        }
    }

    /// How long the breaker stays open the first time, in milliseconds, at least 1.
    pub const fn with_cooldown_ms(self, cooldown_ms: u64) -> Self {
        Config {
            cooldown_ms,
            ..self
        }
    }

    /// By how much the cooldown grows each time a probe fails and the breaker opens
    /// again, finite and at least 1 (1 keeps it constant).
    pub const fn with_cooldown_factor(self, cooldown_factor: f64) -> Self {
        Config {
            cooldown_factor,
            ..self
        }
    }

    /// The longest cooldown, in milliseconds, at least `cooldown_ms`.
    pub const fn with_max_cooldown_ms(self, max_cooldown_ms: u64) -> Self {
        Config {
            max_cooldown_ms,
            ..self
        }
    }

    /// How many calls a half-open breaker admits as probes, at least 1.
    pub const fn with_max_probes(self, max_probes: u32) -> Self {
        Config { max_probes, ..self }
    }

    /// How many probe successes close the breaker, between 1 and `max_probes`.
    pub const fn with_probes_to_close(self, probes_to_close: u32) -> Self {
        Config {
            probes_to_close,
            ..self
        }
    }

    /// Lets evidence fade with this half-life, in milliseconds (at least 1); see the
    /// [crate documentation](crate#decay).
    pub const fn with_half_life_ms(self, half_life_ms: u64) -> Self {
        Config {
            half_life_ms: Some(half_life_ms),
            ..self
        }
    }

    /// Keeps evidence forever (the default).
    pub const fn without_decay(self) -> Self {
        Config {
            half_life_ms: None,
            ..self
        }
    }

    /// Paces the cooldown by the value of information: each time the breaker
    /// opens, and each time a probe fails, it waits
    /// `sqrt(2 · D / (r · (success_value − 1)))` before the next probe, where
    /// `success_value` is what a successful call is worth in attempts (`V / c`),
    /// `r` the call rate the breaker measured before it opened and `D` the time
    /// it has been open plus one half-life — clamped to [`cooldown_ms`,
    /// `max_cooldown_ms`]. See [the crate documentation](crate#value-paced-probes)
    /// for where the rule comes from.
    ///
    /// The call rate is read from decayed evidence, so pacing needs a half-life;
    /// without one (or before any outcome), the fixed schedule applies:
    /// `cooldown_ms`, multiplied by `cooldown_factor` after each failed probe.
    ///
    /// [`cooldown_ms`]: Config::with_cooldown_ms
    /// [`max_cooldown_ms`]: Config::with_max_cooldown_ms
    pub const fn with_value_paced_cooldown(self, success_value: f64) -> Self {
        Config {
            success_value: Some(success_value),
            ..self
        }
    }

    /// The fixed cooldown schedule (the default).
    pub const fn without_value_paced_cooldown(self) -> Self {
        Config {
            success_value: None,
            ..self
        }
    }

    /// Lets a run of failures in a row open the breaker too, read as a change
    /// point ([`ChangePoint`]): when the run makes it near certain that the
    /// endpoint changed when the run began, the breaker judges the endpoint by
    /// the run rather than by the evidence from before it. It opens when the
    /// mixture of the two readings, weighed by the probability of a change,
    /// puts the success rate above `open_below` with probability under
    /// `1 − confidence`.
    ///
    /// # Why
    ///
    /// Decayed evidence of good times holds the credible bound up for as long
    /// as it lasts: with a 10 s half-life, an endpoint that served ten calls a
    /// second and then went down entirely keeps its breaker closed for about
    /// half a minute of failures. The run says the same thing within a second
    /// or two, and on an endpoint whose failures are ordinary (a flaky one) it
    /// says little, because such runs are common there. The breaker reads the
    /// run only on the way to opening: it never keeps a breaker closed that the
    /// bound would open.
    ///
    /// ```
    /// use bayesretry_breaker::{Config, State};
    ///
    /// let config = Config::new().with_open_below(0.1).with_half_life_ms(10_000);
    /// let mut plain = config.build().unwrap();
    /// let mut reading = config.with_failure_run().build().unwrap();
    /// // a minute of a healthy endpoint at ten calls a second
    /// for t in (0..60_000).step_by(100) {
    ///     let _ = plain.record(t, true);
    ///     let _ = reading.record(t, true);
    /// }
    /// // then it goes down: two seconds of failures
    /// for t in (60_000..62_000).step_by(100) {
    ///     let _ = plain.record(t, false);
    ///     let _ = reading.record(t, false);
    /// }
    /// assert_eq!(plain.state(), State::Closed);
    /// assert!(matches!(reading.state(), State::Open { .. }));
    /// ```
    ///
    /// [`ChangePoint`]: bayesretry_beta::ChangePoint
    pub const fn with_failure_run(self) -> Self {
        Config {
            reads_failure_run: true,
            ..self
        }
    }

    /// Opens on the credible bound alone (the default).
    pub const fn without_failure_run(self) -> Self {
        Config {
            reads_failure_run: false,
            ..self
        }
    }

    /// Checks every setting and returns a closed breaker with no evidence, as of
    /// time 0 (the first outcome's `now_ms` takes over from there).
    pub fn build(self) -> Result<Breaker, Error> {
        if !(self.confidence > 0.0 && self.confidence < 1.0) {
            return Err(Error::InvalidConfidence(self.confidence));
        }
        if !(self.open_below > 0.0 && self.open_below < 1.0) {
            return Err(Error::InvalidOpenBelow(self.open_below));
        }
        if !(self.min_strength >= 0.0 && self.min_strength < f64::INFINITY) {
            return Err(Error::InvalidMinStrength(self.min_strength));
        }
        if self.cooldown_ms == 0 {
            return Err(Error::InvalidCooldown(self.cooldown_ms));
        }
        if !(self.cooldown_factor >= 1.0 && self.cooldown_factor < f64::INFINITY) {
            return Err(Error::InvalidCooldownFactor(self.cooldown_factor));
        }
        if self.max_cooldown_ms < self.cooldown_ms {
            return Err(Error::InvalidMaxCooldown {
                max_cooldown_ms: self.max_cooldown_ms,
                cooldown_ms: self.cooldown_ms,
            });
        }
        if self.max_probes == 0 {
            return Err(Error::InvalidMaxProbes(self.max_probes));
        }
        if self.probes_to_close == 0 || self.probes_to_close > self.max_probes {
            return Err(Error::InvalidProbesToClose {
                probes_to_close: self.probes_to_close,
                max_probes: self.max_probes,
            });
        }
        if self.half_life_ms == Some(0) {
            return Err(Error::InvalidHalfLife(0));
        }
        if let Some(v) = self.success_value {
            if !(v > 0.0 && v < f64::INFINITY) {
                return Err(Error::InvalidSuccessValue(v));
            }
        }
        Ok(Breaker::from_checked(self))
    }

    /// The prior.
    pub const fn prior(&self) -> Beta {
        self.prior
    }

    /// The confidence level of the upper credible bound.
    pub const fn confidence(&self) -> f64 {
        self.confidence
    }

    /// The success rate below which the endpoint counts as down.
    pub const fn open_below(&self) -> f64 {
        self.open_below
    }

    /// The evidence needed above the prior before the breaker may open.
    pub const fn min_strength(&self) -> f64 {
        self.min_strength
    }

    /// The first cooldown, in milliseconds.
    pub const fn cooldown_ms(&self) -> u64 {
        self.cooldown_ms
    }

    /// The factor the cooldown grows by on each failed probe.
    pub const fn cooldown_factor(&self) -> f64 {
        self.cooldown_factor
    }

    /// The longest cooldown, in milliseconds.
    pub const fn max_cooldown_ms(&self) -> u64 {
        self.max_cooldown_ms
    }

    /// The probes a half-open breaker admits.
    pub const fn max_probes(&self) -> u32 {
        self.max_probes
    }

    /// The probe successes that close the breaker.
    pub const fn probes_to_close(&self) -> u32 {
        self.probes_to_close
    }

    /// The half-life of evidence, if it decays.
    pub const fn half_life_ms(&self) -> Option<u64> {
        self.half_life_ms
    }

    /// The success value (`V / c`) pacing the cooldown, if it is paced.
    pub const fn value_paced_cooldown(&self) -> Option<f64> {
        self.success_value
    }

    /// Whether a run of failures may open the breaker.
    pub const fn reads_failure_run(&self) -> bool {
        self.reads_failure_run
    }

    /// The cooldown after `current` when a probe fails: `current × factor`, at most
    /// `max_cooldown_ms`.
    pub(crate) fn next_cooldown_ms(&self, current: u64) -> u64 {
        let grown = current as f64 * self.cooldown_factor;
        if grown >= self.max_cooldown_ms as f64 {
            self.max_cooldown_ms
        } else {
            (grown as u64).max(current)
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Self::new()
    }
}
