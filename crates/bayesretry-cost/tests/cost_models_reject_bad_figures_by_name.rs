//! `CostModel::new` accepts a finite positive value and a finite non-negative
//! cost, and rejects anything else, NaN included, with an error naming the value.

use bayesretry_cost::{CostModel, Error};

#[test]
fn a_value_that_is_not_finite_and_positive_is_rejected() {
    for value in [0.0, -0.0, -1.0, f64::INFINITY, f64::NEG_INFINITY] {
        let err = CostModel::new(value, 1.0).unwrap_err();
        assert_eq!(err, Error::InvalidSuccessValue(value));
        assert_eq!(
            err.to_string(),
            format!("success value must be finite and > 0, got {value}")
        );
    }
    let err = CostModel::new(f64::NAN, 1.0).unwrap_err();
    assert!(matches!(err, Error::InvalidSuccessValue(v) if v.is_nan()));
    assert_eq!(
        err.to_string(),
        "success value must be finite and > 0, got NaN"
    );
}

#[test]
fn a_cost_that_is_not_finite_and_non_negative_is_rejected() {
    for cost in [-1e-300, -1.0, f64::INFINITY, f64::NEG_INFINITY] {
        let err = CostModel::new(1.0, cost).unwrap_err();
        assert_eq!(err, Error::InvalidAttemptCost(cost));
        assert_eq!(
            err.to_string(),
            format!("attempt cost must be finite and >= 0, got {cost}")
        );
    }
    let err = CostModel::new(1.0, f64::NAN).unwrap_err();
    assert!(matches!(err, Error::InvalidAttemptCost(v) if v.is_nan()));
}

#[test]
fn the_value_is_checked_before_the_cost() {
    assert_eq!(
        CostModel::new(-1.0, -1.0),
        Err(Error::InvalidSuccessValue(-1.0))
    );
}

#[test]
fn extreme_but_valid_figures_are_accepted() {
    for (value, cost) in [
        (f64::MIN_POSITIVE, 0.0),
        (5e-324, f64::MAX),
        (f64::MAX, f64::MAX),
        (1.0, 0.0),
    ] {
        let model = CostModel::new(value, cost).unwrap();
        assert_eq!(model.success_value(), value);
        assert_eq!(model.attempt_cost(), cost);
    }
}

#[test]
fn a_negative_zero_cost_is_stored_as_zero() {
    let model = CostModel::new(1.0, -0.0).unwrap();
    assert!(model.attempt_cost().is_sign_positive());
    assert_eq!(model.break_even_probability(), 0.0);
}

#[test]
fn a_model_can_be_built_in_a_constant() {
    const MODEL: Result<CostModel, Error> = CostModel::new(50.0, 1.0);
    assert_eq!(MODEL.map(|m| m.attempt_cost()), Ok(1.0));
}

#[test]
fn errors_are_std_errors() {
    fn takes_error(_: &dyn core::error::Error) {}
    takes_error(&Error::InvalidAttemptCost(-1.0));
}
