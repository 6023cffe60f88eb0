//! [`RetryPolicy`] and its [`Builder`].

use alloc::sync::Arc;
use core::fmt;
use core::future::Future;
use core::time::Duration;

use bayesretry_backoff::{Backoff, Jitter};
use bayesretry_breaker::{FleetView, SharedBreaker, State};
use bayesretry_budget::Budget;
use bayesretry_cost::{CostModel, CostTable};
use bayesretry_decision::{Decision, DecisionEngine, Situation, Strategy};
use bayesretry_store::{Context, HalfLife, MemoryStore, PosteriorStore, StoreConfig};

use crate::call::{Call, Classifier, Retried, millis};
use crate::classify::{Classification, Classify};
use crate::clock::{Clock, SystemClock};
use crate::endpoint::{Endpoint, Endpoints};
use crate::error::{Error, RetryError};
use crate::observer::{Observer, contained};
use crate::rng::{Draws, SplitMix, fresh_seed};
use crate::sleep::{BlockingSleeper, DynSleeper, Sleeper, ThreadSleeper, VirtualSleeper};

/// The default success value: what a call that succeeds is worth.
pub const DEFAULT_SUCCESS_VALUE: f64 = 10.0;
/// The default attempt cost: what one attempt costs, in the same units.
pub const DEFAULT_ATTEMPT_COST: f64 = 1.0;
/// The default attempt cap, the first attempt included.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 4;
/// The default limit on a server's Retry-After: a longer one stops the call.
pub const DEFAULT_MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// Failures that a `should_consume_retry` hook may exempt from the attempt cap,
/// per call: the hard cap on attempts is the cap plus this.
pub const MAX_UNCOUNTED_FAILURES: u32 = 16;
/// The half-life of the evidence of the breaker a [`Builder`] gives each
/// endpoint by default: outcomes older than a few of these barely count.
pub const DEFAULT_BREAKER_HALF_LIFE: Duration = Duration::from_secs(10);

/// The half-life of what a [`Builder`]'s store learns by default (see
/// [`default_store`]): ten minutes, the mean time between changes of an
/// endpoint that the change-point reading of a run of failures assumes
/// (`bayesretry_beta::MEAN_TIME_BETWEEN_CHANGES_MS`).
pub const DEFAULT_EVIDENCE_HALF_LIFE: Duration = Duration::from_secs(600);
/// The longest the breaker a [`Builder`] gives each endpoint by default stays
/// open before it lets a probe through: the ceiling of its value-paced cooldown
/// (see [`default_breaker`]).
pub const DEFAULT_BREAKER_MAX_COOLDOWN: Duration = Duration::from_secs(10);
/// The shortest the breaker a [`Builder`] gives each endpoint by default stays
/// open: the floor under its value-paced cooldown (see [`default_breaker`]),
/// which leaves a probe time to answer before another is sent.
pub const DEFAULT_BREAKER_MIN_COOLDOWN: Duration = Duration::from_millis(250);
/// The range the default breaker's `open_below` is clamped to (see
/// [`default_breaker`]).
pub const DEFAULT_OPEN_BELOW_RANGE: (f64, f64) = (0.05, 0.9);

/// How often a call waiting for the breaker
/// ([`Builder::with_wait_while_open`]) looks again while another call's probe
/// is out.
pub const WAIT_WHILE_OPEN_POLL: Duration = Duration::from_millis(100);

/// The largest `V / c` the default breaker paces its probes by: beyond it the
/// cooldown is at its floor anyway.
const MAX_PACING_VALUE: f64 = 1e9;
/// The smallest `V / c` the default breaker paces its probes by. Any value up
/// to 1 paces alike (no probe can pay: the longest cooldown); a cost model
/// whose success is worth a vanishing share of an attempt (`1e-320 / 1`) would
/// otherwise give the breaker a value of 0, which it refuses.
const MIN_PACING_VALUE: f64 = 1e-9;

/// The store a [`Builder`] learns in by default: hierarchical priors (a new
/// endpoint borrows what the others taught about the same error class), and
/// evidence that halves in weight every [`DEFAULT_EVIDENCE_HALF_LIFE`] (ten
/// minutes), fading toward the prior.
///
/// # Why the evidence fades
///
/// A store that never forgets can lock a context in. The greedy rule stops
/// retrying a context once its mean falls to break-even, and a context that is
/// not retried gets no new outcome: a provider's bad minute early in a
/// process's life (a quota exhausted, eight retries of a 429 in a row failing)
/// would stop that endpoint's 429s from being retried for as long as the
/// process runs, however soon the quota came back. It happens by chance too: on
/// an endpoint where one retry in four succeeds, about one client in ten sees
/// its first eight retries fail. With the evidence fading, a context stopped on
/// a run of bad luck is tried again within minutes (the Beta(1, 10) of nine
/// failures after the uniform prior is above the break-even 0.1 again after
/// under two minutes; twenty failures in a row, after about thirteen), and a
/// context that has recovered shows it. Ten minutes is the time scale on which
/// the change-point reading already assumes an endpoint changes, and long beside
/// the seconds over which a retry's own evidence piles up: a busy context keeps
/// hundreds of outcomes' weight.
///
/// ```
/// use bayesretry_policy::{DEFAULT_EVIDENCE_HALF_LIFE, default_store};
///
/// let store = default_store();
/// assert!(store.hierarchical_priors());
/// assert_eq!(store.half_life().as_ms(), Some(600_000.0));
/// assert_eq!(DEFAULT_EVIDENCE_HALF_LIFE.as_secs(), 600);
/// ```
pub fn default_store() -> StoreConfig {
    let ms = millis(DEFAULT_EVIDENCE_HALF_LIFE);
    let half_life = core::num::NonZeroU64::new(ms).map_or(HalfLife::NEVER, HalfLife::from_ms);
    StoreConfig::new()
        .with_hierarchical_priors(true)
        .with_half_life(half_life)
}

/// The breaker a [`Builder`] gives each endpoint unless told otherwise, for the
/// policy's cost model: `bayesretry_breaker::Config::new()` with four changes.
///
/// - `open_below` is the cost model's break-even probability `c / V`, clamped to
///   [`DEFAULT_OPEN_BELOW_RANGE`] (0.05 to 0.9): the breaker opens once the
///   endpoint's success rate is credibly below the rate at which an attempt
///   pays for itself. A first attempt is worth no more than a retry, and the
///   breaker is the only part of the policy that can decline one. The floor
///   keeps a breaker for a huge `V / c` from waiting for near-certain failure
///   (0.05 is the breaker's own default); the ceiling keeps the threshold below
///   1, where no credible bound could fall under it, and leaves an endpoint
///   that succeeds nine times in ten open whatever the cost model says.
/// - the evidence halves in weight every [`DEFAULT_BREAKER_HALF_LIFE`] (10 s):
///   without decay, minutes of healthy traffic stand behind the posterior and an
///   overload or outage cannot move its upper bound for a long time; with it,
///   the breaker reads the last half-minute or so.
/// - the cooldown is paced by the value of information
///   ([`with_value_paced_cooldown`](bayesretry_breaker::Config::with_value_paced_cooldown)
///   with the cost model's `V / c`), between [`DEFAULT_BREAKER_MIN_COOLDOWN`]
///   (250 ms) and [`DEFAULT_BREAKER_MAX_COOLDOWN`] (10 s), instead of a fixed
///   10 s doubling to 5 minutes: each probe comes after
///   `sqrt(2 · D / (r · (V/c − 1)))`, `r` being the call rate the breaker saw
///   before it opened and `D` the time open plus a half-life. A breaker whose
///   evidence fades opens in every long outage, and every call it refuses after
///   the endpoint is back loses `V − c`: a busy endpoint or a dear success is
///   probed for within a second or two, a quiet endpoint or a cheap success
///   every few seconds, and never less often than every 10 s.
/// - a run of failures in a row may open it too
///   ([`with_failure_run`](bayesretry_breaker::Config::with_failure_run)): read
///   as a change point, the run that begins an outage opens the breaker within
///   about six failures on an endpoint that was healthy (ten at a floor of
///   0.05), where the fading
///   evidence of the good times would hold it closed for half a minute. On an
///   endpoint whose failures are ordinary, runs say little and the credible
///   bound decides alone.
///
/// ```
/// use bayesretry_cost::CostModel;
/// use bayesretry_policy::default_breaker;
/// let breaker = default_breaker(&CostModel::new(10.0, 1.0).unwrap());
/// assert_eq!(breaker.open_below(), 0.1);
/// assert_eq!(breaker.half_life_ms(), Some(10_000));
/// assert_eq!(breaker.value_paced_cooldown(), Some(10.0));
/// assert_eq!((breaker.cooldown_ms(), breaker.max_cooldown_ms()), (250, 10_000));
/// assert!(breaker.reads_failure_run());
/// // clamped: a success worth 1000 attempts still opens below 5 %
/// assert_eq!(default_breaker(&CostModel::new(1000.0, 1.0).unwrap()).open_below(), 0.05);
/// ```
pub fn default_breaker(cost_model: &CostModel) -> bayesretry_breaker::Config {
    let (low, high) = DEFAULT_OPEN_BELOW_RANGE;
    // finite: a cost model's success value is finite and above zero
    let open_below = cost_model.break_even_probability().clamp(low, high);
    // a free attempt makes every success infinitely dear: pace as for a very dear one
    let success_value =
        (1.0 / cost_model.break_even_probability()).clamp(MIN_PACING_VALUE, MAX_PACING_VALUE);
    bayesretry_breaker::Config::new()
        .with_open_below(open_below)
        .with_half_life_ms(millis(DEFAULT_BREAKER_HALF_LIFE))
        .with_cooldown_ms(millis(DEFAULT_BREAKER_MIN_COOLDOWN))
        .with_max_cooldown_ms(millis(DEFAULT_BREAKER_MAX_COOLDOWN))
        .with_value_paced_cooldown(success_value)
        .with_failure_run()
}

/// Decides, after each failed attempt, whether another one is worth it, and runs
/// the attempts.
///
/// Cheap to clone (an `Arc`), `Send + Sync`: build one per process (or per
/// dependency) and share it; every clone shares the beliefs, the breaker, the
/// budget and the RNG. See [the crate documentation](crate) for the loop.
#[derive(Clone)]
pub struct RetryPolicy {
    pub(crate) inner: Arc<Inner>,
}

/// What every clone of a policy shares.
pub(crate) struct Inner {
    /// Priced by the policy's cost model.
    pub(crate) engine: DecisionEngine,
    /// The endpoints priced apart ([`Builder::with_endpoint_cost`]), if any
    /// is (and the policy learns): their price goes into each of their
    /// decisions' situation, which a call's own overrides. `None`, the
    /// common case, costs a decision one test.
    pub(crate) endpoint_costs: Option<Box<CostTable>>,
    pub(crate) store: MemoryStore,
    pub(crate) learning: bool,
    pub(crate) max_attempts: u32,
    pub(crate) backoff: Backoff,
    pub(crate) max_elapsed: Option<Duration>,
    pub(crate) attempt_timeout: Option<Duration>,
    pub(crate) max_retry_after: Duration,
    /// How long a call may wait for an open breaker, if it waits at all.
    pub(crate) wait_while_open: Option<Duration>,
    /// Whether a server's Retry-After holds the whole endpoint
    /// ([`Builder::without_server_hold`]).
    pub(crate) server_hold: bool,
    /// The per-endpoint state (the breakers), if the breaker is on.
    pub(crate) endpoints: Option<Endpoints>,
    pub(crate) budget: Option<Arc<dyn Budget + Send + Sync>>,
    /// The breaker shared by a fleet, consulted after the endpoint's own
    /// admits an attempt ([`Builder::with_shared_breaker`]); only with a
    /// breaker of the policy's own.
    pub(crate) shared: Option<Arc<dyn FleetView + Send + Sync>>,
    /// Whether every call takes the general loop from its first attempt: its
    /// attempts have a timeout (whose timer the general loop runs), or a
    /// shared breaker must admit each one. One flag, so that the fast path
    /// of a first attempt tests one field for both.
    pub(crate) first_in_loop: bool,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) sleeper: Arc<dyn DynSleeper>,
    pub(crate) blocking: Arc<dyn BlockingSleeper>,
    pub(crate) rng: SplitMix,
    pub(crate) observer: Option<Arc<dyn Observer>>,
    /// Classic mode with nothing that reads the time or hears of a decision —
    /// no breaker, deadline, budget or observer: a failed attempt needs only
    /// its count and its delay (see `Attempts::failed`).
    pub(crate) plain: bool,
}

impl Inner {
    #[inline]
    pub(crate) fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// Whether the endpoint's breaker is open now (no breaker: never).
    pub(crate) fn breaker_open(&self, endpoint: &str) -> Option<u64> {
        match self.endpoints.as_ref()?.peek(endpoint)? {
            State::Open { until_ms } => Some(until_ms),
            _ => None,
        }
    }

    /// The decision for `ctx`: from the policy's store when learning (random
    /// words are drawn only for a Thompson draw), on the fixed count in classic
    /// mode.
    pub(crate) fn decide(&self, ctx: &Context<'_>, situation: &Situation, now_ms: u64) -> Decision {
        let decision = self.judge(ctx, situation, now_ms, None);
        self.report(&decision, ctx);
        decision
    }

    /// [`decide`](Inner::decide) without telling the observer: for the run
    /// loop, which may still turn the verdict into a stop (the budget refuses)
    /// and reports only the decision it acts on.
    ///
    /// A learning decision also reads the endpoint's breaker, which has seen
    /// every attempt, first tries included: the failures in a row since its
    /// last success and its usual success rate go into the situation
    /// ([`Situation::with_failure_run`]), so that a run of failures on an
    /// endpoint that usually succeeds stops retries before the context's own
    /// posterior has learned of the outage. A caller who set a run keeps it.
    /// `breaker` is the endpoint's breaker when the caller has found it
    /// already (the run loop has); otherwise it is found by name.
    pub(crate) fn judge(
        &self,
        ctx: &Context<'_>,
        situation: &Situation,
        now_ms: u64,
        breaker: Option<&SharedBreaker>,
    ) -> Decision {
        if !self.learning {
            return self.engine.decide_fixed(ctx.attempt(), situation, now_ms);
        }
        // A situation that has its run (the run loop's, read with the
        // failure's record) is used where it lies: a copy of what the caller
        // has just built, field by field, would be read back in wider loads
        // and stall.
        let with_run;
        let situation = if situation.failure_run().is_some() {
            situation
        } else {
            with_run = self.with_failure_run(ctx, situation, now_ms, breaker);
            &with_run
        };
        // an endpoint priced apart, for a call that has no price of its own
        let priced;
        let situation = match self.endpoint_cost(ctx.endpoint()) {
            Some(model) if situation.cost_model().is_none() => {
                priced = situation.with_cost_model(model);
                &priced
            }
            _ => situation,
        };
        if self.engine.config().strategy() == Strategy::Thompson {
            // a Gamma-ratio draw, not the quantile of a uniform: the same
            // distribution, drawn in well under a microsecond, where inverting
            // the incomplete beta function takes microseconds
            let mut draws = Draws::of(&self.rng);
            self.engine
                .decide_with_rng(&self.store, ctx, situation, now_ms, &mut draws)
        } else {
            self.engine.decide(&self.store, ctx, situation, now_ms)
        }
    }

    /// The price of `endpoint` if it is priced apart.
    #[inline]
    pub(crate) fn endpoint_cost(&self, endpoint: &str) -> Option<CostModel> {
        self.endpoint_costs.as_ref()?.get(endpoint)
    }

    /// The price of a call to `endpoint`: its own (`own`), else the
    /// endpoint's, else the policy's. A decision reads the same order from
    /// its situation ([`judge`](Inner::judge)).
    pub(crate) fn price(&self, endpoint: &str, own: Option<CostModel>) -> CostModel {
        own.or_else(|| self.endpoint_cost(endpoint))
            .unwrap_or_else(|| self.engine.config().costs().model_for(endpoint))
    }

    /// `situation` with the endpoint breaker's failure run and usual success
    /// rate, when the policy has a breaker and the caller gave no run. Taken
    /// only after a failure, so the breaker's lock (which the failure's record
    /// has just taken) is no cost on the success path.
    pub(crate) fn with_failure_run(
        &self,
        ctx: &Context<'_>,
        situation: &Situation,
        now_ms: u64,
        breaker: Option<&SharedBreaker>,
    ) -> Situation {
        if situation.failure_run().is_some() {
            return *situation;
        }
        let run = match (breaker, &self.endpoints) {
            (Some(breaker), _) => breaker.run_reading(now_ms),
            // an endpoint with no state yet has seen no failure: nothing to add,
            // and asking (`should_retry`) makes no state for it
            (None, Some(endpoints)) if endpoints.peek(ctx.endpoint()).is_some() => endpoints
                .resolve(ctx.endpoint())
                .breaker
                .run_reading(now_ms),
            (None, _) => return *situation,
        };
        situation
            .with_failure_run(run.failures, run.usual_success_rate)
            .with_change_hazard(run.hazard)
    }

    /// Whether an outcome is worth telling anyone: the policy learns, or an
    /// observer listens. A call keeps the context of its last failure only then.
    #[inline]
    pub(crate) fn observes(&self) -> bool {
        self.learning || self.observer.is_some()
    }

    /// Tells the observer of the decision taken for `ctx`.
    #[inline]
    pub(crate) fn report(&self, decision: &Decision, ctx: &Context<'_>) {
        if let Some(observer) = &self.observer {
            contained(|| observer.on_decision(decision, ctx));
        }
    }

    /// Folds the outcome of the attempt after `ctx` into the store (when learning).
    /// In line: a call only forwarded to the store's, which is out of line.
    #[inline]
    pub(crate) fn observe(&self, ctx: &Context<'_>, success: bool, now_ms: u64) {
        if self.learning {
            self.store.observe(ctx, success, now_ms);
        }
        if let Some(observer) = &self.observer {
            contained(|| observer.on_observe(ctx, success));
        }
    }
}

impl fmt::Debug for RetryPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &self.inner;
        f.debug_struct("RetryPolicy")
            .field("engine", &inner.engine)
            .field("learning", &inner.learning)
            .field("max_attempts", &inner.max_attempts)
            .field("backoff", &inner.backoff)
            .field("max_elapsed", &inner.max_elapsed)
            .field("breaker", &inner.endpoints.is_some())
            .field("budget", &inner.budget.is_some())
            .field("shared_breaker", &inner.shared.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy::new()
    }
}

impl RetryPolicy {
    /// A learning policy with the defaults listed under [`Builder`].
    pub fn new() -> RetryPolicy {
        RetryPolicy::builder().build_checked()
    }

    /// A builder starting from the defaults.
    pub fn builder() -> Builder {
        Builder::new()
    }

    /// Classic mode: `attempts` attempts in all (the first included), the default
    /// backoff (500 ms doubling, full jitter, capped at 30 s), no learning, no
    /// breaker. The same loop as a learning policy — classification, permanent
    /// errors, Retry-After, deadline, hooks — with the retry decision reduced to
    /// the count. An `attempts` of 0 is read as 1.
    ///
    /// The count is of attempts, not retries: "retry three times" is
    /// `fixed(4)`.
    pub fn fixed(attempts: u32) -> RetryPolicy {
        RetryPolicy::builder()
            .classic()
            .with_max_attempts(attempts.max(1))
            .build_checked()
    }

    /// Runs `op` until it succeeds or the policy stops, classifying errors with
    /// their [`Classify`] impl. `op` gets the 1-based attempt number.
    ///
    /// ```
    /// use bayesretry_policy::{HttpStatus, RetryPolicy};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
    /// let policy = RetryPolicy::builder().with_sleeper(|_| std::future::ready(())).build()?;
    /// let answer = policy
    ///     .run("provider", |attempt| async move {
    ///         if attempt < 2 { Err(HttpStatus(503)) } else { Ok(42) }
    ///     })
    ///     .await;
    /// assert_eq!(answer.ok(), Some(42));
    /// # Ok::<(), bayesretry_policy::Error>(())
    /// # }).unwrap();
    /// ```
    #[inline]
    pub fn run<'a, T, E, F, Fut>(
        &'a self,
        endpoint: &'a str,
        op: F,
    ) -> impl Future<Output = Result<T, RetryError<E>>> + use<'a, T, E, F, Fut>
    where
        E: Classify,
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        self.call(endpoint).run(op)
    }

    /// [`run`](RetryPolicy::run) on the calling thread, sleeping with the
    /// blocking sleeper.
    ///
    /// A blocking attempt cannot be cut off: the per-attempt timeout
    /// ([`Builder::with_attempt_timeout`]) does not apply here, and a late
    /// result counts as it is (see there why). A cancellation ends a pending
    /// sleep at once when the sleeper supports it
    /// ([`BlockingSleeper::sleep_blocking_cancellable`]; [`ThreadSleeper`]
    /// does), and is seen before every attempt.
    ///
    /// ```
    /// use bayesretry_policy::{ManualClock, RetryPolicy, VirtualSleeper};
    /// use std::io;
    ///
    /// let sleeper = VirtualSleeper::new(ManualClock::new(0));
    /// let policy = RetryPolicy::builder().with_virtual_time(sleeper).build()?;
    /// let read = policy.run_blocking("disk", |attempt| {
    ///     if attempt == 1 { Err(io::Error::from(io::ErrorKind::TimedOut)) } else { Ok("data") }
    /// });
    /// assert_eq!(read.ok(), Some("data"));
    /// # Ok::<(), bayesretry_policy::Error>(())
    /// ```
    #[inline]
    pub fn run_blocking<T, E, F>(&self, endpoint: &str, op: F) -> Result<T, RetryError<E>>
    where
        E: Classify,
        F: FnMut(u32) -> Result<T, E>,
    {
        self.call(endpoint).run_blocking(op)
    }

    /// A handle on `endpoint`: the same [`run`](Endpoint::run) and
    /// [`run_blocking`](Endpoint::run_blocking), with the endpoint's state (its
    /// breaker) found once, when the handle is made, instead of by name on every
    /// call. For a hot path that calls one endpoint again and again.
    ///
    /// Here as in every call by name, an endpoint is known by the first bytes
    /// of its name that the store keeps (256 by default), cut at a character
    /// boundary: names alike that far are one endpoint, with one breaker (see
    /// [long names](Endpoint#long-names)).
    pub fn endpoint(&self, endpoint: &str) -> Endpoint {
        Endpoint::new(self.clone(), endpoint)
    }

    /// A call to configure — hooks, a cancellation token — before running it; its
    /// errors are classified with their [`Classify`] impl.
    #[inline]
    pub fn call<'a, E: Classify>(&'a self, endpoint: &'a str) -> Call<'a, E> {
        Call::new(self, endpoint, Classifier::Impl(E::classify))
    }

    /// Like [`call`](RetryPolicy::call), classifying errors with `classify`: for
    /// error types without a [`Classify`] impl.
    pub fn call_with<'a, E>(
        &'a self,
        endpoint: &'a str,
        classify: impl Fn(&E) -> Classification + Send + Sync + 'a,
    ) -> Call<'a, E> {
        Call::new(self, endpoint, Classifier::Closure(Box::new(classify)))
    }

    /// Turns `f` into a retried function bound to `endpoint` (p-retry's
    /// `makeRetriable`): each [`Retried::call`] runs `f` under this policy.
    pub fn wrap<F>(&self, endpoint: impl Into<String>, f: F) -> Retried<F> {
        Retried::new(self.clone(), endpoint.into(), f)
    }

    /// The decision for `ctx` now, as the run loop would make it after a failed
    /// attempt with no deadline, no planned delay and no server hint; the
    /// breaker's state for the endpoint is taken into account, the budget is not
    /// spent. The observer sees it.
    pub fn should_retry(&self, ctx: &Context<'_>) -> Decision {
        let inner = &self.inner;
        let now_ms = inner.now_ms();
        // the shared breaker knows the endpoint by the name the table keeps
        let name = inner
            .endpoints
            .as_ref()
            .map_or(ctx.endpoint(), |table| table.key(ctx.endpoint()));
        let open = inner.breaker_open(ctx.endpoint()).is_some()
            || inner
                .shared
                .as_ref()
                .is_some_and(|shared| shared.open_until(name, now_ms).is_some());
        let situation = Situation::new().with_breaker_open(open);
        inner.decide(ctx, &situation, now_ms)
    }

    /// Tells the policy how the attempt after `ctx` ended: evidence learned
    /// outside [`run`](RetryPolicy::run). Ignored by a classic policy, except by
    /// the observer.
    pub fn observe(&self, ctx: &Context<'_>, success: bool) {
        self.inner.observe(ctx, success, self.inner.now_ms());
    }

    /// The posterior for `ctx` now (hierarchical prior and decay applied).
    pub fn posterior(&self, ctx: &Context<'_>) -> bayesretry_store::Beta {
        self.inner.store.posterior(ctx, self.inner.now_ms())
    }

    /// The policy's clock, in milliseconds.
    pub fn now_ms(&self) -> u64 {
        self.inner.now_ms()
    }

    /// The per-attempt timeout, if the policy has one
    /// ([`Builder::with_attempt_timeout`]).
    pub fn attempt_timeout(&self) -> Option<Duration> {
        self.inner.attempt_timeout
    }

    /// The price the policy puts on a retry at `endpoint`: its own
    /// ([`Builder::with_endpoint_cost`]) or the policy's
    /// ([`Builder::with_cost_model`]). A classic policy's is a success worth 1
    /// and a free attempt: any chance pays.
    pub fn cost_model(&self, endpoint: &str) -> CostModel {
        self.inner.price(endpoint, None)
    }

    /// The breaker state of `endpoint`, if the breaker is on and the endpoint
    /// has been called (or has a [handle](RetryPolicy::endpoint)): of every
    /// name alike in the bytes the store keeps (see
    /// [long names](Endpoint#long-names)).
    pub fn breaker_state(&self, endpoint: &str) -> Option<State> {
        self.inner.endpoints.as_ref()?.peek(endpoint)
    }

    /// Everything the policy has learned, as the store's versioned snapshot.
    #[cfg(feature = "serde")]
    pub fn snapshot(&self) -> bayesretry_store::Snapshot {
        self.inner.store.snapshot(self.inner.now_ms())
    }

    /// Merges a snapshot into what the policy has learned, with the store's merge
    /// semantics: commutative, idempotent, evidence added per writer. Evidence
    /// stamped after the policy's clock reads now (another host's clock running
    /// ahead) is taken as arriving now; see `MemoryStore::merge_at`.
    #[cfg(feature = "serde")]
    pub fn load(&self, snapshot: &bayesretry_store::Snapshot) {
        self.inner.store.merge_at(snapshot, self.inner.now_ms());
    }
}

/// The settings of a [`RetryPolicy`], checked by [`build`](Builder::build).
///
/// # Default
///
/// - learning on: a [`MemoryStore`] with [`default_store`]'s settings:
///   hierarchical priors (a new endpoint borrows what other endpoints taught
///   about the same error class), and evidence that halves in weight every
///   [`DEFAULT_EVIDENCE_HALF_LIFE`] (ten minutes), so that a context the
///   greedy rule stopped retrying on bad luck is tried again within minutes;
/// - the greedy [`Strategy`] with the cost model success value
///   [`DEFAULT_SUCCESS_VALUE`] = 10, attempt cost [`DEFAULT_ATTEMPT_COST`] = 1.
///   A retry is made while `p · 10 − 1 > 0`, that is while at least one retry in
///   ten is expected to succeed. A failed call usually costs far more than one
///   more attempt (a user waits, a job is redone), and the ratio says so; under
///   the uniform prior (`p = 0.5`) a context never seen before is retried, and
///   it takes eight failures in a row in one context for its mean to fall to
///   0.1 and its retries to stop — unless the endpoint's breaker has seen a run
///   of failures first: every learning decision weighs the breaker's failures in
///   a row (first tries included) against its usual success rate as
///   change-point evidence ([`Situation::with_failure_run`]), so on an endpoint
///   that usually succeeds, two or three failures in a row stop retries at once;
/// - no endpoint priced apart ([`with_endpoint_cost`](Builder::with_endpoint_cost));
/// - [`DEFAULT_MAX_ATTEMPTS`] = 4 attempts in all;
/// - the backoff of `bayesretry_backoff::Config::new()`: exponential from 500 ms,
///   factor 2, full jitter, capped at 30 s;
/// - no deadline and no per-attempt timeout; a server's Retry-After up to [`DEFAULT_MAX_RETRY_AFTER`] is
///   honoured, a longer one stops the call;
/// - a breaker per endpoint, [`default_breaker`] for the cost model: the
///   breaker crate's defaults (95 % credible upper bound, at least 10 outcomes,
///   one probe) with four changes. It opens when the endpoint's success rate is
///   credibly below the break-even `c / V` (0.1 with the default cost model;
///   clamped to 0.05–0.9), its evidence halves every
///   [`DEFAULT_BREAKER_HALF_LIFE`] = 10 s, its cooldown is paced by the
///   value of information, between 250 ms and 10 s, and a run of failures after
///   healthy traffic, read as a change point, opens it too (see
///   [`default_breaker`]). Why:
///   an endpoint that succeeds less often than break-even loses value on
///   *every* attempt, the first one included, and only the breaker can decline
///   a first attempt; with the breaker crate's own 0.05 the policy kept calling
///   endpoints it knew did not pay. Without decay, after minutes of healthy
///   traffic thousands of successes pin the bound high, so an overload (where
///   abandoned work keeps the queue full) cannot open the breaker for minutes
///   and the server stays overloaded after the trigger has passed; with a 10 s
///   half-life the breaker reads roughly the last half-minute, opens within
///   seconds of failures taking over, and lets the backlog drain. Because it
///   now opens in every long outage, it probes as often as the calls it would
///   refuse after the endpoint is back are worth: about every 0.5–2 s at ten
///   calls a second and `V / c = 10`, never less often than every 10 s. The
///   price: after an outage ends, calls are still refused until the next probe
///   (the benchmark's S5 success rate is back within 5 points of the oracle's
///   after about 10 s, against 1 s without a breaker, and 1 s with
///   [`with_wait_while_open`](Builder::with_wait_while_open)), and an endpoint that
///   sees fewer than a few calls a second gathers too little recent evidence
///   to open at 0.05. The decision benchmark
///   (docs/BENCHMARKS.md, `bayesretry-sim`) has the figures. A breaker set with
///   [`with_breaker`](Builder::with_breaker) is used as given, and
///   [`without_breaker`](Builder::without_breaker) turns it off;
/// - a server's Retry-After holds its endpoint, for every call, until it runs
///   out ([`without_server_hold`](Builder::without_server_hold));
/// - no budget;
/// - [`SystemClock`]; an async sleeper that uses tokio's timer when the call
///   is polled inside a tokio runtime (with the `tokio` feature) and a helper
///   thread otherwise; [`ThreadSleeper`];
/// - a seed drawn from the time; no observer.
#[derive(Clone)]
#[must_use]
pub struct Builder {
    cost_model: Option<CostModel>,
    endpoint_costs: CostTable,
    strategy: Strategy,
    max_attempts: u32,
    backoff: bayesretry_backoff::Config,
    max_elapsed: Option<Duration>,
    attempt_timeout: Option<Duration>,
    max_retry_after: Duration,
    wait_while_open: Option<Duration>,
    server_hold: bool,
    breaker: BreakerChoice,
    budget: Option<Arc<dyn Budget + Send + Sync>>,
    shared_breaker: Option<Arc<dyn FleetView + Send + Sync>>,
    store: StoreConfig,
    learning: bool,
    clock: Option<Arc<dyn Clock>>,
    sleeper: Option<Arc<dyn DynSleeper>>,
    blocking: Option<Arc<dyn BlockingSleeper>>,
    seed: Option<u64>,
    observer: Option<Arc<dyn Observer>>,
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("cost_model", &self.cost_model)
            .field("endpoint_costs", &self.endpoint_costs)
            .field("strategy", &self.strategy)
            .field("max_attempts", &self.max_attempts)
            .field("backoff", &self.backoff)
            .field("max_elapsed", &self.max_elapsed)
            .field("attempt_timeout", &self.attempt_timeout)
            .field("wait_while_open", &self.wait_while_open)
            .field("server_hold", &self.server_hold)
            .field("breaker", &self.breaker_debug())
            .field("budget", &self.budget.is_some())
            .field("shared_breaker", &self.shared_breaker.is_some())
            .field("store", &self.store)
            .field("learning", &self.learning)
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// The defaults listed above.
    pub fn new() -> Builder {
        Builder {
            cost_model: None,
            endpoint_costs: CostTable::new(),
            strategy: Strategy::Greedy,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            backoff: bayesretry_backoff::Config::new(),
            max_elapsed: None,
            attempt_timeout: None,
            max_retry_after: DEFAULT_MAX_RETRY_AFTER,
            wait_while_open: None,
            server_hold: true,
            breaker: BreakerChoice::Default,
            budget: None,
            shared_breaker: None,
            store: default_store(),
            learning: true,
            clock: None,
            sleeper: None,
            blocking: None,
            seed: None,
            observer: None,
        }
    }

    /// Classic mode: no learning and no breaker; every retry the attempt cap,
    /// the deadline, the Retry-After limit and the budget allow is made.
    pub fn classic(mut self) -> Builder {
        self.learning = false;
        self.breaker = BreakerChoice::Off;
        self
    }

    /// What a success is worth and what an attempt costs.
    pub fn with_cost_model(mut self, cost_model: CostModel) -> Builder {
        self.cost_model = Some(cost_model);
        self
    }

    /// What a success is worth and what an attempt costs at `endpoint`, in
    /// place of [`with_cost_model`](Builder::with_cost_model)'s there. Set
    /// once per endpoint priced apart; the last one set for a name holds.
    ///
    /// Dependencies are not worth the same: a large model's answer is worth
    /// more, and an attempt at it costs more, than a cache's or an embedding's.
    /// Priced apart, each endpoint is retried as far as its own odds pay at
    /// its own price, `p · value − cost > 0`, and its breaker, unless one is
    /// set with [`with_breaker`](Builder::with_breaker), is
    /// [`default_breaker`] for its price: it opens below its own break-even
    /// rate and paces its probes by its own value. One call can be priced
    /// apart too ([`Call::with_cost_model`](crate::Call::with_cost_model)).
    /// A classic policy prices nothing, and ignores it. The name is matched
    /// whole, as the policy's calls name the endpoint.
    ///
    /// ```
    /// # use bayesretry_cost::CostModel;
    /// # use bayesretry_policy::{HttpStatus, ManualClock, RetryError, RetryPolicy, VirtualSleeper};
    /// let policy = RetryPolicy::builder()
    ///     .with_virtual_time(VirtualSleeper::new(ManualClock::new(0)))
    ///     // the chat model's answer is worth 50 attempts; a search hint, 1.5
    ///     .with_endpoint_cost("chat", CostModel::new(50.0, 1.0).unwrap())
    ///     .with_endpoint_cost("search-hint", CostModel::new(1.5, 1.0).unwrap())
    ///     .build()?;
    /// let mut attempts = [0, 0];
    /// for (i, endpoint) in ["chat", "search-hint"].into_iter().enumerate() {
    ///     let out: Result<(), RetryError<HttpStatus>> =
    ///         policy.run_blocking(endpoint, |_| { attempts[i] += 1; Err(HttpStatus(503)) });
    ///     assert!(out.is_err());
    /// }
    /// // a 503 never seen before has even odds: worth retrying for the chat
    /// // model, not for a hint worth one and a half attempts
    /// assert!(attempts[0] > 1);
    /// assert_eq!(attempts[1], 1);
    /// assert_eq!(policy.cost_model("chat").success_value(), 50.0);
    /// // any other endpoint: the policy's model, 10 and 1 by default
    /// assert_eq!(policy.cost_model("other").success_value(), 10.0);
    /// # Ok::<(), bayesretry_policy::Error>(())
    /// ```
    pub fn with_endpoint_cost(
        mut self,
        endpoint: impl Into<String>,
        cost_model: CostModel,
    ) -> Builder {
        self.endpoint_costs.insert(endpoint, cost_model);
        self
    }

    /// How the decision reads the posterior: greedy, Thompson or lookahead.
    ///
    /// A Thompson policy draws from the posterior with the Gamma-ratio sampler
    /// (`Beta::sample`) on the policy's seeded words ([`with_seed`](Builder::with_seed)):
    /// a few hundred nanoseconds per decision, where inverting the incomplete
    /// beta function at a uniform number (the engine's `decide_with_uniform`)
    /// takes microseconds, for the same distribution.
    pub fn with_strategy(mut self, strategy: Strategy) -> Builder {
        self.strategy = strategy;
        self
    }

    /// Attempts in all, the first included; at least 1.
    pub fn with_max_attempts(mut self, max_attempts: u32) -> Builder {
        self.max_attempts = max_attempts;
        self
    }

    /// The delay schedule and jitter.
    pub fn with_backoff(mut self, backoff: bayesretry_backoff::Config) -> Builder {
        self.backoff = backoff;
        self
    }

    /// Shorthand for a backoff with this jitter, the rest unchanged.
    pub fn with_jitter(mut self, jitter: Jitter) -> Builder {
        self.backoff = self.backoff.with_jitter(jitter);
        self
    }

    /// The deadline of a call, from its start (p-retry's `maxRetryTime`): no
    /// retry starts after it, and no delay that would cross it is slept.
    ///
    /// It bounds when attempts start, not how long one runs: an attempt under
    /// way when the deadline passes is not cut off, so a call can end up to one
    /// attempt's duration after it. Bound each attempt of
    /// [`RetryPolicy::run`] with [`with_attempt_timeout`](Builder::with_attempt_timeout)
    /// (its timer is the whole timeout, not shortened to what is left of the
    /// deadline): the longest a call then takes is about the deadline plus one
    /// timeout.
    pub fn with_max_elapsed(mut self, max_elapsed: Duration) -> Builder {
        self.max_elapsed = Some(max_elapsed);
        self
    }

    /// The longest one attempt of [`RetryPolicy::run`] may take: an attempt still
    /// pending after `timeout` is dropped (which cancels it) and counts as a
    /// retryable failure of class [`ErrorClass::Timeout`](bayesretry_store::ErrorClass::Timeout).
    ///
    /// The timeout is timed by the policy's own [`Sleeper`], not by a runtime's
    /// timer, so it follows virtual time like every other wait: under a
    /// [`VirtualSleeper`] an attempt that has to wait times out at once, the clock
    /// moves by exactly `timeout`, and the delay is recorded among the sleeps. An
    /// attempt that finishes without waiting starts no timer.
    ///
    /// A timed-out attempt has no error value: the hooks see
    /// [`FailedAttempt::error`](crate::FailedAttempt::error) as `None`, and if the
    /// call then stops it ends with [`RetryErrorKind::AttemptTimedOut`](crate::RetryErrorKind::AttemptTimedOut).
    ///
    /// # Not in the blocking loop
    ///
    /// [`RetryPolicy::run_blocking`] cannot preempt a blocking function: a
    /// thread cannot be stopped from outside, so by the time the policy could
    /// look at the clock the attempt has already ended, one way or the other.
    /// The blocking loop therefore does not apply this setting, and an attempt
    /// keeps its own outcome however long it took: a late success is returned
    /// (discarding a finished result to redo the work would only cost more, and
    /// would repeat any side effect it had), and a late error is classified as
    /// itself (a 503 or a refused connection says more than "timeout", and a
    /// permanent error stays permanent). To bound a blocking attempt, put the
    /// timeout on the operation itself — a socket's read timeout, a client's
    /// request timeout — and classify its timeout error as
    /// [`ErrorClass::Timeout`](bayesretry_store::ErrorClass::Timeout).
    pub fn with_attempt_timeout(mut self, timeout: Duration) -> Builder {
        self.attempt_timeout = Some(timeout);
        self
    }

    /// The longest Retry-After honoured; a server asking for longer stops the call.
    pub fn with_max_retry_after(mut self, max_retry_after: Duration) -> Builder {
        self.max_retry_after = max_retry_after;
        self
    }

    /// Lets a call that the endpoint's breaker refuses wait for it, up to
    /// `max_wait` in all and never past the deadline
    /// ([`with_max_elapsed`](Builder::with_max_elapsed)), instead of failing at
    /// once with [`RetryErrorKind::CircuitOpen`](crate::RetryErrorKind::CircuitOpen).
    ///
    /// An open breaker is waited out until its cooldown ends, when the waiting
    /// call may become the probe itself; while another call's probe is out,
    /// the call looks again every [`WAIT_WHILE_OPEN_POLL`] (100 ms). The call
    /// fails with `CircuitOpen` as before when the breaker will not admit it
    /// within what is left of `max_wait` or of the deadline, so a call never
    /// waits for an admission it cannot get in time. Cancellation ends the wait
    /// at once.
    ///
    /// A retry waits the same way. A failure that finds the breaker open — it
    /// opened on this failure, or the call's probe failed and opened it again —
    /// does not stop the call: the retry is judged as if the endpoint were back
    /// (on the context's own posterior, without the run of failures the breaker
    /// opened on, which the breaker acts on by its probes), then waits for
    /// the breaker like a first attempt. Otherwise the one call in twenty whose
    /// probe meets an ordinary failure on an endpoint back at 95 % would fail
    /// while every call behind it waited for the next probe and went through.
    /// It does so only when the breaker can admit the retry in time — within
    /// what is left of `max_wait` once the retry's delay is slept, and before
    /// the deadline: otherwise the call ends `CircuitOpen` at once, without
    /// sleeping a delay that could only end in a refusal. The time a retry
    /// waits for a server's hold ([`without_server_hold`](Builder::without_server_hold))
    /// is not taken from `max_wait`.
    ///
    /// A call waits only for an attempt worth making: one whose expected value
    /// `p · V − c` is positive at the rate the endpoint succeeds outside its
    /// current run of failures (the rate a call can expect once a probe finds
    /// it back). Where that attempt does not pay — at `V ≤ c`, or at `V/c = 2`
    /// on an endpoint that succeeds half the time or less — the call fails
    /// fast as it would without this setting: refused at once it loses
    /// nothing, and it saves the attempt the wait would lead to.
    ///
    /// # Why
    ///
    /// Failing fast is the breaker's default because a caller may have
    /// somewhere else to go (a fallback provider, a cached answer) and because
    /// a caller's threads and connections are not free. A caller with neither,
    /// whose request is worth waiting for — an agent step that needs this
    /// model's answer, a batch job — loses every call refused between the
    /// endpoint's recovery and the next probe. Waiting costs no attempt: the
    /// waiting calls make none until the breaker admits them, so the endpoint
    /// sees no more load than with failing fast. This is gRPC's
    /// "wait for ready", bounded by the caller's own limit.
    ///
    /// ```
    /// use std::time::Duration;
    /// use bayesretry_policy::RetryPolicy;
    ///
    /// let policy = RetryPolicy::builder()
    ///     .with_max_elapsed(Duration::from_secs(30))
    ///     .with_wait_while_open(Duration::from_secs(10))
    ///     .build()
    ///     .unwrap();
    /// # let _ = policy;
    /// ```
    pub fn with_wait_while_open(mut self, max_wait: Duration) -> Builder {
        self.wait_while_open = Some(max_wait);
        self
    }

    /// A server's Retry-After holds only the call it answered, not the whole
    /// endpoint.
    ///
    /// By default (with the breaker on), a failure that carries a server's
    /// wait — a 429's or a 503's `Retry-After`, as the classifier reports it
    /// ([`Classification::RetryAfter`](crate::Classification::RetryAfter)) —
    /// holds its endpoint until the wait runs out: no attempt at the endpoint
    /// starts before then, from any call of the policy (or of its clones). A
    /// wait longer than the policy honours
    /// ([`with_max_retry_after`](Builder::with_max_retry_after)) stops the call
    /// it came with and holds nothing. A call that would start its first
    /// attempt fails at once with
    /// [`RetryErrorKind::ServerHold`](crate::RetryErrorKind::ServerHold), which
    /// says how long is left; a retry already decided waits for the hold to
    /// end, within the Retry-After limit and the deadline, and otherwise ends
    /// the call the same way. A first attempt does not wait for a hold even
    /// under [`with_wait_while_open`](Builder::with_wait_while_open): the calls
    /// that waited would all go the moment it ends and meet the server's
    /// refusal together, where the breaker lets one probe through first (in
    /// the benchmark, waiting cost the waiting variant up to a fifth of its
    /// net value on the rate-limited endpoint).
    ///
    /// # Why
    ///
    /// A server that answers one caller "retry after 2 s" is, nearly always,
    /// out of capacity or quota for every caller with the same key: a rate
    /// limiter's bucket is empty, an overloaded backend is shedding. Every
    /// attempt sent before the wait ends meets the same answer and costs what
    /// any attempt costs (and, on many providers, counts against the limit),
    /// while the successes the server can give in that time are the same
    /// whoever asks. Refusing those attempts in the client is free. In the
    /// decision benchmark's rate-limited scenario (a token bucket of 1 call a
    /// second against 10 arriving) the hold raises the net value of the
    /// default policy at every value of a success: from below sending no
    /// retries at all (from `V/c` 10 up) to within 14 per 1000 calls of the
    /// SRE client-side throttle (ahead of it at `V/c` 1, 2, 100 and 200).
    ///
    /// # Across a fleet
    ///
    /// With a shared breaker ([`with_shared_breaker`](Builder::with_shared_breaker)),
    /// the hold reaches every process the breaker is shared with: a hold a
    /// failure sets is told to the shared breaker with its end
    /// ([`FleetView::hold`]), and before each attempt its own hold and its
    /// own breaker admitted, the policy asks whether the fleet holds the
    /// endpoint ([`FleetView::held_until`]). A fleet's hold is taken as the
    /// server's own wait: a first attempt fails fast with `ServerHold` and
    /// the fleet's time left, a retry already decided waits for it within
    /// the Retry-After limit and the deadline, and the hold is set on the
    /// endpoint here too, so that the calls after it fail fast without
    /// asking. A fleet's hold with more time left than this policy's limit
    /// holds nothing, as a server's wait beyond the limit does not.
    ///
    /// Turn it off where a server's wait is about one request rather than the
    /// endpoint: a limit on the size of one request, a per-user quota behind
    /// one shared endpoint name (or give each user an endpoint name of its
    /// own). Turned off, the policy neither tells a shared breaker of a hold
    /// nor asks it for one. A policy without a breaker keeps no per-endpoint
    /// state, and holds nothing.
    pub fn without_server_hold(mut self) -> Builder {
        self.server_hold = false;
        self
    }

    /// A breaker per endpoint with these settings, in place of
    /// [`default_breaker`]'s (the cost model no longer sets `open_below`).
    pub fn with_breaker(mut self, breaker: bayesretry_breaker::Config) -> Builder {
        self.breaker = BreakerChoice::Given(breaker);
        self
    }

    /// No breaker.
    pub fn without_breaker(mut self) -> Builder {
        self.breaker = BreakerChoice::Off;
        self
    }

    /// A retry budget shared by every call: first attempts deposit, each retry
    /// spends 1. A retry is charged only when it is really made, after the
    /// `should_retry` hook has had its say: a vetoed retry spends nothing, nor
    /// does one whose call was cancelled while the attempt was under way. A
    /// retry charged and then not made — the call cancelled or dropped during
    /// the backoff, the retry stopped after it by the breaker, the deadline or
    /// its judgement again — gives its unit back
    /// ([`Budget::refund`](bayesretry_budget::Budget::refund)); a budget of
    /// your own that does not implement `refund` keeps it.
    pub fn with_budget(mut self, budget: impl Budget + Send + Sync + 'static) -> Builder {
        self.budget = Some(Arc::new(budget));
        self
    }

    /// A budget already shared with other policies.
    pub fn with_shared_budget(mut self, budget: Arc<dyn Budget + Send + Sync>) -> Builder {
        self.budget = Some(budget);
        self
    }

    /// A breaker shared by a fleet of processes ([`FleetView`]), consulted
    /// beside each endpoint's own breaker: `bayesretry-redis`'s
    /// `FleetBreaker` is one.
    ///
    /// The policy keeps its own breaker per endpoint — the one its learning
    /// decisions read the run of failures from, and the one that sees every
    /// outcome at once — and asks the shared one only after its own admits
    /// an attempt:
    ///
    /// - a refusal by either makes no attempt. The call ends with
    ///   [`RetryErrorKind::CircuitOpen`](crate::RetryErrorKind::CircuitOpen),
    ///   whose `retry_after` is the later of the two breakers' ends (the
    ///   shared one's as [`FleetView::open_until`] gives it), or, under
    ///   [`with_wait_while_open`](Builder::with_wait_while_open), waits: a
    ///   shared refusal is waited out to the end it gave (the earliest time
    ///   asking again may be worth it), within `max_wait` and the deadline,
    ///   and the shared breaker is asked again then. A probe slot the
    ///   policy's own breaker gave the refused attempt goes back to it;
    /// - a retry is decided with the endpoint open when either holds it open
    ///   (the decision's reason is then `CircuitOpen`, which the observer and
    ///   the `tracing` events see);
    /// - each attempt's outcome goes to both, with whether it was the shared
    ///   breaker's probe ([`FleetView::record`]); a probe of either whose
    ///   attempt was never sent or ended without an outcome — a permanent
    ///   error, a cancellation seen before sending
    ///   ([`Call::cancelled_before_sending`](crate::Call::cancelled_before_sending)),
    ///   a call dropped in flight — goes back to the breaker that gave it;
    /// - each opening, reopening and closing of the policy's own breaker is
    ///   told to the shared one ([`FleetView::publish`]), which is how a
    ///   fleet learns that an endpoint is down;
    /// - a server's hold goes both ways, unless
    ///   [`without_server_hold`](Builder::without_server_hold): each hold a
    ///   failure sets is told to the shared breaker ([`FleetView::hold`]),
    ///   and it is asked, before `admit`, whether the fleet holds the
    ///   endpoint ([`FleetView::held_until`]). A fleet's hold refuses the
    ///   attempt as a server's hold, not as an open breaker
    ///   ([`RetryErrorKind::ServerHold`](crate::RetryErrorKind::ServerHold),
    ///   or a wait for a retry already decided), and holds the endpoint here
    ///   too (see [`without_server_hold`](Builder::without_server_hold), "Across
    ///   a fleet").
    ///
    /// Times cross the seam on the policy's clock
    /// ([`with_clock`](Builder::with_clock)); a shared breaker with a clock
    /// of its own reads durations from them (see [`FleetView`]'s Clocks).
    ///
    /// # Not without a breaker of the policy's own
    ///
    /// The shared breaker learns of openings from the policy's breaker: with
    /// [`without_breaker`](Builder::without_breaker) (or
    /// [`classic`](Builder::classic), which turns the breaker off) there is
    /// nothing to tell it, and a fleet of such policies would never open an
    /// endpoint for anyone. [`build`](Builder::build) refuses the combination
    /// with [`Error::SharedBreakerWithoutBreaker`]; a classic policy that
    /// should follow a fleet's breaker is given a breaker of its own with
    /// [`with_breaker`](Builder::with_breaker) after `classic()`.
    ///
    /// # Cost
    ///
    /// A policy without a shared breaker pays nothing for the seam: its
    /// first attempt's fast path tests one flag it tested already (the
    /// per-attempt timeout's). With one, every call takes the general loop,
    /// and each attempt costs a call to the shared breaker's `admit` and one
    /// to its `record` — and, with the server's hold on, one to its
    /// `held_until`, which a view that holds nothing answers in one load
    /// (`bayesretry-redis`'s does), and, on a failure that carries a
    /// server's wait, one to its `hold`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use bayesretry_breaker::{Admission, FleetView, ProbeRound, Transition};
    /// use bayesretry_policy::{Error, RetryPolicy};
    ///
    /// /// A fleet that never refuses (a stand-in for a real one).
    /// struct Quiet;
    /// impl FleetView for Quiet {
    ///     fn admit(&self, _: &str, _: u64) -> Admission { Admission::Allowed }
    ///     fn record(&self, _: &str, _: u64, _: bool, _: Option<ProbeRound>) {}
    ///     fn publish(&self, _: &str, _: u64, _: Transition) {}
    ///     fn release_probe(&self, _: &str, _: ProbeRound) {}
    /// }
    ///
    /// let fleet: Arc<dyn FleetView + Send + Sync> = Arc::new(Quiet);
    /// let policy = RetryPolicy::builder().with_shared_breaker(Arc::clone(&fleet)).build()?;
    /// # let _ = policy;
    /// let refused = RetryPolicy::builder().without_breaker().with_shared_breaker(fleet).build();
    /// assert!(matches!(refused, Err(Error::SharedBreakerWithoutBreaker)));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn with_shared_breaker(mut self, breaker: Arc<dyn FleetView + Send + Sync>) -> Builder {
        self.shared_breaker = Some(breaker);
        self
    }

    /// The store's settings: prior, hierarchical priors, decay, capacity. They
    /// replace [`default_store`]'s whole: start from it to keep its decay
    /// (`default_store().with_max_contexts(..)`).
    pub fn with_store_config(mut self, store: StoreConfig) -> Builder {
        self.store = store;
        self
    }

    /// Evidence halves in weight every `half_life`: old outcomes fade toward the
    /// prior.
    pub fn with_decay(mut self, half_life: HalfLife) -> Builder {
        self.store = self.store.with_half_life(half_life);
        self
    }

    /// The clock every component is told the time from.
    pub fn with_clock(mut self, clock: impl Clock) -> Builder {
        self.clock = Some(Arc::new(clock));
        self
    }

    /// The sleeper of [`RetryPolicy::run`]; any `Fn(Duration) -> impl Future`.
    /// [`run_blocking`](RetryPolicy::run_blocking) sleeps on the blocking
    /// sleeper ([`with_blocking_sleeper`](Builder::with_blocking_sleeper));
    /// [`with_virtual_time`](Builder::with_virtual_time) sets both.
    pub fn with_sleeper(mut self, sleeper: impl Sleeper) -> Builder {
        self.sleeper = Some(Arc::new(sleeper));
        self
    }

    /// The sleeper of [`RetryPolicy::run_blocking`]; any `Fn(Duration)`.
    pub fn with_blocking_sleeper(mut self, sleeper: impl BlockingSleeper) -> Builder {
        self.blocking = Some(Arc::new(sleeper));
        self
    }

    /// Virtual time: `sleeper`'s clock becomes the policy's clock, and it serves as
    /// both sleepers, so every delay advances the clock at once.
    ///
    /// The clock moves only when something advances it: the sleeper, by each
    /// delay it is handed, and the caller. A simulation of many calls must
    /// advance it between calls as real time would pass. If it does not, a
    /// breaker that opens never sees its cooldown end — calls that fail fast
    /// sleep nothing — and refuses every later call; evidence never ages.
    ///
    /// ```
    /// use bayesretry_policy::{ManualClock, RetryPolicy, VirtualSleeper};
    /// use std::time::Duration;
    ///
    /// let time = VirtualSleeper::new(ManualClock::new(0));
    /// let policy = RetryPolicy::builder()
    ///     .with_virtual_time(time.clone())
    ///     .build()
    ///     .unwrap();
    /// for call in 0..100_u32 {
    ///     time.clock().advance(Duration::from_millis(100)); // a call every 100 ms
    ///     let _ = policy.run_blocking("provider", |_| Ok::<_, std::io::Error>(call));
    /// }
    /// ```
    pub fn with_virtual_time(self, sleeper: VirtualSleeper) -> Builder {
        self.with_clock(sleeper.clock().clone())
            .with_blocking_sleeper(sleeper.clone())
            .with_sleeper(sleeper)
    }

    /// The seed of the jitter and the Thompson draws: one seed, one sequence.
    ///
    /// Each thread draws from blocks of the sequence it reserves, so calls on
    /// different threads never draw the same word; calls that run in the same
    /// order on one thread draw exactly the same words from the same seed.
    pub fn with_seed(mut self, seed: u64) -> Builder {
        self.seed = Some(seed);
        self
    }

    /// An observer of every decision and outcome.
    pub fn with_observer(mut self, observer: impl Observer) -> Builder {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// Checks the settings and builds the policy.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidMaxAttempts`] for a cap of 0,
    /// [`Error::SharedBreakerWithoutBreaker`] for a shared breaker on a policy
    /// without a breaker of its own, and the backoff's, breaker's, store's or
    /// decision engine's own error for a config of theirs they reject.
    pub fn build(self) -> Result<RetryPolicy, Error> {
        if self.max_attempts == 0 {
            return Err(Error::InvalidMaxAttempts(self.max_attempts));
        }
        if self.shared_breaker.is_some() && matches!(self.breaker, BreakerChoice::Off) {
            return Err(Error::SharedBreakerWithoutBreaker);
        }
        let backoff = self.backoff.build().map_err(Error::Backoff)?;
        let cost_model = self.effective_cost_model().map_err(Error::Cost)?;
        let endpoints = match self.breaker_config(&cost_model) {
            Some(config) => {
                let template = config.build().map_err(Error::Breaker)?;
                let mut priced = Vec::new();
                if matches!(self.breaker, BreakerChoice::Default) && self.learning {
                    for (endpoint, model) in self.endpoint_costs.iter() {
                        let breaker = default_breaker(&model).build().map_err(Error::Breaker)?;
                        priced.push((endpoint, breaker));
                    }
                }
                Some(
                    Endpoints::new(template, fresh_seed(), self.store.max_endpoint_bytes())
                        .with_priced(priced),
                )
            }
            None => None,
        };
        let store = self.store.build().map_err(Error::Store)?;
        let strategy = if self.learning {
            self.strategy
        } else {
            Strategy::Greedy
        };
        // a classic policy prices nothing: its engine decides on the count
        let endpoint_costs = (self.learning && !self.endpoint_costs.is_empty())
            .then(|| Box::new(self.endpoint_costs));
        let engine = bayesretry_decision::Config::new(cost_model)
            .with_strategy(strategy)
            .with_max_attempts(self.max_attempts)
            .build()
            .map_err(Error::Decision)?;
        let sleeper = match self.sleeper {
            Some(sleeper) => sleeper,
            None => default_sleeper(),
        };
        let plain = !self.learning
            && endpoints.is_none()
            && self.max_elapsed.is_none()
            && self.budget.is_none()
            && self.observer.is_none();
        let first_in_loop = self.attempt_timeout.is_some() || self.shared_breaker.is_some();
        Ok(RetryPolicy {
            inner: Arc::new(Inner {
                plain,
                engine,
                endpoint_costs,
                store,
                learning: self.learning,
                max_attempts: self.max_attempts,
                backoff,
                max_elapsed: self.max_elapsed,
                attempt_timeout: self.attempt_timeout,
                max_retry_after: self.max_retry_after,
                wait_while_open: self.wait_while_open,
                server_hold: self.server_hold,
                endpoints,
                budget: self.budget,
                shared: self.shared_breaker,
                first_in_loop,
                clock: self.clock.unwrap_or_else(|| Arc::new(SystemClock::new())),
                sleeper,
                blocking: self.blocking.unwrap_or_else(|| Arc::new(ThreadSleeper)),
                rng: SplitMix::new(self.seed.unwrap_or_else(fresh_seed)),
                observer: self.observer,
            }),
        })
    }

    /// The cost model the engine is built with: the one set, or the defaults;
    /// in classic mode any `p > 0` is worth a free attempt.
    fn effective_cost_model(&self) -> Result<CostModel, bayesretry_cost::Error> {
        match (self.cost_model, self.learning) {
            (Some(model), true) => Ok(model),
            (_, false) => CostModel::new(1.0, 0.0),
            (None, true) => CostModel::new(DEFAULT_SUCCESS_VALUE, DEFAULT_ATTEMPT_COST),
        }
    }

    /// The breaker settings each endpoint gets under `cost_model`, if any.
    fn breaker_config(&self, cost_model: &CostModel) -> Option<bayesretry_breaker::Config> {
        match self.breaker {
            BreakerChoice::Default => Some(default_breaker(cost_model)),
            BreakerChoice::Given(config) => Some(config),
            BreakerChoice::Off => None,
        }
    }

    /// The breaker as `Debug` shows it: the settings it will be built with.
    fn breaker_debug(&self) -> Option<bayesretry_breaker::Config> {
        self.effective_cost_model()
            .ok()
            .and_then(|model| self.breaker_config(&model))
    }

    /// [`build`](Builder::build) for settings known to be valid: the defaults of
    /// every component, with a cap of at least 1.
    #[expect(
        clippy::expect_used,
        reason = "only called with the defaults and a cap >= 1, which build accepts"
    )]
    fn build_checked(self) -> RetryPolicy {
        self.build().expect("the default settings are valid")
    }
}

/// Which breaker each endpoint of a [`Builder`]'s policy gets.
#[derive(Clone, Copy, Debug)]
enum BreakerChoice {
    /// [`default_breaker`] for the cost model the policy is built with.
    Default,
    /// These settings.
    Given(bayesretry_breaker::Config),
    /// None.
    Off,
}

/// The async sleeper used when none is set.
fn default_sleeper() -> Arc<dyn DynSleeper> {
    Arc::new(crate::sleep::DefaultSleeper)
}
