//! [`DecisionEngine`]: the hard checks in their fixed order, then the expected
//! value of the configured [`Strategy`].

use bayesretry_beta::{Beta, ChangePoint};
use bayesretry_cost::{CostLookup, CostModel, NoOverrides, expected_value_of_retry};
use bayesretry_store::{Context, PosteriorStore};

use crate::change::lowered;
use crate::config::Config;
use crate::decision::{Decision, Reason};
use crate::situation::Situation;
use crate::strategy::Strategy;

/// The most attempts [`Strategy::Lookahead`] looks at, the next one included.
const LOOKAHEAD_ATTEMPTS: u32 = 32;

/// Decides, after a failed attempt, whether one more is worth making.
///
/// Built by [`Config::build`]. The engine holds only its settings: the beliefs
/// live in a [`PosteriorStore`] passed to each call, and everything else it needs
/// — the time, the deadline, the breaker's and the budget's verdicts — comes in a
/// [`Situation`]. It never reads a clock, an RNG or a lock of its own, so one
/// engine serves every thread and every endpoint.
///
/// The checks run in the [fixed order](crate#the-order-of-checks) — permanent
/// error, attempt cap, deadline, Retry-After limit, breaker, budget, expected
/// value — and the first that stops the retry is the [`Reason`]. Only the last
/// reads the store.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DecisionEngine<L = NoOverrides> {
    config: Config<L>,
}

impl<L> DecisionEngine<L> {
    /// Wraps a config that [`Config::build`] has checked.
    pub(crate) const fn from_checked(config: Config<L>) -> DecisionEngine<L> {
        DecisionEngine { config }
    }

    /// The settings the engine was built with.
    pub const fn config(&self) -> &Config<L> {
        &self.config
    }

    /// The first hard check, in the documented order, that stops a retry after
    /// `attempts_made` attempts, or `None` if every one passes. Reads nothing but
    /// its arguments.
    ///
    /// ```
    /// use bayesretry_cost::CostModel;
    /// use bayesretry_decision::{Config, Reason, Situation};
    ///
    /// let engine = Config::new(CostModel::new(10.0, 1.0)?).build().unwrap();
    /// let open = Situation::new().with_breaker_open(true);
    /// assert_eq!(engine.hard_stop(1, &open, 0), Some(Reason::CircuitOpen));
    /// // the attempt cap (4) comes before the breaker
    /// assert_eq!(engine.hard_stop(4, &open, 0), Some(Reason::MaxAttempts));
    /// assert_eq!(engine.hard_stop(1, &Situation::new(), 0), None);
    /// # Ok::<(), bayesretry_cost::Error>(())
    /// ```
    pub const fn hard_stop(
        &self,
        attempts_made: u32,
        situation: &Situation,
        now_ms: u64,
    ) -> Option<Reason> {
        if situation.permanent() {
            return Some(Reason::PermanentError);
        }
        if attempts_made >= self.config.max_attempts() {
            return Some(Reason::MaxAttempts);
        }
        if let Some(deadline_ms) = situation.deadline_ms() {
            if now_ms.saturating_add(situation.wait_ms()) >= deadline_ms {
                // the server's wait is to blame only if the planned delay
                // alone would have started the next attempt in time
                if now_ms.saturating_add(situation.delay_ms()) < deadline_ms {
                    return Some(Reason::RetryAfterPastDeadline);
                }
                return Some(Reason::Deadline);
            }
        }
        if let (Some(retry_after_ms), Some(limit_ms)) =
            (situation.retry_after_ms(), situation.max_retry_after_ms())
        {
            if retry_after_ms > limit_ms {
                return Some(Reason::RetryAfterBeyondLimit);
            }
        }
        if situation.breaker_open() {
            return Some(Reason::CircuitOpen);
        }
        if !situation.budget_available() {
            return Some(Reason::BudgetExhausted);
        }
        None
    }

    /// The decision of classic mode, on a fixed count: the hard checks in their
    /// order, and a [`Decision::retry_fixed`] when none stops the retry. No
    /// store is read and no cost model consulted; the attempt cap is the
    /// engine's `max_attempts`.
    ///
    /// ```
    /// use bayesretry_cost::CostModel;
    /// use bayesretry_decision::{Config, Reason, Situation};
    ///
    /// let engine = Config::new(CostModel::new(1.0, 0.0)?).with_max_attempts(3).build().unwrap();
    /// let none = Situation::new();
    /// assert_eq!(engine.decide_fixed(1, &none, 0).reason(), Reason::Fixed);
    /// assert!(engine.decide_fixed(2, &none, 0).retry());
    /// assert_eq!(engine.decide_fixed(3, &none, 0).reason(), Reason::MaxAttempts);
    /// # Ok::<(), bayesretry_cost::Error>(())
    /// ```
    pub const fn decide_fixed(
        &self,
        attempts_made: u32,
        situation: &Situation,
        now_ms: u64,
    ) -> Decision {
        match self.hard_stop(attempts_made, situation, now_ms) {
            Some(reason) => Decision::stop(reason),
            None => Decision::retry_fixed(),
        }
    }
}

impl<L: CostLookup> DecisionEngine<L> {
    /// Decides whether to retry the call whose attempt `ctx.attempt()` just failed
    /// with `ctx.error_class()`, at `now_ms`.
    ///
    /// Runs the hard checks on `situation` first; if none stops the retry, reads
    /// the posterior of `ctx` (and, with [`Strategy::Lookahead`], of the later
    /// attempts' contexts) from `store` and retries when the expected value is
    /// positive. [`Strategy::Thompson`] has no randomness here and uses the
    /// posterior mean; see [`decide_with_uniform`](Self::decide_with_uniform).
    ///
    /// `now_ms` is the caller's monotonic clock: the store decays evidence with
    /// it, and the deadline is checked against it.
    pub fn decide<S: PosteriorStore + ?Sized>(
        &self,
        store: &S,
        ctx: &Context<'_>,
        situation: &Situation,
        now_ms: u64,
    ) -> Decision {
        self.decide_by(store, ctx, situation, now_ms, |posterior| posterior.mean())
    }

    /// [`decide`](Self::decide), with a uniform number `u` in (0, 1) for a
    /// [`Strategy::Thompson`] draw; the other strategies ignore `u`.
    ///
    /// The draw is exact: the posterior's `u`-quantile, `inc_beta_inv(α, β, u)`,
    /// which for a uniformly distributed `u` is distributed as the posterior
    /// (`u = 0.5` draws the median). A `u` outside [0, 1] is clamped into it, and
    /// NaN reads as 0, the most pessimistic draw: a malformed draw never causes a
    /// retry.
    pub fn decide_with_uniform<S: PosteriorStore + ?Sized>(
        &self,
        store: &S,
        ctx: &Context<'_>,
        situation: &Situation,
        now_ms: u64,
        u: f64,
    ) -> Decision {
        self.decide_by(store, ctx, situation, now_ms, |posterior| {
            posterior.quantile(clamp_unit(u))
        })
    }

    /// [`decide`](Self::decide), drawing a [`Strategy::Thompson`] sample from
    /// `rng` (`bayesretry_beta::Beta::sample`, exact for any shape); the other
    /// strategies, and a retry stopped by a hard check, draw nothing.
    #[cfg(feature = "rand")]
    pub fn decide_with_rng<S, R>(
        &self,
        store: &S,
        ctx: &Context<'_>,
        situation: &Situation,
        now_ms: u64,
        rng: &mut R,
    ) -> Decision
    where
        S: PosteriorStore + ?Sized,
        R: rand_core::Rng + ?Sized,
    {
        self.decide_by(store, ctx, situation, now_ms, |posterior| {
            posterior.sample(rng)
        })
    }

    /// The decision, with `draw` as the Thompson draw from the posterior.
    #[inline]
    fn decide_by<S, D>(
        &self,
        store: &S,
        ctx: &Context<'_>,
        situation: &Situation,
        now_ms: u64,
        draw: D,
    ) -> Decision
    where
        S: PosteriorStore + ?Sized,
        D: FnOnce(&Beta) -> f64,
    {
        if let Some(reason) = self.hard_stop(ctx.attempt(), situation, now_ms) {
            return Decision::stop(reason);
        }
        let model = match situation.cost_model() {
            Some(model) => model,
            None => self.config.costs().model_for(ctx.endpoint()),
        };
        let posterior = store.posterior(ctx, now_ms);
        let run = situation.failure_run();
        let hazard = situation.change_hazard();
        let change = run
            .and_then(|(failures, usual)| ChangePoint::after_with_hazard(failures, usual, hazard));
        let adjust = |p: f64| change.map_or(p, |c| lowered(&c, p));
        match self.config.strategy() {
            Strategy::Greedy => {
                let p = adjust(posterior.mean());
                Decision::from_expected_value(p, expected_value_of_retry(p, &model))
            }
            Strategy::Thompson => {
                let p = adjust(draw(&posterior));
                Decision::from_expected_value(p, expected_value_of_retry(p, &model))
            }
            Strategy::Lookahead => {
                let q = adjust(posterior.mean());
                let later = self.later_value(store, ctx, now_ms, &model, run, hazard);
                Decision::from_expected_value(q, continuation(q, later, &model))
            }
        }
    }

    /// `W` for the attempt after next: what the call is worth, at best, if the
    /// next attempt fails. The recursion runs backward from the last attempt the
    /// cap allows, one store lookup per attempt, with no allocation.
    fn later_value<S: PosteriorStore + ?Sized>(
        &self,
        store: &S,
        ctx: &Context<'_>,
        now_ms: u64,
        model: &CostModel,
        run: Option<(u32, f64)>,
        hazard: f64,
    ) -> f64 {
        // Attempt `a` succeeds with the posterior of the context whose attempt is
        // `a - 1`. The next attempt is `made + 1`; the ones after it are
        // `made + 2 ..= max_attempts`, read from contexts `made + 1 ..= max - 1`.
        let first = ctx.attempt().saturating_add(1);
        let last = self
            .config
            .max_attempts()
            .saturating_sub(1)
            .min(first.saturating_add(LOOKAHEAD_ATTEMPTS - 2));
        let mut value = 0.0;
        for failed in (first..=last).rev() {
            let q = store.posterior(&ctx.with_attempt(failed), now_ms).mean();
            // reached only if every attempt before it failed: the run is longer
            let q = run.map_or(q, |(failures, usual)| {
                let more = failed.saturating_sub(ctx.attempt());
                ChangePoint::after_with_hazard(failures.saturating_add(more), usual, hazard)
                    .map_or(q, |c| lowered(&c, q))
            });
            // f64::max returns the other operand for NaN: never NaN here
            value = continuation(q, value, model).max(0.0);
        }
        value
    }
}

/// The value of making an attempt that succeeds with probability `q`, when failing
/// it leaves a call worth `later`: `q · V − c + (1 − q) · later`. The myopic part is
/// [`expected_value_of_retry`], so with nothing to gain later the sign is exactly
/// the greedy rule's.
#[inline]
fn continuation(q: f64, later: f64, model: &CostModel) -> f64 {
    expected_value_of_retry(q, model) + (1.0 - q) * later
}

/// `u` clamped into [0, 1], with NaN as 0.
#[inline]
fn clamp_unit(u: f64) -> f64 {
    if u >= 0.0 { u.min(1.0) } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::clamp_unit;

    #[test]
    fn clamp_unit_keeps_the_unit_interval_and_maps_nan_to_zero() {
        assert_eq!(clamp_unit(0.25), 0.25);
        assert_eq!(clamp_unit(0.0), 0.0);
        assert_eq!(clamp_unit(1.0), 1.0);
        assert_eq!(clamp_unit(1.5), 1.0);
        assert_eq!(clamp_unit(f64::INFINITY), 1.0);
        assert_eq!(clamp_unit(-0.5), 0.0);
        assert_eq!(clamp_unit(f64::NEG_INFINITY), 0.0);
        assert_eq!(clamp_unit(f64::NAN), 0.0);
    }
}
