//! BayesRetry in the simulator: the real [`RetryPolicy`] run loop, on the
//! simulator's virtual clock and sleeper.

use alloc::sync::Arc;
use core::cell::RefCell;
use core::sync::atomic::{AtomicU64, Ordering};
use core::time::Duration;

use bayesretry_breaker::State as BreakerState;
use bayesretry_policy::{
    Classification, Context, Decision, ErrorClass, Observer, RetryError, RetryErrorKind,
    RetryPolicy, Strategy,
};
use bayesretry_store::HalfLife;

use crate::environment::{CallSpec, DEADLINE_US, Environment, Failure};
use crate::luck::PolicyStream;
use crate::scenario::SECOND;
use crate::timeline::Timeline;
use crate::trace::{CallRecord, RunLog};

/// How a BayesRetry policy is set up for a run: the default configuration
/// with the run's value model, or with the documented adjustments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BayesConfig {
    /// Greedy, Thompson or lookahead.
    pub strategy: Strategy,
    /// Success value V (attempt cost 1).
    pub value: f64,
    /// Attempts in all.
    pub max_attempts: u32,
    /// Evidence half-life in milliseconds (`None`: the policy's default,
    /// `bayesretry_policy::DEFAULT_EVIDENCE_HALF_LIFE`, ten minutes; 0: no
    /// decay).
    pub half_life_ms: Option<u64>,
    /// The breaker's longest cooldown in milliseconds (`None`: the default).
    pub max_cooldown_ms: Option<u64>,
    /// Whether the breaker and the posteriors are keyed by shard as well as
    /// endpoint (the call attribute S8 splits on).
    pub shard_keys: bool,
    /// The prior of a context never seen, as (alpha, beta) (`None`: Beta(1, 1)).
    pub prior: Option<(f64, f64)>,
    /// The breaker opens when the credible upper bound of an endpoint's success
    /// rate falls below this (`None`: the policy's default, the break-even
    /// `1 / V` clamped to [0.05, 0.9]).
    pub open_below: Option<f64>,
    /// The policy's default before the break-even breaker (reported as `BR-G0`,
    /// `BR-T0`, `BR-L0`): the breaker crate's own `Config::new()` (opens below
    /// 0.05, no decay) in place of `bayesretry_policy::default_breaker`.
    pub previous_breaker: bool,
    /// How stale the class-level evidence may get, ms (`None`: the store's default).
    pub class_refresh_ms: Option<u64>,
    /// The backoff as (base, cap) in ms, full jitter (`None`: the policy's
    /// default, 500 ms doubling to 30 s).
    pub backoff_ms: Option<(u64, u64)>,
    /// Whether a call the breaker refuses waits for it, up to the call's
    /// deadline (`Builder::with_wait_while_open`), reported as `BR-Gw` and
    /// its siblings.
    pub wait_while_open: bool,
}

impl BayesConfig {
    /// The default configuration, told the run's value model.
    pub const fn new(strategy: Strategy, value: f64, max_attempts: u32) -> BayesConfig {
        BayesConfig {
            strategy,
            value,
            max_attempts,
            half_life_ms: None,
            max_cooldown_ms: None,
            shard_keys: false,
            prior: None,
            open_below: None,
            previous_breaker: false,
            class_refresh_ms: None,
            backoff_ms: None,
            wait_while_open: false,
        }
    }

    /// The default configuration, with calls the breaker refuses waiting for
    /// it up to their deadline (reported as `BR-Gw`, `BR-Tw`, `BR-Lw`).
    pub fn waiting(strategy: Strategy, value: f64, max_attempts: u32) -> BayesConfig {
        BayesConfig {
            wait_while_open: true,
            ..BayesConfig::new(strategy, value, max_attempts)
        }
    }

    /// The policy's previous default (reported as `BR-G0`, `BR-T0`, `BR-L0`),
    /// kept to show what the break-even breaker with decaying evidence changed.
    pub fn previous_default(strategy: Strategy, value: f64, max_attempts: u32) -> BayesConfig {
        BayesConfig {
            previous_breaker: true,
            ..BayesConfig::new(strategy, value, max_attempts)
        }
    }

    /// Whether anything differs from the default configuration.
    pub fn is_adjusted(&self) -> bool {
        self.half_life_ms.is_some()
            || self.max_cooldown_ms.is_some()
            || self.shard_keys
            || self.prior.is_some()
            || self.open_below.is_some()
            || self.class_refresh_ms.is_some()
            || self.backoff_ms.is_some()
    }

    /// The id in reports: BR-G, BR-T, BR-L, with `+` for an adjusted
    /// configuration, `0` for the previous default and `w` for waiting while
    /// the breaker is open.
    pub fn id(&self) -> String {
        let base = match self.strategy {
            Strategy::Thompson => "BR-T",
            Strategy::Lookahead => "BR-L",
            _ => "BR-G",
        };
        if self.is_adjusted() {
            format!("{base}+")
        } else if self.previous_breaker {
            format!("{base}0")
        } else if self.wait_while_open {
            format!("{base}w")
        } else {
            base.to_owned()
        }
    }

    /// The policy on `timeline`, with every parameter as text.
    ///
    /// # Errors
    ///
    /// The policy builder's error for a value it rejects.
    pub fn build(
        &self,
        seed: u64,
        timeline: &Timeline,
    ) -> Result<(RetryPolicy, String), bayesretry_policy::Error> {
        self.build_observed(seed, timeline, None)
    }

    /// [`build`](BayesConfig::build), the policy telling `predictions` of
    /// every decision (the parameters do not show it: it is the simulator's
    /// instrument, not the policy's configuration).
    ///
    /// # Errors
    ///
    /// The policy builder's error for a value it rejects.
    pub(crate) fn build_observed(
        &self,
        seed: u64,
        timeline: &Timeline,
        predictions: Option<Arc<Predictions>>,
    ) -> Result<(RetryPolicy, String), bayesretry_policy::Error> {
        let stream = PolicyStream::new(seed, &self.id());
        let cost = bayesretry_cost::CostModel::new(self.value, 1.0)
            .map_err(bayesretry_policy::Error::Cost)?;
        let mut store = bayesretry_policy::default_store().with_hash_seed(0x0051_4D5E_ED00);
        match self.half_life_ms.map(core::num::NonZeroU64::new) {
            None => {}
            // 0: evidence kept for good, as the store crate's own default
            Some(None) => store = store.without_decay(),
            Some(Some(ms)) => store = store.with_half_life(HalfLife::from_ms(ms)),
        }
        if let Some(ms) = self.class_refresh_ms {
            store = store.with_class_refresh_ms(ms);
        }
        if let Some((a, b)) = self.prior {
            // an invalid prior keeps the uniform one; the dumped parameters show it
            let prior = bayesretry_store::Beta::new(a, b)
                .unwrap_or_else(|_| bayesretry_store::Beta::uniform());
            store = store.with_prior(prior);
        }
        let sleeper_line = timeline.clone();
        let mut builder = RetryPolicy::builder()
            .with_strategy(self.strategy)
            .with_cost_model(cost)
            .with_max_attempts(self.max_attempts)
            .with_max_elapsed(Duration::from_micros(DEADLINE_US))
            .with_store_config(store)
            .with_seed(stream.seed());
        if let Some((base, cap)) = self.backoff_ms {
            builder = builder.with_backoff(
                bayesretry_backoff::Config::new()
                    .with_base_delay(Duration::from_millis(base))
                    .with_max_delay(Duration::from_millis(cap)),
            );
        }
        if self.previous_breaker {
            builder = builder.with_breaker(bayesretry_breaker::Config::new());
        } else if self.max_cooldown_ms.is_some() || self.open_below.is_some() {
            let mut breaker = bayesretry_policy::default_breaker(&cost);
            if let Some(ms) = self.max_cooldown_ms {
                breaker = breaker
                    .with_max_cooldown_ms(ms)
                    .with_cooldown_ms(ms.min(10_000));
            }
            if let Some(p) = self.open_below {
                breaker = breaker.with_open_below(p);
            }
            builder = builder.with_breaker(breaker);
        }
        if self.wait_while_open {
            builder = builder.with_wait_while_open(Duration::from_micros(DEADLINE_US));
        }
        let parameters = format!("{builder:?}; shard_keys: {}", self.shard_keys);
        if let Some(predictions) = predictions {
            builder = builder.with_observer(Listener(predictions));
        }
        let policy = builder
            .with_clock(timeline.clock().clone())
            .with_sleeper(move |d: Duration| sleeper_line.sleep(d))
            .build()?;
        Ok((policy, parameters))
    }
}

/// The class and hint the policy sees for a simulated failure.
pub(crate) fn classify(failure: &Failure) -> Classification {
    match *failure {
        Failure::Transient5xx(status) => Classification::Retryable(ErrorClass::Http(status)),
        Failure::Timeout => Classification::Retryable(ErrorClass::Timeout),
        Failure::ConnRefused => Classification::Retryable(ErrorClass::ConnectionRefused),
        Failure::RateLimited429 {
            retry_after_s: Some(s),
        } => Classification::RetryAfter(ErrorClass::Http(429), Duration::from_secs(s)),
        Failure::RateLimited429 {
            retry_after_s: None,
        } => Classification::Retryable(ErrorClass::Http(429)),
    }
}

/// The probability of each call's latest decision, as the policy's observer
/// is told it: what the calibration metric scores each retry against.
///
/// The observer hears of every decision with its context, not its call; but
/// the executor polls one call at a time, and a decision is made inside a poll
/// of its own call, so the call being polled ([`Timeline::task`]) is the one
/// decided for. An `on_failed_attempt` hook on each call would tell the same
/// for the retries that are made (a retry follows only a decision to retry,
/// which the hook sees before the budget and the observer after it, and the
/// budget can only turn a retry into a stop), at the cost of two allocations
/// of the policy per call: its box of hooks, and the hook's own.
#[derive(Debug)]
pub(crate) struct Predictions {
    timeline: Timeline,
    /// By task (the call's index in the run), the bits of the probability.
    latest: Box<[AtomicU64]>,
}

impl Predictions {
    /// No decision yet for any of `calls` calls on `timeline`.
    pub(crate) fn new(timeline: &Timeline, calls: usize) -> Predictions {
        Predictions {
            timeline: timeline.clone(),
            latest: (0..calls)
                .map(|_| AtomicU64::new(0.5_f64.to_bits()))
                .collect(),
        }
    }

    /// The probability of task `task`'s latest decision (0.5 before any).
    fn of(&self, task: usize) -> f64 {
        self.latest
            .get(task)
            .map_or(0.5, |p| f64::from_bits(p.load(Ordering::Relaxed)))
    }
}

/// The policy's observer that fills [`Predictions`].
#[derive(Debug)]
struct Listener(Arc<Predictions>);

impl Observer for Listener {
    fn on_decision(&self, decision: &Decision, _ctx: &Context<'_>) {
        let predictions = &self.0;
        if let Some(p) = predictions.latest.get(predictions.timeline.task()) {
            p.store(decision.probability().to_bits(), Ordering::Relaxed);
        }
    }
}

/// Shard names for keyed breakers (S8).
const SHARDS: [&str; 3] = ["S8/A", "S8/B", "S8/C"];

#[derive(Debug, Default)]
struct Track {
    attempts: u32,
    failed_retries: u32,
    early: u32,
    ra_expiry: u64,
}

/// What every call of a BayesRetry run shares.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Run<'a> {
    pub(crate) env: &'a Environment,
    pub(crate) timeline: &'a Timeline,
    /// The policy, which tells `predictions` of its decisions.
    pub(crate) policy: &'a RetryPolicy,
    pub(crate) predictions: &'a Predictions,
    /// Whether the calls are keyed by shard (see [`BayesConfig::shard_keys`]).
    pub(crate) shard_keys: bool,
    pub(crate) log: &'a RefCell<RunLog>,
}

/// Runs one call, the run's task `task`, in virtual time, and logs it.
pub(crate) async fn drive(run: &Run<'_>, task: usize, call: CallSpec) {
    let &Run {
        env,
        timeline,
        policy,
        predictions,
        shard_keys,
        log,
    } = run;
    let name = if shard_keys && env.scenario() == crate::Scenario::S8 {
        SHARDS.get(usize::from(call.shard)).copied().unwrap_or("S8")
    } else {
        env.endpoint_name(call.endpoint)
    };
    // A call that arrives while the breaker is open sees it open: one that
    // fails fast ends there and then, but one that waits for the breaker
    // (`wait_while_open`) ends only once it is admitted or gives up, seconds
    // later, and read only at the call's end the opening was dated by it.
    if matches!(policy.breaker_state(name), Some(BreakerState::Open { .. })) {
        log.borrow_mut()
            .breaker_opens
            .push((timeline.now_us(), call.endpoint));
    }
    // the call's own state lives in its future, borrowed by its attempts: no
    // allocation per call for it
    let track = &RefCell::new(Track::default());
    let result = policy
        .call_with(name, classify)
        .run(|attempt| async move {
            let now = timeline.now_us();
            {
                let mut t = track.borrow_mut();
                t.attempts = attempt;
                if attempt > 1 {
                    log.borrow_mut().retries.push((now, call.endpoint));
                    if now < t.ra_expiry {
                        t.early += 1;
                    }
                }
            }
            let outcome = env.attempt(&call, attempt, now);
            timeline.wait_us(outcome.latency_us).await;
            let end = timeline.now_us();
            let ok = outcome.failure.is_none();
            let mut t = track.borrow_mut();
            if attempt > 1 {
                let p = predictions.of(task);
                log.borrow_mut().note_brier(call.endpoint, p, ok);
                if !ok {
                    t.failed_retries += 1;
                }
            }
            match outcome.failure {
                None => Ok(()),
                Some(failure) => {
                    if let Failure::RateLimited429 {
                        retry_after_s: Some(s),
                    } = failure
                    {
                        t.ra_expiry = end.saturating_add(s.saturating_mul(SECOND));
                    }
                    Err(failure)
                }
            }
        })
        .await;
    let refused = matches!(
        result.as_ref().map_err(RetryError::kind),
        Err(RetryErrorKind::CircuitOpen { .. } | RetryErrorKind::ServerHold { .. })
    );
    let end = timeline.now_us();
    let t = track.borrow();
    let mut l = log.borrow_mut();
    if refused {
        l.refusals.push((end, call.endpoint));
    }
    if result.is_err() && matches!(policy.breaker_state(name), Some(BreakerState::Open { .. })) {
        l.breaker_opens.push((end, call.endpoint));
    }
    if let Some(rec) = l.call_mut(call.id) {
        *rec = CallRecord {
            endpoint: call.endpoint,
            shard: call.shard,
            arrival_us: call.arrival_us,
            end_us: end,
            attempts: t.attempts,
            success: result.is_ok(),
            failed_retries: t.failed_retries,
            early_retries: t.early,
            refused,
            done: true,
        };
    }
}
