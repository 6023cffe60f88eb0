//! Property: the expected value of a retry is negative below the break-even
//! probability, zero at it and positive above it, for every valid model, with no
//! band of rounding around the threshold.

use bayesretry_cost::{CostModel, expected_value_of_retry};
use proptest::prelude::*;

fn figure() -> impl Strategy<Value = f64> {
    prop_oneof![
        1e-6..1e6_f64,
        1e-300..1e300_f64,
        Just(1.0),
        Just(f64::MIN_POSITIVE)
    ]
}

/// `x` moved by `steps` units in the last place (positive `x` only).
fn ulps(x: f64, steps: i64) -> f64 {
    f64::from_bits(x.to_bits().wrapping_add_signed(steps))
}

proptest! {
    #[test]
    fn sign_follows_p_against_break_even(
        value in figure(), cost in prop_oneof![Just(0.0), figure()], p in 0.0..=1.0_f64,
    ) {
        let model = CostModel::new(value, cost).unwrap();
        let break_even = model.break_even_probability();
        let ev = expected_value_of_retry(p, &model);
        if p < break_even {
            prop_assert!(ev < 0.0, "p {p} < {break_even} but EV {ev}");
        } else if p > break_even {
            prop_assert!(ev > 0.0, "p {p} > {break_even} but EV {ev}");
        } else {
            prop_assert_eq!(ev, 0.0);
        }
        prop_assert_eq!(model.retry_pays(p), p > break_even);
    }

    #[test]
    fn the_flip_is_exact_at_the_neighbouring_floats(
        value in figure(), ratio in 1e-12..1.0_f64, steps in 1..=4_i64,
    ) {
        // a break-even point inside (0, 1], probed a few ulps either side
        let Ok(model) = CostModel::new(value, value * ratio) else {
            return Ok(());
        };
        let break_even = model.break_even_probability();
        prop_assume!(break_even > 0.0 && break_even < 1.0);
        prop_assert_eq!(expected_value_of_retry(break_even, &model), 0.0);
        prop_assert!(expected_value_of_retry(ulps(break_even, -steps), &model) < 0.0);
        prop_assert!(expected_value_of_retry(ulps(break_even, steps), &model) > 0.0);
    }
}
