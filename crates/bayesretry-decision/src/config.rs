//! [`Config`]: the settings of a decision engine, checked once by [`Config::build`].

use bayesretry_cost::{CostLookup, CostModel, EndpointCosts, NoOverrides};

use crate::engine::DecisionEngine;
use crate::error::Error;
use crate::strategy::Strategy;

/// The settings of a [`DecisionEngine`]: the [`Strategy`], the cost model (with
/// per-endpoint overrides) and the attempt cap. A small `Copy` value (when its
/// overrides are) built with `with_*` setters and checked by
/// [`build`](Config::build), which returns the engine.
///
/// There is no default cost model: what a success is worth and what an attempt
/// costs are the caller's to say, in the caller's units (only their ratio matters;
/// see [`bayesretry_cost`]), so [`Config::new`] takes it.
///
/// # Default
///
/// - `strategy`: [`Strategy::Greedy`], the posterior-mean expected-value rule;
/// - no per-endpoint cost overrides: every endpoint gets the model given to
///   [`Config::new`];
/// - `max_attempts`: 4 in all, the first attempt and three retries.
///
/// ```
/// use bayesretry_cost::CostModel;
/// use bayesretry_decision::{Config, Error, Strategy};
///
/// let cheap = CostModel::new(10.0, 0.1)?;
/// let engine = Config::new(CostModel::new(10.0, 1.0)?)
///     .with_strategy(Strategy::Lookahead)
///     .with_max_attempts(6)
///     .with_cost_overrides([("cache", cheap)])
///     .build()
///     .unwrap();
/// assert_eq!(engine.config().max_attempts(), 6);
/// assert_eq!(engine.config().costs().model_for("cache"), cheap);
///
/// let err = Config::new(cheap).with_max_attempts(0).build().unwrap_err();
/// assert_eq!(err, Error::InvalidMaxAttempts(0));
/// assert_eq!(err.to_string(), "max_attempts must be at least 1, got 0");
/// # Ok::<(), bayesretry_cost::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config<L = NoOverrides> {
    strategy: Strategy,
    costs: EndpointCosts<L>,
    max_attempts: u32,
}

impl Config<NoOverrides> {
    /// The defaults listed above, with `cost_model` for every endpoint.
    pub const fn new(cost_model: CostModel) -> Config<NoOverrides> {
        Config {
            strategy: Strategy::Greedy,
            costs: EndpointCosts::new(cost_model),
            max_attempts: 4,
        }
    }
}

impl<L> Config<L> {
    /// Sets the [`Strategy`].
    pub const fn with_strategy(mut self, strategy: Strategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// Replaces the cost model of the endpoints without an override.
    pub fn with_cost_model(mut self, cost_model: CostModel) -> Self {
        self.costs = self.costs.with_default(cost_model);
        self
    }

    /// Sets per-endpoint cost models over the default: a closure
    /// `Fn(&str) -> Option<CostModel>`, a `(&str, CostModel)` array or slice, a
    /// `bayesretry_cost::CostTable`, or any other [`CostLookup`].
    pub fn with_cost_overrides<M: CostLookup>(self, overrides: M) -> Config<M> {
        Config {
            strategy: self.strategy,
            costs: self.costs.with_overrides(overrides),
            max_attempts: self.max_attempts,
        }
    }

    /// Replaces the default cost model and its overrides together.
    pub fn with_costs<M: CostLookup>(self, costs: EndpointCosts<M>) -> Config<M> {
        Config {
            strategy: self.strategy,
            costs,
            max_attempts: self.max_attempts,
        }
    }

    /// The most attempts one call may make, the first included; at least 1 (1
    /// never retries).
    pub const fn with_max_attempts(mut self, max_attempts: u32) -> Self {
        self.max_attempts = max_attempts;
        self
    }

    /// Checks every setting and returns the engine.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidMaxAttempts`] when `max_attempts` is zero. The cost models
    /// are valid by construction.
    pub fn build(self) -> Result<DecisionEngine<L>, Error> {
        if self.max_attempts == 0 {
            return Err(Error::InvalidMaxAttempts(self.max_attempts));
        }
        Ok(DecisionEngine::from_checked(self))
    }

    /// The strategy.
    pub const fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The cost models: the default and the per-endpoint overrides.
    pub const fn costs(&self) -> &EndpointCosts<L> {
        &self.costs
    }

    /// The most attempts one call may make, the first included.
    pub const fn max_attempts(&self) -> u32 {
        self.max_attempts
    }
}
