//! [`Situation`]: what the caller knows about the call when it asks for a decision.

use bayesretry_beta::CHANGE_HAZARD;
use bayesretry_cost::CostModel;

/// The facts and verdicts a decision needs besides the posterior: the deadline,
/// the planned delay, the server's Retry-After, and what the breaker, the budget and
/// the error classifier said.
///
/// The engine is sans-IO: it reads no clock, and it does not call the breaker or
/// the budget. The caller asks them and passes their answers in, together with the
/// current time as `now_ms` (a monotonic millisecond count, the same one the
/// deadline is expressed in). The number of attempts made is the context's
/// [`attempt`](bayesretry_store::Context::attempt), the attempt that just failed.
///
/// A plain `Copy` value: build it with [`Situation::new`] and the `with_*`
/// setters for what differs from the defaults.
///
/// # Default
///
/// - no deadline;
/// - a planned delay of 0 ms;
/// - no Retry-After from the server, and no limit on it;
/// - the breaker closed, the budget available, the error not permanent;
/// - no failure run: the posterior alone decides; if one is given, a change
///   hazard of [`CHANGE_HAZARD`];
/// - no cost model of the call's own: the engine's for the endpoint.
///
/// ```
/// use bayesretry_decision::Situation;
///
/// let situation = Situation::new()
///     .with_deadline_ms(10_000)
///     .with_delay_ms(400)
///     .with_retry_after_ms(2_000)
///     .with_max_retry_after_ms(60_000);
/// assert_eq!(situation.deadline_ms(), Some(10_000));
/// assert!(!situation.breaker_open() && situation.budget_available());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Situation {
    deadline_ms: Option<u64>,
    delay_ms: u64,
    retry_after_ms: Option<u64>,
    max_retry_after_ms: Option<u64>,
    breaker_open: bool,
    budget_exhausted: bool,
    permanent: bool,
    /// Failures in a row at the endpoint, and the bits of its usual success rate
    /// (bits, so that the type stays `Eq` and `Hash`).
    failure_run: Option<(u32, u64)>,
    /// The bits of the prior probability that the run began with a change, if
    /// given; [`CHANGE_HAZARD`] otherwise.
    change_hazard: Option<u64>,
    /// The bits of the call's own success value and attempt cost; a success
    /// value of 0 (which no cost model has) when none is given, so that a
    /// situation without one is no larger than two words more, and built
    /// with plain stores.
    cost_model: (u64, u64),
}

impl Situation {
    /// The defaults listed above: nothing stands in the way of a retry but the
    /// attempt cap and the expected value.
    pub const fn new() -> Situation {
        Situation {
            deadline_ms: None,
            delay_ms: 0,
            retry_after_ms: None,
            max_retry_after_ms: None,
            breaker_open: false,
            budget_exhausted: false,
            permanent: false,
            failure_run: None,
            change_hazard: None,
            cost_model: (0, 0),
        }
    }

    /// The time, on the `now_ms` clock, by which the call must be over. A retry
    /// is made only if the next attempt can *start* strictly before it: an attempt
    /// that starts at the deadline has no time left to succeed in.
    pub const fn with_deadline_ms(mut self, deadline_ms: u64) -> Self {
        self.deadline_ms = Some(deadline_ms);
        self
    }

    /// No deadline (the default).
    pub const fn without_deadline(mut self) -> Self {
        self.deadline_ms = None;
        self
    }

    /// How long the caller plans to wait before the next attempt, in milliseconds:
    /// the backoff delay (already raised to the server's Retry-After, or not: the
    /// engine waits for the longer of the two either way).
    pub const fn with_delay_ms(mut self, delay_ms: u64) -> Self {
        self.delay_ms = delay_ms;
        self
    }

    /// How long the server asked the client to wait before trying again (a
    /// `Retry-After` or `retry-after-ms` header), in milliseconds.
    ///
    /// The next attempt is taken to start no earlier than this, since an attempt
    /// made sooner is one the server has already said it will refuse: pass it only
    /// if the caller honours it.
    pub const fn with_retry_after_ms(mut self, retry_after_ms: u64) -> Self {
        self.retry_after_ms = Some(retry_after_ms);
        self
    }

    /// No Retry-After from the server (the default).
    pub const fn without_retry_after(mut self) -> Self {
        self.retry_after_ms = None;
        self
    }

    /// The longest Retry-After the caller is prepared to wait, in milliseconds. A
    /// server that asks for more stops the retry with
    /// [`RetryAfterBeyondLimit`](crate::Reason::RetryAfterBeyondLimit); asking for
    /// exactly this much does not.
    pub const fn with_max_retry_after_ms(mut self, max_retry_after_ms: u64) -> Self {
        self.max_retry_after_ms = Some(max_retry_after_ms);
        self
    }

    /// Any Retry-After is acceptable (the default); only the deadline limits it.
    pub const fn without_max_retry_after(mut self) -> Self {
        self.max_retry_after_ms = None;
        self
    }

    /// Whether the endpoint's circuit breaker is open, as the caller's breaker
    /// answered for the next attempt.
    pub const fn with_breaker_open(mut self, open: bool) -> Self {
        self.breaker_open = open;
        self
    }

    /// Whether the retry budget grants this retry.
    ///
    /// A budget is asked by spending from it, and a spend cannot be taken back. A
    /// caller that spends before deciding loses the spend when the expected value
    /// then says stop, which only makes the budget stricter; one that wants no
    /// spend wasted decides with the budget assumed available and spends once the
    /// decision says retry, treating a denied spend as
    /// [`BudgetExhausted`](crate::Reason::BudgetExhausted).
    pub const fn with_budget_available(mut self, available: bool) -> Self {
        self.budget_exhausted = !available;
        self
    }

    /// Whether the error is permanent (bad request, failed authentication, a
    /// programming error): no attempt can succeed, and nothing overrides that.
    pub const fn with_permanent(mut self, permanent: bool) -> Self {
        self.permanent = permanent;
        self
    }

    /// What the endpoint's breaker has seen: `failures` in a row (first tries
    /// included, since its last success) on an endpoint whose usual success rate
    /// is `usual_success_rate`. The engine weighs the run as evidence that the
    /// endpoint has just changed — an outage beginning — and lowers the
    /// probability it acts on accordingly; see
    /// [the crate documentation](crate#a-run-of-failures). A run of 0, or a rate
    /// that is not strictly between 0 and 1, changes nothing.
    ///
    /// The usual rate is the one the endpoint had *before* the run began
    /// (`bayesretry_breaker::RunReading::usual_success_rate`), not a posterior
    /// mean that already holds the run's own failures: the run is weighed by
    /// its likelihood at that rate, `(1 − p₀)^k`, and a rate lowered by the run
    /// would read the run as the more ordinary the longer it grows. The
    /// engine takes the rate as given; only the caller can tell which of its
    /// failures belong to the run.
    ///
    /// ```
    /// use bayesretry_cost::CostModel;
    /// use bayesretry_decision::{Config, Situation};
    /// use bayesretry_store::{Context, ErrorClass, MemoryStore};
    ///
    /// let engine = Config::new(CostModel::new(10.0, 1.0)?).build().unwrap();
    /// let store = MemoryStore::new();
    /// let ctx = Context::new("api", 1, ErrorClass::Http(503)); // never seen: prior mean ½
    /// let calm = Situation::new().with_failure_run(1, 0.95);
    /// assert!(engine.decide(&store, &ctx, &calm, 0).retry());
    /// // five failures in a row on an endpoint that usually succeeds: an outage
    /// let outage = Situation::new().with_failure_run(5, 0.95);
    /// assert!(!engine.decide(&store, &ctx, &outage, 0).retry());
    /// # Ok::<(), bayesretry_cost::Error>(())
    /// ```
    pub fn with_failure_run(mut self, failures: u32, usual_success_rate: f64) -> Self {
        self.failure_run = Some((failures, usual_success_rate.to_bits()));
        self
    }

    /// The prior probability that the failure run began with a change of the
    /// endpoint, as its breaker reckons it from the rate of runs it sees
    /// ([`hazard_per_run`](bayesretry_beta::hazard_per_run)): a busy endpoint
    /// whose failures are ordinary meets long runs by chance, and reads them as
    /// an outage only when they are longer still. [`CHANGE_HAZARD`], one run in
    /// a hundred, unless given; clamped into [0, 1], NaN read as the default.
    ///
    /// ```
    /// use bayesretry_cost::CostModel;
    /// use bayesretry_decision::{Config, Situation};
    /// use bayesretry_store::{Context, ErrorClass, MemoryStore};
    ///
    /// let engine = Config::new(CostModel::new(10.0, 1.0)?).build().unwrap();
    /// let store = MemoryStore::new();
    /// let ctx = Context::new("api", 1, ErrorClass::Http(500)); // prior mean ½
    /// // fourteen failures in a row where one in two fails: per run, a change
    /// let run = Situation::new().with_failure_run(14, 0.5);
    /// assert!(!engine.decide(&store, &ctx, &run, 0).retry());
    /// // at the hazard of an endpoint with 250 runs a second: bad luck
    /// let busy = run.with_change_hazard(1.0 / (0.25 * 600_000.0));
    /// assert!(engine.decide(&store, &ctx, &busy, 0).retry());
    /// # Ok::<(), bayesretry_cost::Error>(())
    /// ```
    pub fn with_change_hazard(mut self, hazard: f64) -> Self {
        self.change_hazard = Some(hazard.to_bits());
        self
    }

    /// What this call's success is worth and what its next attempt costs, in
    /// place of the engine's model for the endpoint.
    ///
    /// The engine's models price an endpoint; a call may be worth more or
    /// less than its endpoint's usual one — an answer a user waits for
    /// against a background job's, a long generation against a short one —
    /// while what the endpoint has taught about its odds is the same. The
    /// posterior is shared; only the price differs. Every strategy prices
    /// with it, the lookahead's later attempts too. The hard checks are not
    /// priced and do not change.
    ///
    /// ```
    /// use bayesretry_cost::CostModel;
    /// use bayesretry_decision::{Config, Situation};
    /// use bayesretry_store::{Context, ErrorClass, MemoryStore};
    ///
    /// let engine = Config::new(CostModel::new(10.0, 1.0)?).build().unwrap();
    /// let store = MemoryStore::new();
    /// let ctx = Context::new("llm", 1, ErrorClass::Http(529)); // never seen: prior mean ½
    /// // at the endpoint's price a retry is worth ½ · 10 − 1 = 4
    /// assert!(engine.decide(&store, &ctx, &Situation::new(), 0).retry());
    /// // a call worth only one and a half attempts: ½ · 1.5 − 1 < 0
    /// let cheap = Situation::new().with_cost_model(CostModel::new(1.5, 1.0)?);
    /// let decision = engine.decide(&store, &ctx, &cheap, 0);
    /// assert!(!decision.retry());
    /// assert!((decision.expected_value() - (0.5 * 1.5 - 1.0)).abs() < 1e-12);
    /// # Ok::<(), bayesretry_cost::Error>(())
    /// ```
    pub const fn with_cost_model(mut self, cost_model: CostModel) -> Self {
        self.cost_model = (
            cost_model.success_value().to_bits(),
            cost_model.attempt_cost().to_bits(),
        );
        self
    }

    /// Drops the call's own cost model: the engine's prices it (the default).
    pub const fn without_cost_model(mut self) -> Self {
        self.cost_model = (0, 0);
        self
    }

    /// Drops the failure run: the posterior alone decides (the default).
    pub const fn without_failure_run(mut self) -> Self {
        self.failure_run = None;
        self
    }

    /// The deadline, if any.
    pub const fn deadline_ms(&self) -> Option<u64> {
        self.deadline_ms
    }

    /// The planned delay before the next attempt, in milliseconds.
    pub const fn delay_ms(&self) -> u64 {
        self.delay_ms
    }

    /// The server's Retry-After, in milliseconds, if it sent one.
    pub const fn retry_after_ms(&self) -> Option<u64> {
        self.retry_after_ms
    }

    /// The longest acceptable Retry-After, in milliseconds, if limited.
    pub const fn max_retry_after_ms(&self) -> Option<u64> {
        self.max_retry_after_ms
    }

    /// How long until the next attempt can start: the planned delay, or the
    /// server's Retry-After if that is longer.
    pub const fn wait_ms(&self) -> u64 {
        match self.retry_after_ms {
            Some(retry_after) if retry_after > self.delay_ms => retry_after,
            _ => self.delay_ms,
        }
    }

    /// Whether the breaker is open.
    pub const fn breaker_open(&self) -> bool {
        self.breaker_open
    }

    /// Whether the budget grants the retry.
    pub const fn budget_available(&self) -> bool {
        !self.budget_exhausted
    }

    /// Whether the error is permanent.
    pub const fn permanent(&self) -> bool {
        self.permanent
    }

    /// The endpoint's failure run and usual success rate, if given.
    pub fn failure_run(&self) -> Option<(u32, f64)> {
        self.failure_run
            .map(|(failures, bits)| (failures, f64::from_bits(bits)))
    }

    /// The call's own cost model, if given.
    #[inline]
    pub fn cost_model(&self) -> Option<CostModel> {
        let (value, cost) = self.cost_model;
        if value == 0 {
            return None;
        }
        // the bits of a model that was valid when given: valid again
        CostModel::new(f64::from_bits(value), f64::from_bits(cost)).ok()
    }

    /// The prior probability that the failure run began with a change, as
    /// given (before clamping), or [`CHANGE_HAZARD`].
    pub fn change_hazard(&self) -> f64 {
        self.change_hazard.map_or(CHANGE_HAZARD, f64::from_bits)
    }
}
