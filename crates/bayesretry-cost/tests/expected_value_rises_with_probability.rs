//! Property: for a fixed cost model, the expected value of a retry never falls as
//! the probability of success rises.

use bayesretry_cost::{CostModel, expected_value_of_retry};
use proptest::prelude::*;

fn figure() -> impl Strategy<Value = f64> {
    prop_oneof![1e-6..1e6_f64, 1e-300..1e300_f64, Just(1.0)]
}

proptest! {
    #[test]
    fn expected_value_is_monotone_in_p(
        value in figure(), cost in prop_oneof![Just(0.0), figure()],
        p in 0.0..=1.0_f64, q in 0.0..=1.0_f64,
    ) {
        let model = CostModel::new(value, cost).unwrap();
        let (lo, hi) = if p <= q { (p, q) } else { (q, p) };
        let (ev_lo, ev_hi) = (expected_value_of_retry(lo, &model), expected_value_of_retry(hi, &model));
        prop_assert!(ev_lo <= ev_hi, "EV({lo}) = {ev_lo} > EV({hi}) = {ev_hi}");
    }

    #[test]
    fn neighbouring_probabilities_never_swap_order(
        value in figure(), cost in prop_oneof![Just(0.0), figure()], p in 0.0..1.0_f64,
    ) {
        let model = CostModel::new(value, cost).unwrap();
        let next = f64::from_bits(p.to_bits() + 1);
        prop_assert!(expected_value_of_retry(p, &model) <= expected_value_of_retry(next, &model));
    }

    #[test]
    fn expected_value_stays_between_minus_cost_and_value_minus_cost(
        value in 1e-6..1e6_f64, cost in 0.0..1e6_f64, p in 0.0..=1.0_f64,
    ) {
        let model = CostModel::new(value, cost).unwrap();
        let ev = expected_value_of_retry(p, &model);
        let slack = 1e-9 * (value + cost);
        prop_assert!(ev >= -cost - slack && ev <= value - cost + slack);
        prop_assert!((ev - (p * value - cost)).abs() <= slack);
    }
}
