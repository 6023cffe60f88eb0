//! BayesRetry in the simulators: the real decision engine, posterior store,
//! breaker and backoff of the workspace, driven by simulated events.
//!
//! `RetryPolicy::run` owns its loop and sleeps on its own, which a discrete-event
//! simulator with thousands of concurrent calls cannot hand it. So the pieces
//! `bayesretry-policy` builds by default are built here with the same settings
//! (its exported defaults), and called in the order its run loop calls them:
//!
//! 1. before every attempt, the first included, the breaker is asked to admit it;
//!    a refusal ends the call (the loop's fail-fast `CircuitOpen`);
//! 2. after an attempt, its outcome is recorded in the breaker, and the evidence
//!    of the context that led to it (the previous failure) goes to the store;
//! 3. after a failure, the engine decides on the context
//!    `(endpoint, attempts failed, class)` with the breaker's state and its run
//!    of failures (with the usual success rate it weighs the run against), and the
//!    backoff gives the delay; a retry the engine allows then spends from the
//!    budget, if there is one (first attempts deposit into it);
//! 4. before a retry goes out, if the breaker's run of failures grew during its
//!    wait, the engine decides again on the longer run, and a stop ends the call
//!    without the attempt.
//!
//! Only this ordering is written here; every decision, posterior and breaker
//! transition is the crates' own.

use core::time::Duration;

use bayesretry_backoff::Backoff;
use bayesretry_breaker::Breaker;
use bayesretry_budget::{RatioConfig, RatioLedger};
use bayesretry_cost::CostModel;
use bayesretry_decision::{DecisionEngine, Situation, Strategy};
use bayesretry_policy::{
    DEFAULT_ATTEMPT_COST, DEFAULT_MAX_ATTEMPTS, DEFAULT_SUCCESS_VALUE, default_breaker,
    default_store,
};
use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore, StoreConfig};

use crate::anchors::rng::SplitMix64;

/// The endpoint every simulated call goes to.
const ENDPOINT: &str = "server";

/// One BayesRetry state: what a `RetryPolicy` and its clones share (beliefs,
/// breaker, jitter stream). Give each client its own for per-client state, or
/// one to all of them for shared state.
#[derive(Debug)]
pub(crate) struct BayesRetry {
    engine: DecisionEngine,
    store: MemoryStore,
    breaker: Option<Breaker>,
    backoff: Backoff,
    budget: Option<RatioLedger>,
    rng: SplitMix64,
}

/// The per-call part of the loop: attempts made and the pending context.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct CallTrack {
    attempts: u32,
    previous: Option<(u32, ErrorClass)>,
    /// The failure run a pending retry was decided on.
    pending: Option<u32>,
}

/// The settings of a BayesRetry state.
#[derive(Clone, Debug)]
pub(crate) struct BayesConfig {
    /// Success value and attempt cost.
    pub(crate) cost: (f64, f64),
    /// Attempts in all.
    pub(crate) max_attempts: u32,
    /// The breaker, if any.
    pub(crate) breaker: Option<bayesretry_breaker::Config>,
    /// The backoff.
    pub(crate) backoff: bayesretry_backoff::Config,
    /// The store.
    pub(crate) store: StoreConfig,
    /// A retry budget (Finagle's ratio budget), if any.
    pub(crate) budget: Option<RatioConfig>,
}

impl BayesConfig {
    /// `RetryPolicy::new()`'s settings: greedy, value 10 and cost 1, 4 attempts,
    /// the policy's default store (hierarchical priors, a 10-minute half-life:
    /// `bayesretry_policy::default_store`), the policy's default breaker for that
    /// cost model (`bayesretry_policy::default_breaker`: opens below the
    /// break-even 0.1, evidence half-life 10 s), the default backoff (500 ms
    /// doubling, full jitter, 30 s cap), no budget.
    pub(crate) fn policy_default() -> BayesConfig {
        let breaker = CostModel::new(DEFAULT_SUCCESS_VALUE, DEFAULT_ATTEMPT_COST)
            .ok()
            .map(|model| default_breaker(&model));
        BayesConfig {
            cost: (DEFAULT_SUCCESS_VALUE, DEFAULT_ATTEMPT_COST),
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            breaker,
            backoff: bayesretry_backoff::Config::new(),
            store: default_store(),
            budget: None,
        }
    }
}

impl BayesRetry {
    /// A state with `config`, its jitter stream seeded by `seed`.
    #[expect(
        clippy::expect_used,
        reason = "only the policy's own defaults and fixed variants of them are passed, which build"
    )]
    pub(crate) fn new(config: &BayesConfig, seed: u64) -> BayesRetry {
        let (value, cost) = config.cost;
        let model = CostModel::new(value, cost).expect("a valid cost model");
        let engine = bayesretry_decision::Config::new(model)
            .with_strategy(Strategy::Greedy)
            .with_max_attempts(config.max_attempts)
            .build()
            .expect("a valid engine");
        BayesRetry {
            engine,
            store: config.store.build().expect("a valid store"),
            breaker: config
                .breaker
                .map(|breaker| breaker.build().expect("a valid breaker")),
            backoff: config.backoff.build().expect("a valid backoff"),
            budget: config
                .budget
                .clone()
                .map(|budget| RatioLedger::new(budget.build().expect("a valid budget"))),
            rng: SplitMix64::new(seed),
        }
    }

    /// Steps 4 and 1: is a pending retry still worth it, and may the call's
    /// next attempt go out now? Counts it if so.
    pub(crate) fn admit(&mut self, call: &mut CallTrack, now_ms: u64) -> bool {
        if let (Some(run), Some((attempt, class)), Some(breaker)) =
            (call.pending.take(), call.previous, &self.breaker)
        {
            if breaker.failure_run() > run {
                // as of now, the wait over: as the policy's loop judges it (a
                // retry decided with the breaker open was not decided at all)
                let reading = breaker.run_reading(now_ms);
                let situation = Situation::new()
                    .with_failure_run(reading.failures, reading.usual_success_rate)
                    .with_change_hazard(reading.hazard);
                let ctx = Context::new(ENDPOINT, attempt, class);
                // greedy, as built: no draw, as the policy's loop draws none
                let decision = self.engine.decide(&self.store, &ctx, &situation, now_ms);
                if !decision.retry() {
                    return false;
                }
            }
        }
        if let Some(breaker) = &mut self.breaker {
            if !breaker.check(now_ms).is_allowed() {
                return false;
            }
        }
        if call.attempts == 0 {
            if let Some(budget) = &mut self.budget {
                budget.deposit(now_ms);
            }
        }
        call.attempts = call.attempts.saturating_add(1);
        true
    }

    /// Step 2 for a success.
    pub(crate) fn succeeded(&mut self, call: &mut CallTrack, now_ms: u64) {
        if let Some(breaker) = &mut self.breaker {
            let _ = breaker.record(now_ms, true);
        }
        if let Some((attempt, class)) = call.previous.take() {
            self.store
                .observe(&Context::new(ENDPOINT, attempt, class), true, now_ms);
        }
    }

    /// Steps 2 and 3 for a failure of `class`: the delay before the next attempt,
    /// or `None` if the call stops.
    pub(crate) fn failed(
        &mut self,
        call: &mut CallTrack,
        class: ErrorClass,
        now_ms: u64,
    ) -> Option<Duration> {
        if let Some(breaker) = &mut self.breaker {
            let _ = breaker.record(now_ms, false);
        }
        if let Some((attempt, class)) = call.previous {
            self.store
                .observe(&Context::new(ENDPOINT, attempt, class), false, now_ms);
        }
        let ctx = Context::new(ENDPOINT, call.attempts, class);
        call.previous = Some((call.attempts, class));
        let delay = self
            .backoff
            .delay(call.attempts.max(1), self.rng.next_u64());
        let open = matches!(
            self.breaker.as_ref().map(Breaker::state),
            Some(bayesretry_breaker::State::Open { .. })
        );
        let mut situation = Situation::new()
            .with_delay_ms(u64::try_from(delay.as_millis()).unwrap_or(u64::MAX))
            .with_breaker_open(open);
        // as the policy's run loop does: the breaker's run of failures and its
        // usual success rate weigh in on the decision
        if let Some(breaker) = &self.breaker {
            let reading = breaker.run_reading(now_ms);
            situation = situation
                .with_failure_run(reading.failures, reading.usual_success_rate)
                .with_change_hazard(reading.hazard);
        }
        let u = self.rng.next_unit();
        let decision = self
            .engine
            .decide_with_uniform(&self.store, &ctx, &situation, now_ms, u);
        if !decision.retry() {
            return None;
        }
        if let Some(budget) = &mut self.budget {
            if budget.try_spend(now_ms, 1).is_err() {
                return None;
            }
        }
        call.pending = situation
            .failure_run()
            .filter(|_| !delay.is_zero())
            .map(|(run, _)| run);
        Some(delay)
    }
}
