//! [`CostTable`]: per-endpoint cost models in a map (feature `alloc`).

use alloc::collections::BTreeMap;
use alloc::string::String;

use crate::lookup::CostLookup;
use crate::model::CostModel;

/// Cost models keyed by endpoint name, for overrides known only at run time (read
/// from configuration, or priced per model by a provider's price list).
///
/// A lookup takes a `&str` and allocates nothing; only inserting does. Use it as
/// the overrides of an [`EndpointCosts`](crate::EndpointCosts), which supplies the
/// default for endpoints the table does not list.
///
/// ```
/// use bayesretry_cost::{CostLookup, CostModel, CostTable, EndpointCosts};
///
/// let mut table = CostTable::new();
/// table.insert("chat/large", CostModel::new(50.0, 5.0)?);
/// table.insert("chat/small", CostModel::new(5.0, 0.1)?);
/// assert_eq!(table.len(), 2);
/// assert_eq!(table.cost_model("chat/small").map(|m| m.attempt_cost()), Some(0.1));
///
/// let costs = EndpointCosts::new(CostModel::new(1.0, 0.0)?).with_overrides(&table);
/// assert_eq!(costs.model_for("chat/large").success_value(), 50.0);
/// assert_eq!(costs.model_for("anything else").attempt_cost(), 0.0);
/// # Ok::<(), bayesretry_cost::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CostTable {
    models: BTreeMap<String, CostModel>,
}

impl CostTable {
    /// An empty table.
    pub const fn new() -> CostTable {
        CostTable {
            models: BTreeMap::new(),
        }
    }

    /// Sets the model of `endpoint`, returning the one it replaces.
    pub fn insert(&mut self, endpoint: impl Into<String>, model: CostModel) -> Option<CostModel> {
        self.models.insert(endpoint.into(), model)
    }

    /// Removes the model of `endpoint`, returning it.
    pub fn remove(&mut self, endpoint: &str) -> Option<CostModel> {
        self.models.remove(endpoint)
    }

    /// The model of `endpoint`, if listed.
    pub fn get(&self, endpoint: &str) -> Option<CostModel> {
        self.models.get(endpoint).copied()
    }

    /// How many endpoints are listed.
    pub fn len(&self) -> usize {
        self.models.len()
    }

    /// Whether no endpoint is listed.
    pub fn is_empty(&self) -> bool {
        self.models.is_empty()
    }

    /// The listed endpoints and their models, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, CostModel)> + '_ {
        self.models
            .iter()
            .map(|(name, model)| (name.as_str(), *model))
    }
}

impl CostLookup for CostTable {
    fn cost_model(&self, endpoint: &str) -> Option<CostModel> {
        self.get(endpoint)
    }
}

impl CostLookup for &CostTable {
    fn cost_model(&self, endpoint: &str) -> Option<CostModel> {
        self.get(endpoint)
    }
}

impl<S: Into<String>> FromIterator<(S, CostModel)> for CostTable {
    fn from_iter<I: IntoIterator<Item = (S, CostModel)>>(iter: I) -> CostTable {
        let mut table = CostTable::new();
        table.extend(iter);
        table
    }
}

impl<S: Into<String>> Extend<(S, CostModel)> for CostTable {
    fn extend<I: IntoIterator<Item = (S, CostModel)>>(&mut self, iter: I) {
        for (endpoint, model) in iter {
            self.insert(endpoint, model);
        }
    }
}
