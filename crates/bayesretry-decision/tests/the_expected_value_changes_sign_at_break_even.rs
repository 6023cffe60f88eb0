//! The greedy rule retries exactly when the posterior mean is above the break-even
//! probability `c / V`: at it the expected value is zero and the call stops.

extern crate alloc;

mod common;

use alloc::sync::Arc;

use bayesretry_beta::Beta;
use bayesretry_cost::CostModel;
use bayesretry_decision::{Config, Reason, Situation};
use bayesretry_store::{Context, ErrorClass, PosteriorStore};
use common::TableStore;

#[test]
fn the_expected_value_is_zero_at_break_even_and_changes_sign_across_it() {
    // V = 5, c = 1: break-even at p = 0.2, the mean of Beta(1, 4).
    let engine = Config::new(CostModel::new(5.0, 1.0).unwrap())
        .build()
        .unwrap();
    let ctx = Context::new("api", 1, ErrorClass::Timeout);
    let decide = |posterior: Beta| {
        engine.decide(
            &TableStore::uniform_over_attempts(posterior),
            &ctx,
            &Situation::new(),
            0,
        )
    };

    let at = decide(Beta::new(1.0, 4.0).unwrap());
    assert_eq!(at.probability(), 0.2);
    assert_eq!(at.expected_value(), 0.0);
    assert!(!at.retry());
    assert_eq!(at.reason(), Reason::NegativeExpectedValue);

    // a hair more evidence of success: positive, retry
    let above = decide(Beta::new(1.0 + 1e-9, 4.0).unwrap());
    assert!(above.probability() > 0.2);
    assert!(above.expected_value() > 0.0);
    assert!(above.retry());
    assert_eq!(above.reason(), Reason::PositiveExpectedValue);

    // a hair more evidence of failure: negative, stop
    let below = decide(Beta::new(1.0, 4.0 + 1e-9).unwrap());
    assert!(below.expected_value() < 0.0);
    assert!(!below.retry());
    assert_eq!(below.reason(), Reason::NegativeExpectedValue);
}

#[test]
fn the_same_posterior_is_retried_on_a_cheap_endpoint_and_not_on_a_dear_one() {
    let cheap = CostModel::new(10.0, 0.5).unwrap(); // break-even 0.05
    let dear = CostModel::new(10.0, 5.0).unwrap(); // break-even 0.5
    let engine = Config::new(cheap)
        .with_cost_overrides(|endpoint: &str| (endpoint == "large-model").then_some(dear))
        .build()
        .unwrap();
    let store = TableStore::with_means(&[0.3]);
    let situation = Situation::new();
    let small = Context::new("small-model", 1, ErrorClass::from_status(529));
    let large = Context::new("large-model", 1, ErrorClass::from_status(529));
    let retried = engine.decide(&store, &small, &situation, 0);
    let stopped = engine.decide(&store, &large, &situation, 0);
    assert!(retried.retry());
    assert!(!stopped.retry());
    assert_eq!(retried.probability(), stopped.probability());
    assert!((retried.expected_value() - (0.3 * 10.0 - 0.5)).abs() < 1e-12);
    assert!((stopped.expected_value() - (0.3 * 10.0 - 5.0)).abs() < 1e-12);
}

#[test]
fn any_store_serves_by_reference_in_a_box_or_as_a_trait_object() {
    let engine = Config::new(CostModel::new(5.0, 1.0).unwrap())
        .build()
        .unwrap();
    let ctx = Context::new("api", 1, ErrorClass::Timeout);
    let situation = Situation::new();
    let store = TableStore::with_means(&[0.6]);
    let direct = engine.decide(&store, &ctx, &situation, 0);
    let dynamic: &dyn PosteriorStore = &store;
    assert_eq!(engine.decide(dynamic, &ctx, &situation, 0), direct);
    let boxed: Box<dyn PosteriorStore> = Box::new(TableStore::with_means(&[0.6]));
    assert_eq!(engine.decide(&boxed, &ctx, &situation, 0), direct);
    let shared = Arc::new(TableStore::with_means(&[0.6]));
    assert_eq!(engine.decide(&shared, &ctx, &situation, 0), direct);
    assert_eq!(engine.decide(&&store, &ctx, &situation, 0), direct);
}
