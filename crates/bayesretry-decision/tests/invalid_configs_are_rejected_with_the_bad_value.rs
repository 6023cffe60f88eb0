//! `Config::build` rejects a zero attempt cap, naming the value and the bound, and
//! keeps every other setting as given.

use bayesretry_cost::{CostModel, EndpointCosts};
use bayesretry_decision::{Config, Error, Strategy};

#[test]
fn a_zero_attempt_cap_is_rejected_by_name() {
    let model = CostModel::new(1.0, 0.1).unwrap();
    let err = Config::new(model).with_max_attempts(0).build().unwrap_err();
    assert_eq!(err, Error::InvalidMaxAttempts(0));
    assert_eq!(err.to_string(), "max_attempts must be at least 1, got 0");
}

#[test]
fn the_defaults_are_greedy_with_four_attempts_and_no_overrides() {
    let model = CostModel::new(1.0, 0.1).unwrap();
    let config = Config::new(model);
    assert_eq!(config.strategy(), Strategy::Greedy);
    assert_eq!(config.max_attempts(), 4);
    assert_eq!(config.costs().model_for("anything"), model);
    assert_eq!(Strategy::default(), Strategy::Greedy);
}

#[test]
fn settings_survive_the_build() {
    let model = CostModel::new(1.0, 0.1).unwrap();
    let other = CostModel::new(3.0, 0.2).unwrap();
    let dear = CostModel::new(3.0, 2.0).unwrap();
    let engine = Config::new(model)
        .with_strategy(Strategy::Thompson)
        .with_max_attempts(1)
        .with_cost_model(other)
        .with_cost_overrides([("dear", dear)])
        .build()
        .unwrap();
    let config = engine.config();
    assert_eq!(config.strategy(), Strategy::Thompson);
    assert_eq!(config.max_attempts(), 1);
    assert_eq!(config.costs().model_for("dear"), dear);
    assert_eq!(config.costs().model_for("cheap"), other);

    let replaced = Config::new(model)
        .with_costs(EndpointCosts::new(other))
        .build()
        .unwrap();
    assert_eq!(replaced.config().costs().default_model(), other);
    assert_eq!(Strategy::Lookahead.to_string(), "lookahead");
}
