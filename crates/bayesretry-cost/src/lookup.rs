//! Per-endpoint cost models without allocation: the [`CostLookup`] trait and
//! [`EndpointCosts`], a default model with overrides.

use crate::model::{CostModel, expected_value_of_retry};

/// Finds the cost model of an endpoint, if it has one of its own.
///
/// Endpoints differ: a call to a large model is worth more and costs more per
/// attempt than a call to a cache. A lookup answers `None` for endpoints it does
/// not know, and [`EndpointCosts`] falls back to its default model for them.
///
/// Implemented, with no allocation, for
///
/// - closures and functions `Fn(&str) -> Option<CostModel>`;
/// - arrays and slice references of `(&str, CostModel)` pairs, searched in order
///   (the first match wins), for a table known when the program is written;
/// - [`NoOverrides`], which knows no endpoint;
/// - with the `alloc` feature, `CostTable` and `&CostTable`, a map built at run
///   time.
pub trait CostLookup {
    /// The model for `endpoint`, or `None` to use the default.
    fn cost_model(&self, endpoint: &str) -> Option<CostModel>;
}

impl<F> CostLookup for F
where
    F: Fn(&str) -> Option<CostModel>,
{
    fn cost_model(&self, endpoint: &str) -> Option<CostModel> {
        self(endpoint)
    }
}

impl CostLookup for &[(&str, CostModel)] {
    fn cost_model(&self, endpoint: &str) -> Option<CostModel> {
        find(self, endpoint)
    }
}

impl<const N: usize> CostLookup for [(&str, CostModel); N] {
    fn cost_model(&self, endpoint: &str) -> Option<CostModel> {
        find(self, endpoint)
    }
}

/// The model of the first pair named `endpoint`.
fn find(pairs: &[(&str, CostModel)], endpoint: &str) -> Option<CostModel> {
    pairs
        .iter()
        .find(|(name, _)| *name == endpoint)
        .map(|(_, model)| *model)
}

/// A lookup that knows no endpoint: every endpoint gets the default model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoOverrides;

impl CostLookup for NoOverrides {
    fn cost_model(&self, _endpoint: &str) -> Option<CostModel> {
        None
    }
}

/// A default [`CostModel`] with per-endpoint overrides.
///
/// Both parts are valid by construction (a `CostModel` exists only once
/// [`CostModel::new`] has checked it), so there is nothing left to validate and no
/// `build` step.
///
/// # Default
///
/// No overrides ([`NoOverrides`]): every endpoint gets the model given to
/// [`EndpointCosts::new`].
///
/// ```
/// use bayesretry_cost::{CostModel, EndpointCosts};
///
/// let default = CostModel::new(1.0, 0.01)?;
/// let large_model = CostModel::new(50.0, 5.0)?;
/// let costs = EndpointCosts::new(default).with_overrides([("chat/large", large_model)]);
///
/// assert_eq!(costs.model_for("chat/large"), large_model);
/// assert_eq!(costs.model_for("embeddings"), default);
/// // a 5 % chance is worth an attempt at the default costs, not at the large model's
/// assert!(costs.retry_pays("embeddings", 0.05));
/// assert!(!costs.retry_pays("chat/large", 0.05));
/// # Ok::<(), bayesretry_cost::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EndpointCosts<L = NoOverrides> {
    default: CostModel,
    overrides: L,
}

impl EndpointCosts<NoOverrides> {
    /// Every endpoint gets `default` until overrides are added.
    pub const fn new(default: CostModel) -> EndpointCosts<NoOverrides> {
        EndpointCosts {
            default,
            overrides: NoOverrides,
        }
    }
}

impl<L> EndpointCosts<L> {
    /// Replaces the overrides with `overrides`: a closure, a `(&str, CostModel)`
    /// table, a `CostTable` (with `alloc`), or any other [`CostLookup`].
    pub fn with_overrides<M: CostLookup>(self, overrides: M) -> EndpointCosts<M> {
        EndpointCosts {
            default: self.default,
            overrides,
        }
    }

    /// Replaces the default model.
    pub const fn with_default(mut self, default: CostModel) -> Self {
        self.default = default;
        self
    }

    /// The model of endpoints without an override.
    pub const fn default_model(&self) -> CostModel {
        self.default
    }

    /// The overrides.
    pub const fn overrides(&self) -> &L {
        &self.overrides
    }
}

impl<L: CostLookup> EndpointCosts<L> {
    /// The model for `endpoint`: its override if it has one, the default otherwise.
    pub fn model_for(&self, endpoint: &str) -> CostModel {
        self.overrides.cost_model(endpoint).unwrap_or(self.default)
    }

    /// [`expected_value_of_retry`] with the model for `endpoint`.
    pub fn expected_value_of_retry(&self, endpoint: &str, p: f64) -> f64 {
        expected_value_of_retry(p, &self.model_for(endpoint))
    }

    /// [`CostModel::retry_pays`] with the model for `endpoint`.
    pub fn retry_pays(&self, endpoint: &str, p: f64) -> bool {
        self.model_for(endpoint).retry_pays(p)
    }
}
