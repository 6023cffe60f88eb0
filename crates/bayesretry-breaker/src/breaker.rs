//! [`Breaker`]: the state machine, plain data behind `&mut self`.

use bayesretry_beta::{Beta, hazard_per_run};

use crate::config::Config;
use crate::evidence::{Evidence, run_says_down, shortest_opening_run, upper_bound_below};
use crate::pacing;

/// A run of failures as a breaker reads it ([`Breaker::run_reading`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct RunReading {
    /// Failures in a row since the last success.
    pub failures: u32,
    /// The breaker's posterior over the success rate, as of the reading: every
    /// outcome, the run's failures included. What the rate is if nothing
    /// changed when the run began — given no change, the run's failures are
    /// evidence about the same rate as the outcomes before them — and so the
    /// "nothing changed" side of the change point. It is not the rate to weigh
    /// the run against: see [`usual_success_rate`](RunReading::usual_success_rate).
    pub posterior: Beta,
    /// The prior probability that the run began with a change of the endpoint.
    pub hazard: f64,
    /// The success rate before the run: the posterior mean just before the
    /// run's first failure, as it stood then (the current posterior mean when
    /// there is no run). What the endpoint did before the state the run may
    /// be the start of — the rate a call can expect once a probe finds it
    /// back. It is not faded with the rest of the evidence: through a long
    /// outage the decayed posterior forgets the healthy endpoint, and this
    /// keeps the last reading of it.
    ///
    /// It is also `p₀`, the usual rate the run is weighed against as a change
    /// point: pass it, not the [`posterior`](RunReading::posterior)'s mean, to
    /// `bayesretry_decision::Situation::with_failure_run` (and to
    /// [`ChangePoint::after_with_hazard`](bayesretry_beta::ChangePoint::after_with_hazard)),
    /// as the breaker's own opening rule and its [`hazard`](RunReading::hazard)
    /// do. "Nothing changed" gives the run the likelihood `(1 − p₀)^k`, which
    /// needs the rate the endpoint had when the run began. The posterior's
    /// mean already holds the run's `k` failures: they would lower `p₀`,
    /// raise `(1 − p₀)^k`, and so make the run look like ordinary bad luck —
    /// the evidence would dilute itself, and most on an endpoint with little
    /// evidence before the run (a quiet endpoint, whose faded evidence is a
    /// handful of outcomes). After three successes on the uniform prior, the
    /// posterior mean is 4 / 5 before the run and 4 / 11 after six failures.
    pub usual_success_rate: f64,
}

/// Where a breaker stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum State {
    /// Calls go through; outcomes are weighed.
    Closed,
    /// Calls are refused until `until_ms`.
    Open {
        /// When the cooldown ends and the next check may admit a probe.
        until_ms: u64,
    },
    /// Up to `max_probes` calls go through as probes; their outcomes decide.
    HalfOpen {
        /// When this round of probes began.
        since_ms: u64,
        /// Probes admitted in this round.
        probes: u32,
        /// Probe successes recorded in this round.
        successes: u32,
    },
}

/// The answer to [`Breaker::check`]: may the call be made?
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[must_use]
pub enum Admission {
    /// The breaker is closed: make the call.
    Allowed,
    /// The breaker is half-open and this call is one of its probes: make it, and
    /// record its outcome. `half_opened` is true for the check that moved the
    /// breaker from open to half-open (the transition, reported once).
    Probe {
        /// Whether this check ended the cooldown.
        half_opened: bool,
        /// The round of probes this one belongs to: what
        /// [`release_probe`](Breaker::release_probe) takes, if the probe ends
        /// without an outcome.
        round: ProbeRound,
    },
    /// Fail fast: the endpoint is believed down. `until_ms` is when the breaker will
    /// next admit a call of its own accord — the end of the cooldown, or, when
    /// half-open with every probe out, the moment unanswered probes are given up on.
    Rejected {
        /// The earliest `now_ms` at which a check may be admitted without a new
        /// outcome being recorded first.
        until_ms: u64,
    },
}

impl Admission {
    /// Whether the call may be made (closed, or admitted as a probe).
    pub const fn is_allowed(&self) -> bool {
        !matches!(self, Admission::Rejected { .. })
    }
}

/// Which round of half-open probes a probe belongs to, from
/// [`Admission::Probe`]: the breaker numbers its rounds, and
/// [`release_probe`](Breaker::release_probe) hands a slot back only to the
/// round that gave it out.
///
/// A type of its own, so that it cannot be passed where a time or a count is
/// expected. The default, [`ProbeRound::NONE`], is no breaker's round:
/// releasing it does nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ProbeRound(u32);

impl ProbeRound {
    /// No round: a breaker never hands it out, and releasing it does nothing.
    /// What a caller keeps for an attempt that is not a probe.
    pub const NONE: ProbeRound = ProbeRound(0);

    /// The round numbered `round` (from 1), as a probe carries it: counted
    /// in 1 ..= 2³² − 1, round after round, so consecutive rounds never share
    /// a number and none is [`NONE`](ProbeRound::NONE). The number repeats
    /// every 2³² − 1 rounds; a round begins at most once a cooldown, so that
    /// takes 50 days of a breaker opening every millisecond, and a probe out
    /// that long frees at most one slot of the round that shares its number.
    /// 32 bits keep a call's state, which carries its probe's round, as small
    /// as when it carried a flag.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the remainder is below 2^32 - 1"
    )]
    const fn of(round: u64) -> ProbeRound {
        match round {
            0 => ProbeRound::NONE,
            _ => ProbeRound(((round - 1) % (u32::MAX as u64)) as u32 + 1),
        }
    }

    /// The round numbered `round`, for a [`FleetView`](crate::FleetView)
    /// that numbers the probes it hands out: numbers count in
    /// 1 ..= 2³² − 1 and then from 1 again, as a breaker's own rounds do, and
    /// 0 is [`NONE`](ProbeRound::NONE).
    ///
    /// A view hands its probes out as [`Admission::Probe`] and is given their
    /// round back with the outcome, or to take the probe back; a number of its
    /// own tells it which of its probes came back, where several are out.
    pub const fn numbered(round: u64) -> ProbeRound {
        ProbeRound::of(round)
    }

    /// The round's number: rounds are numbered from 1, in the order they
    /// began, up to 2³² − 1 and then from 1 again (0 is
    /// [`NONE`](ProbeRound::NONE), never a round's).
    pub const fn get(self) -> u32 {
        self.0
    }
}

/// A change of state caused by a recorded outcome, returned by [`Breaker::record`]
/// for the caller to log, count or act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Transition {
    /// A failure tipped the posterior: the breaker opened, until `until_ms`.
    Opened {
        /// The end of the cooldown.
        until_ms: u64,
    },
    /// A probe failed: the breaker opened again, with the cooldown backed off.
    Reopened {
        /// The end of the new cooldown.
        until_ms: u64,
        /// The new cooldown, in milliseconds.
        cooldown_ms: u64,
    },
    /// Enough probes succeeded: the breaker closed and its evidence was reset to the
    /// prior.
    Closed,
}

/// A circuit breaker for one endpoint, over the endpoint's Beta posterior.
///
/// Plain `Copy` data, every method `&mut self` or `&self`, time passed in as
/// `now_ms`: it runs anywhere, including `no_std`, and a test drives it with a
/// number. `SharedBreaker` and
/// `KeyedBreaker` share it between threads.
///
/// # Life cycle
///
/// - **Closed.** [`check`](Breaker::check) admits every call: it is a read of the
///   state and nothing else. [`record`](Breaker::record) folds each outcome into
///   the posterior, and on a *failure* (a success can only raise the bound) applies
///   the rule: open when the evidence above the prior is at least `min_strength` and
///   the upper credible bound of the success rate at `confidence` is below
///   `open_below`.
/// - **Open** for the cooldown: every check is rejected.
/// - **Half-open** at the first check after the cooldown: at most `max_probes` calls
///   are admitted. `probes_to_close` probe successes close the breaker; one probe
///   failure opens it again with the cooldown multiplied by `cooldown_factor` (up to
///   `max_cooldown_ms`). Probes that never report back (a dropped call) are given up
///   on after one cooldown, and a new round of probes begins. While half-open, every
///   recorded outcome counts as a probe result: the breaker does not tell a probe
///   from a late answer to a call admitted before it opened.
///
/// # Closing resets the evidence
///
/// When probes close the breaker, the evidence above the prior is discarded. It
/// described an outage that the probes have just shown to be over; keeping it would
/// leave the posterior pinned near zero, and the next ordinary failure would open the
/// breaker again at once (flapping). After the reset, opening again takes
/// `min_strength` fresh outcomes and a fresh verdict of the rule. Shrinking the
/// evidence instead would keep part of a history known to be stale, for no gain.
///
/// ```
/// use bayesretry_breaker::{Admission, Config, State, Transition};
///
/// let mut breaker = Config::new().with_cooldown_ms(1_000).build().unwrap();
/// let mut now = 0;
/// let mut opened = None;
/// while opened.is_none() {
///     assert!(breaker.check(now).is_allowed());
///     opened = breaker.record(now, false); // the endpoint is down
///     now += 10;
/// }
/// assert_eq!(opened, Some(Transition::Opened { until_ms: now - 10 + 1_000 }));
/// assert!(!breaker.check(now).is_allowed());
///
/// now += 1_000;
/// assert!(matches!(breaker.check(now), Admission::Probe { half_opened: true, .. }));
/// assert!(!breaker.check(now).is_allowed()); // one probe at a time
/// assert_eq!(breaker.record(now, true), Some(Transition::Closed));
/// assert_eq!(breaker.state(), State::Closed);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Breaker {
    config: Config,
    evidence: Evidence,
    state: State,
    /// The cooldown of the current (or latest) opening.
    cooldown_ms: u64,
    /// When the breaker last opened from closed (a reopening after a failed
    /// probe keeps it): how long the outage has lasted, for a paced cooldown.
    opened_at_ms: u64,
    /// The call rate, per millisecond, measured when the breaker last opened
    /// from closed: what a paced cooldown weighs refused calls by.
    traffic_per_ms: f64,
    /// Failures recorded since the last success.
    failure_run: u32,
    /// The posterior mean just before the current run's first failure.
    rate_before_run: f64,
    /// When the current evidence began (the first outcome after the breaker
    /// was built, closed or reset): how long the decayed count has been
    /// counting, for the call rate it stands for.
    counting_since_ms: Option<u64>,
    /// When probes last closed the breaker: a reopening within a half-life of
    /// it continues the outage that the paced cooldown measures.
    closed_at_ms: Option<u64>,
    /// The shortest run of failures that could open the breaker if read as a
    /// change point (`u32::MAX` when the run is not read): shorter runs skip
    /// the rule's incomplete beta functions.
    min_run: u32,
    /// The number of the current (or latest) round of half-open probes; 0
    /// before the first.
    round: u64,
}

impl Breaker {
    pub(crate) fn from_checked(config: Config) -> Breaker {
        let min_run = match config.reads_failure_run() {
            true => shortest_opening_run(config.confidence(), config.open_below()),
            false => u32::MAX,
        };
        Breaker {
            config,
            evidence: Evidence::none(0),
            state: State::Closed,
            cooldown_ms: config.cooldown_ms(),
            opened_at_ms: 0,
            traffic_per_ms: 0.0,
            failure_run: 0,
            rate_before_run: config.prior().mean(),
            counting_since_ms: None,
            closed_at_ms: None,
            min_run,
            round: 0,
        }
    }

    /// The settings this breaker runs on.
    pub const fn config(&self) -> &Config {
        &self.config
    }

    /// The state as of the latest call. An open breaker whose cooldown has passed
    /// still reads `Open` until the next [`check`](Breaker::check) moves it on.
    pub const fn state(&self) -> State {
        self.state
    }

    /// How many failures have been recorded since the last success (or since
    /// the breaker was built or reset).
    pub const fn failure_run(&self) -> u32 {
        self.failure_run
    }

    /// The cooldown of the current or latest opening, in milliseconds.
    pub const fn cooldown_ms(&self) -> u64 {
        self.cooldown_ms
    }

    /// The posterior over the success rate at `now_ms`: the prior updated with the
    /// evidence, faded to `now_ms` if evidence decays.
    pub fn posterior(&self, now_ms: u64) -> Beta {
        self.evidence
            .at(now_ms, self.config.half_life_ms())
            .posterior(self.config.prior())
    }

    /// The current run of failures as the opening rule reads it at `now_ms`:
    /// its length, the posterior, and the prior probability that it began with
    /// a change of the endpoint — per unit of time when the evidence decays and
    /// so measures a call rate, per run otherwise (see
    /// [`hazard_per_run`](bayesretry_beta::hazard_per_run)). What a decision
    /// that weighs the run needs, in one reading.
    ///
    /// ```
    /// use bayesretry_breaker::{CHANGE_HAZARD, Config};
    ///
    /// // a thousand calls a second, every other one failing
    /// let mut breaker = Config::new().with_half_life_ms(10_000).build().unwrap();
    /// for ms in 0..20_000_u64 {
    ///     let _ = breaker.record(ms, ms % 2 == 0);
    /// }
    /// let run = breaker.run_reading(20_000);
    /// assert_eq!(run.failures, 1);
    /// assert!((run.posterior.mean() - 0.5).abs() < 0.01);
    /// // at a success rate of ½ the model reads 1000 · ½ · ½ = 250 runs a
    /// // second: a change precedes about one run in 150 000
    /// assert!(run.hazard < CHANGE_HAZARD / 1_000.0);
    /// // with no decay there is no rate, and the hazard is per run
    /// let mut counting = Config::new().build().unwrap();
    /// let _ = counting.record(0, false);
    /// assert_eq!(counting.run_reading(0).hazard, CHANGE_HAZARD);
    ///
    /// // 98 successes, then 8 failures in a row: the rate before the run is
    /// // the successes' (99 / 100 under the uniform prior), not the 99 / 108
    /// // of the whole posterior
    /// let mut outage = Config::new().build().unwrap();
    /// for ms in 0..106_u64 {
    ///     let _ = outage.record(ms, ms < 98);
    /// }
    /// let run = outage.run_reading(106);
    /// assert_eq!(run.failures, 8);
    /// assert!((run.usual_success_rate - 99.0 / 100.0).abs() < 1e-12);
    /// assert!((run.posterior.mean() - 99.0 / 108.0).abs() < 1e-12);
    ///
    /// // with a half-life, the posterior forgets the healthy endpoint through
    /// // a long outage; the rate before the run does not
    /// let mut fading = Config::new().with_half_life_ms(10_000).build().unwrap();
    /// for ms in 0..100_u64 {
    ///     let _ = fading.record(ms * 100, ms % 10 < 3); // 3 in 10 succeed
    /// }
    /// let before = fading.run_reading(10_000).usual_success_rate;
    /// for ms in 0..100_u64 {
    ///     let _ = fading.record(10_000 + ms * 1_000, false); // 100 s down
    /// }
    /// let run = fading.run_reading(110_000);
    /// assert!(run.failures > 90);
    /// assert!(run.usual_success_rate < 0.35, "{}", run.usual_success_rate);
    /// assert!((run.usual_success_rate - before).abs() < 0.05);
    /// ```
    #[inline]
    pub fn run_reading(&self, now_ms: u64) -> RunReading {
        let evidence = self.evidence.at(now_ms, self.config.half_life_ms());
        let posterior = evidence.posterior(self.config.prior());
        RunReading {
            failures: self.failure_run,
            posterior,
            hazard: self.run_hazard(now_ms, evidence.strength(), &posterior),
            usual_success_rate: self.usual_success_rate(&posterior),
        }
    }

    /// The success rate before the current run of failures, `p₀` of the change
    /// point: the posterior mean just before the run's first failure, or the
    /// mean of `posterior` (the current one) when there is no run. The one
    /// place `p₀` is read, for the opening rule, the hazard
    /// ([`run_hazard`](Breaker::run_hazard)) and
    /// [`RunReading::usual_success_rate`]; see there for why the current
    /// posterior's mean, which holds the run's own failures, is not it.
    fn usual_success_rate(&self, posterior: &Beta) -> f64 {
        match self.failure_run {
            0 => posterior.mean(),
            _ => self.rate_before_run,
        }
    }

    /// Whether a call may be made at `now_ms`.
    ///
    /// Closed, this only reads the state. Open, it compares `now_ms` with the end of
    /// the cooldown and, once past it, half-opens. Half-open, it hands out the
    /// remaining probe slots. It never evaluates the posterior: the rule runs only
    /// when an outcome is recorded.
    #[inline]
    pub fn check(&mut self, now_ms: u64) -> Admission {
        match self.state {
            State::Closed => Admission::Allowed,
            State::Open { until_ms } => {
                if now_ms < until_ms {
                    Admission::Rejected { until_ms }
                } else {
                    self.start_probing(now_ms);
                    Admission::Probe {
                        half_opened: true,
                        round: ProbeRound::of(self.round),
                    }
                }
            }
            State::HalfOpen {
                since_ms,
                probes,
                successes,
            } => {
                if probes < self.config.max_probes() {
                    self.state = State::HalfOpen {
                        since_ms,
                        probes: probes + 1,
                        successes,
                    };
                    return Admission::Probe {
                        half_opened: false,
                        round: ProbeRound::of(self.round),
                    };
                }
                let given_up_ms = since_ms.saturating_add(self.cooldown_ms);
                if now_ms >= given_up_ms {
                    // The probes out never reported back: start a new round.
                    self.start_probing(now_ms);
                    Admission::Probe {
                        half_opened: false,
                        round: ProbeRound::of(self.round),
                    }
                } else {
                    Admission::Rejected {
                        until_ms: given_up_ms,
                    }
                }
            }
        }
    }

    /// Records the outcome of a call made at `now_ms`, and returns the transition it
    /// caused, if any.
    ///
    /// Closed, a failure may open the breaker (see the life cycle above); that is the
    /// only time the posterior is evaluated, with one incomplete beta function at
    /// most. Half-open, the outcome is a probe result. Open, it is evidence only.
    pub fn record(&mut self, now_ms: u64, success: bool) -> Option<Transition> {
        let half_life = self.config.half_life_ms();
        let counting_since = self.advance_to(now_ms);
        if !success && self.failure_run == 0 {
            self.rate_before_run = self.evidence.posterior(self.config.prior()).mean();
        }
        self.evidence.observe(success);
        self.failure_run = if success {
            0
        } else {
            self.failure_run.saturating_add(1)
        };
        match self.state {
            State::Closed if !success && self.rule_says_down(now_ms) => {
                if !self.reopens_soon_after_closing(now_ms) {
                    self.opened_at_ms = now_ms;
                }
                self.traffic_per_ms = pacing::traffic_per_ms(
                    self.evidence.strength(),
                    now_ms.saturating_sub(counting_since),
                    half_life,
                );
                self.cooldown_ms = self
                    .paced_cooldown_ms(now_ms)
                    .unwrap_or(self.config.cooldown_ms());
                let until_ms = now_ms.saturating_add(self.cooldown_ms);
                self.state = State::Open { until_ms };
                Some(Transition::Opened { until_ms })
            }
            State::Closed | State::Open { .. } => None,
            State::HalfOpen {
                since_ms,
                probes,
                successes,
            } => {
                if !success {
                    self.cooldown_ms = self
                        .paced_cooldown_ms(now_ms)
                        .unwrap_or_else(|| self.config.next_cooldown_ms(self.cooldown_ms));
                    let until_ms = now_ms.saturating_add(self.cooldown_ms);
                    self.state = State::Open { until_ms };
                    return Some(Transition::Reopened {
                        until_ms,
                        cooldown_ms: self.cooldown_ms,
                    });
                }
                let successes = successes.saturating_add(1);
                if successes >= self.config.probes_to_close() {
                    self.close(now_ms);
                    self.closed_at_ms = Some(now_ms);
                    return Some(Transition::Closed);
                }
                self.state = State::HalfOpen {
                    since_ms,
                    probes,
                    successes,
                };
                None
            }
        }
    }

    /// Records, at `now_ms`, the success of an attempt that began before the
    /// current run of failures did: evidence for the success rate, but not
    /// the end of the run, and not a probe result.
    ///
    /// Outcomes arrive in the order attempts end, not the order they began.
    /// A slow attempt sent just before an outage can succeed well into it —
    /// an LLM request that began before an outage can succeed tens of seconds
    /// into it — and, recorded with [`record`](Breaker::record), its success
    /// would end the run of failures that the outage began. The opening rule
    /// and every decision that weighs the run would then start counting from
    /// zero again. The success says the endpoint worked when the attempt was
    /// served, which may well be before the first failure of the run; it says
    /// nothing about whether it works now.
    ///
    /// Who began when is the caller's knowledge, not the breaker's: with `std`,
    /// `SharedBreaker::record_success_since` tells it from the count of
    /// failures seen when the attempt began.
    ///
    /// ```
    /// use bayesretry_breaker::Config;
    ///
    /// let mut breaker = Config::new().build().unwrap();
    /// let _ = breaker.record(0, false);
    /// let _ = breaker.record(1, false);
    /// breaker.record_late_success(2);
    /// assert_eq!(breaker.failure_run(), 2, "the run goes on");
    /// let _ = breaker.record(3, true);
    /// assert_eq!(breaker.failure_run(), 0, "a success of its own ends it");
    /// ```
    pub fn record_late_success(&mut self, now_ms: u64) {
        let _ = self.advance_to(now_ms);
        self.evidence.observe(true);
    }

    /// Records the failure of an attempt that began when the caller's count
    /// of failures read `note` (`None`: as this failure is counted, when the
    /// count read `counted`). If the failure begins a run, the run's
    /// beginning, `run_began_at`, becomes the attempt's; a note is never
    /// taken as later than `counted`, the count it was read from.
    ///
    /// The count is the caller's (a `SharedBreaker`'s, a `KeyedBreaker`'s for
    /// all its keys), so the beginning is kept by the caller too: it is not
    /// part of this breaker's state.
    #[cfg(feature = "std")]
    pub(crate) fn record_failure_begun(
        &mut self,
        now_ms: u64,
        note: Option<u64>,
        counted: u64,
        run_began_at: &mut u64,
    ) -> Option<Transition> {
        let transition = self.record(now_ms, false);
        if self.failure_run == 1 {
            *run_began_at = note.map_or(counted, |note| note.min(counted));
        }
        transition
    }

    /// Records the success of an attempt that began when the caller's count
    /// of failures read `note`, against a run that began at `run_began_at` on
    /// the same count: older news than the run — a late success, see
    /// [`record_late_success`](Breaker::record_late_success) — if the attempt
    /// began before it and the run is still going or the breaker is not
    /// closed (it opened on that run, or a success from inside the run ended
    /// it while open: a success from before the run is no probe's result
    /// either way); otherwise a success as [`record`](Breaker::record) takes it.
    #[cfg(feature = "std")]
    pub(crate) fn record_success_begun(
        &mut self,
        now_ms: u64,
        note: u64,
        run_began_at: u64,
    ) -> Option<Transition> {
        let in_run = self.failure_run > 0 || self.state != State::Closed;
        if in_run && note < run_began_at {
            self.record_late_success(now_ms);
            return None;
        }
        self.record(now_ms, true)
    }

    /// Brings the evidence to `now_ms` (fading it, with a half-life) before
    /// an outcome is observed, and returns when the current count began.
    fn advance_to(&mut self, now_ms: u64) -> u64 {
        let half_life = self.config.half_life_ms();
        // only a decaying count measures a rate (and only then is every
        // outcome timed: a shared breaker without a half-life counts successes
        // without the time)
        let counting_since = match half_life {
            Some(_) => *self.counting_since_ms.get_or_insert(now_ms),
            None => now_ms,
        };
        self.evidence = self.evidence.at(now_ms, half_life);
        counting_since
    }

    /// Hands back the slot of a probe of `round` that ended without an outcome
    /// about the endpoint — a permanent error such as a 404, which says nothing
    /// on whether the endpoint is back, or a call given up before it was made
    /// or dropped while it was in flight.
    ///
    /// Half-open, the breaker hands out at most
    /// [`max_probes`](crate::Config::max_probes) probes per round and waits
    /// for their results; a probe that never reports would hold its slot until
    /// the round is given up, a cooldown later, and every call meanwhile is
    /// refused. Releasing it lets the next call probe at once.
    ///
    /// `round` is the one [`Admission::Probe`] gave the probe. A probe of an
    /// earlier round — one given up on, or one that ended when a failed probe
    /// reopened the breaker and a new round began since — holds no slot of the
    /// current round, and releasing it does nothing: were it to free one, more
    /// than `max_probes` probes would be out at once. Closed or open, this
    /// does nothing either.
    ///
    /// ```
    /// use bayesretry_breaker::{Admission, Config, State};
    ///
    /// let mut breaker = Config::new().with_cooldown_ms(1_000).build().unwrap();
    /// for t in 0..100 {
    ///     let _ = breaker.record(t, false);
    /// }
    /// let State::Open { until_ms: half_open_at } = breaker.state() else {
    ///     panic!("a hundred failures open the breaker");
    /// };
    /// let Admission::Probe { round, .. } = breaker.check(half_open_at) else {
    ///     panic!("the cooldown is over");
    /// };
    /// assert!(!breaker.check(half_open_at).is_allowed()); // the one probe is out
    /// breaker.release_probe(round);
    /// let Admission::Probe { round: next, .. } = breaker.check(half_open_at) else {
    ///     panic!("its slot was handed back");
    /// };
    /// assert_eq!(next, round, "the same round");
    ///
    /// // that probe never reports: a cooldown later the round is given up
    /// let Admission::Probe { round: later, .. } = breaker.check(half_open_at + 1_000) else {
    ///     panic!("a new round");
    /// };
    /// assert_ne!(later, round);
    /// breaker.release_probe(round); // a probe of the round given up: no slot of this one
    /// assert!(!breaker.check(half_open_at + 1_001).is_allowed());
    /// ```
    pub fn release_probe(&mut self, round: ProbeRound) {
        if let State::HalfOpen {
            since_ms,
            probes,
            successes,
        } = self.state
        {
            // half-open, the current round is numbered from 1: NONE never matches
            if round != ProbeRound::of(self.round) {
                return;
            }
            self.state = State::HalfOpen {
                since_ms,
                probes: probes.saturating_sub(1),
                successes,
            };
        }
    }

    /// Numbers this breaker's next rounds of probes after `round`, if its own
    /// are not past it already: a breaker made afresh for a key whose earlier
    /// breaker handed out rounds up to `round` (a `KeyedBreaker`'s evicted or
    /// removed key) does not hand out a number a probe of the old one holds.
    #[cfg(feature = "std")]
    pub(crate) fn number_rounds_after(&mut self, round: u64) {
        self.round = self.round.max(round);
    }

    /// The number of the current (or latest) round of probes, 0 before the
    /// first.
    #[cfg(feature = "std")]
    pub(crate) const fn round(&self) -> u64 {
        self.round
    }

    /// Adds `count` successes that happened at unknown times between `since_ms`
    /// and `now_ms` to the evidence, as evidence only: no probe result, no
    /// transition. With a half-life they are weighed as if spread evenly over
    /// that interval. Used for successes counted without the lock; only the
    /// shared breaker counts so.
    #[cfg(feature = "std")]
    pub(crate) fn absorb_successes(&mut self, count: u64, since_ms: u64, now_ms: u64) {
        let half_life = self.config.half_life_ms();
        if half_life.is_some() && count > 0 {
            // the decayed count measures a rate from its first outcome on
            self.counting_since_ms.get_or_insert(since_ms);
        }
        self.evidence = self.evidence.at(now_ms, half_life);
        self.evidence
            .observe_spread_successes(count, since_ms, half_life);
        if count > 0 {
            self.failure_run = 0;
        }
    }

    /// The latest time the evidence was brought up to.
    #[cfg(feature = "std")]
    pub(crate) const fn evidence_at_ms(&self) -> u64 {
        self.evidence.at_ms()
    }

    /// Closes the breaker and forgets its evidence, as an operator's override.
    pub fn reset(&mut self, now_ms: u64) {
        self.close(now_ms);
        self.closed_at_ms = None;
    }

    fn close(&mut self, now_ms: u64) {
        self.state = State::Closed;
        self.evidence = Evidence::none(now_ms);
        self.failure_run = 0;
        self.counting_since_ms = None;
        self.cooldown_ms = self.config.cooldown_ms();
    }

    fn start_probing(&mut self, now_ms: u64) {
        // u64 rounds do not wrap in practice; if they did, 0 (no round) is skipped
        self.round = self.round.wrapping_add(1).max(1);
        self.state = State::HalfOpen {
            since_ms: now_ms,
            probes: 1,
            successes: 0,
        };
    }

    /// Whether an opening at `now_ms` comes within a half-life of the probes
    /// that last closed the breaker: their success was a lull (a token of a
    /// rate limit, a lucky request), not the end of the outage, and a paced
    /// cooldown goes on counting the outage from when it first opened instead
    /// of starting again from its shortest cooldown.
    fn reopens_soon_after_closing(&self, now_ms: u64) -> bool {
        match (self.closed_at_ms, self.config.half_life_ms()) {
            (Some(closed), Some(half_life)) => now_ms.saturating_sub(closed) < half_life,
            _ => false,
        }
    }

    /// The value-paced cooldown at `now_ms`, if the config paces it and a call
    /// rate was measured; see the `pacing` module.
    fn paced_cooldown_ms(&self, now_ms: u64) -> Option<u64> {
        let success_value = self.config.value_paced_cooldown()?;
        pacing::paced_cooldown_ms(
            success_value,
            now_ms.saturating_sub(self.opened_at_ms),
            self.config.half_life_ms(),
            self.traffic_per_ms,
            self.config.cooldown_ms(),
            self.config.max_cooldown_ms(),
        )
    }

    /// The opening rule on the current evidence, at `now_ms`.
    fn rule_says_down(&self, now_ms: u64) -> bool {
        if self.evidence.strength() < self.config.min_strength() {
            return false;
        }
        let posterior = self.evidence.posterior(self.config.prior());
        let (confidence, open_below) = (self.config.confidence(), self.config.open_below());
        upper_bound_below(&posterior, confidence, open_below)
            || (self.failure_run >= self.min_run
                && run_says_down(
                    self.failure_run,
                    &posterior,
                    self.usual_success_rate(&posterior),
                    self.run_hazard(now_ms, self.evidence.strength(), &posterior),
                    confidence,
                    open_below,
                ))
    }

    /// The prior probability that the current run of failures began with a
    /// change, at `now_ms`, on an endpoint whose decayed evidence weighs
    /// `strength` and gives `posterior`: per unit of time where the decayed
    /// evidence measures a call rate `r` (runs begin at `r · p · (1 − p)`; see
    /// [`hazard_per_run`]), per run otherwise. A busy endpoint whose failures
    /// are ordinary has hundreds of runs a second, and meets a long one by
    /// chance; counted in time, such runs are not read as an outage.
    ///
    /// `p` is the success rate before the run, the same `p₀` the run is
    /// weighed against ([`usual_success_rate`](Breaker::usual_success_rate)).
    /// Left in, an outage's first failures would lower `p`, and with it the
    /// hazard of the very change they are the start of. (It was read from the
    /// current posterior with the run's failures taken out at full weight: the
    /// same rate while the run is short against the half-life, but once it
    /// spans part of one the faded run leaves fewer failures than it has, the
    /// floor at the prior took the failures from before the run out too, and
    /// `p` read high.)
    fn run_hazard(&self, now_ms: u64, strength: f64, posterior: &Beta) -> f64 {
        // a Beta mean, in (0, 1]: a rate that rounds to 1 reads as no runs
        // (the per-run hazard)
        let success_rate = self.usual_success_rate(posterior);
        let since_ms = self.counting_since_ms.unwrap_or(now_ms);
        let calls_per_ms = pacing::traffic_per_ms(
            strength,
            now_ms.saturating_sub(since_ms),
            self.config.half_life_ms(),
        );
        hazard_per_run(calls_per_ms * success_rate * (1.0 - success_rate))
    }
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        reason = "test code: a rejected known-good config must fail the test"
    )]

    use bayesretry_beta::{Beta, ChangePoint};

    use crate::config::Config;
    use crate::evidence::run_says_down;

    #[test]
    fn the_change_point_sees_the_rate_before_the_run() {
        // no half-life: the hazard is CHANGE_HAZARD per run, and the counts
        // are exact. Three successes, then a run of failures.
        let config = Config::new()
            .with_open_below(0.1)
            .with_min_strength(0.0)
            .with_failure_run();
        let mut breaker = config.build().unwrap();
        for ms in 0..3 {
            let _ = breaker.record(ms, true);
        }
        let before = breaker.posterior(3).mean();
        assert_eq!(before, 4.0 / 5.0);
        for k in 1..=6_u32 {
            let now = 3 + u64::from(k);
            let opened = breaker.record(now, false);
            assert_eq!(opened, None, "{k}");
            let posterior = breaker.posterior(now);
            assert_eq!(posterior, Beta::uniform().update(3.0, f64::from(k)));
            // what the opening rule and a reading's caller weigh the run against
            assert_eq!(breaker.usual_success_rate(&posterior), before);
            let reading = breaker.run_reading(now);
            assert_eq!(reading.usual_success_rate, before);
            assert_eq!(reading.posterior, posterior);
            // the rule is the mixture at that rate, with the whole posterior
            // on the "nothing changed" side
            assert_eq!(
                breaker.rule_says_down(now),
                run_says_down(k, &posterior, before, reading.hazard, 0.95, 0.1),
            );
        }
        // the run's own failures, in the posterior's mean, would weigh it
        // as far more ordinary: after six, (1 − 4/11)⁶ ≈ 0.066 against
        // (1 − 4/5)⁶ = 6.4e-5, and a change weighs 0.0853 instead of 0.9898
        // (mpmath)
        let posterior = breaker.posterior(9);
        let diluted = ChangePoint::after(6, posterior.mean()).unwrap().weight();
        let weighed = ChangePoint::after(6, before).unwrap().weight();
        assert!((diluted - 0.085_26).abs() < 1e-5, "{diluted}");
        assert!((weighed - 0.989_77).abs() < 1e-5, "{weighed}");
        // and the 7th failure opens it
        assert!(breaker.record(10, false).is_some());
    }

    #[test]
    fn a_success_ends_the_run_and_the_next_run_is_weighed_against_the_rate_then() {
        let mut breaker = Config::new().with_failure_run().build().unwrap();
        let _ = breaker.record(0, true);
        let _ = breaker.record(1, false);
        let _ = breaker.record(2, false);
        let _ = breaker.record(3, true);
        // no run: the usual rate is the posterior's mean
        let posterior = breaker.posterior(3);
        assert_eq!(breaker.usual_success_rate(&posterior), posterior.mean());
        assert_eq!(posterior.mean(), 3.0 / 6.0);
        let _ = breaker.record(4, false);
        // a run again: the mean just before its first failure
        let posterior = breaker.posterior(4);
        assert_eq!(breaker.usual_success_rate(&posterior), 3.0 / 6.0);
        assert!((posterior.mean() - 3.0 / 7.0).abs() < 1e-15);
    }
}
