//! Property: units are the caller's, and only the ratio of value to cost matters.
//! Scaling both by the same positive factor keeps every retry decision.
//!
//! Scaling by a power of two is exact in floating point, so there the decision is
//! kept for every probability. Any other factor rounds `k · V` and `k · c`, which can
//! move the computed break-even point `c / V` by a few units in the last place; the
//! decision is then kept for every probability outside that rounding band (a
//! relative 1e-12 around the break-even point), and the break-even point itself
//! moves by no more than the rounding.

use bayesretry_cost::CostModel;
use proptest::prelude::*;

fn figure() -> impl Strategy<Value = f64> {
    prop_oneof![1e-6..1e6_f64, 1e-100..1e100_f64, Just(1.0)]
}

proptest! {
    #[test]
    fn scaling_by_a_power_of_two_keeps_every_decision(
        value in figure(), cost in prop_oneof![Just(0.0), figure()],
        exponent in -60..=60_i32, p in 0.0..=1.0_f64,
    ) {
        let k = 2.0_f64.powi(exponent);
        let model = CostModel::new(value, cost).unwrap();
        let scaled = CostModel::new(value * k, cost * k).unwrap();
        prop_assert_eq!(model.break_even_probability(), scaled.break_even_probability());
        prop_assert_eq!(model.retry_pays(p), scaled.retry_pays(p));
        let at = model.break_even_probability().min(1.0);
        prop_assert_eq!(model.retry_pays(at), scaled.retry_pays(at));
    }

    #[test]
    fn scaling_by_any_factor_keeps_every_decision_outside_the_rounding_band(
        value in figure(), cost in prop_oneof![Just(0.0), figure()],
        k in prop_oneof![1e-6..1e6_f64, Just(100.0), Just(0.01), Just(3.0)],
        p in 0.0..=1.0_f64,
    ) {
        let model = CostModel::new(value, cost).unwrap();
        let scaled = CostModel::new(value * k, cost * k).unwrap();
        let (a, b) = (model.break_even_probability(), scaled.break_even_probability());
        prop_assert!((a - b).abs() <= 4.0 * f64::EPSILON * a, "{a} vs {b}");
        prop_assume!((p - a).abs() > 1e-12 * a);
        prop_assert_eq!(model.retry_pays(p), scaled.retry_pays(p));
    }

    #[test]
    fn the_worked_example_holds_in_any_currency(k in 1e-6..1e6_f64, p in 0.0..=1.0_f64) {
        // 50 cents against 1 cent, restated in any unit
        let model = CostModel::new(50.0 * k, k).unwrap();
        let b = model.break_even_probability();
        prop_assert!((b - 0.02).abs() <= 0.02 * 2.0 * f64::EPSILON);
        prop_assume!((p - 0.02).abs() > 1e-12);
        prop_assert_eq!(model.retry_pays(p), p > 0.02);
    }
}
