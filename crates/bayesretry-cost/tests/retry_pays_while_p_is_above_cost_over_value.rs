//! The decision rule: one more attempt pays exactly while the probability that it
//! succeeds exceeds the break-even probability `c / V`, in whatever units.

use bayesretry_cost::{CostModel, expected_value_of_retry};

#[test]
fn an_llm_call_worth_50_cents_with_1_cent_attempts_retries_while_p_exceeds_2_percent() {
    for model in [
        CostModel::new(50.0, 1.0).unwrap(),     // cents
        CostModel::new(0.50, 0.01).unwrap(),    // dollars
        CostModel::new(5000.0, 100.0).unwrap(), // hundredths of a cent
    ] {
        assert_eq!(model.break_even_probability(), 0.02);
        assert!(model.retry_pays(0.021));
        assert!(model.retry_pays(1.0));
        assert!(!model.retry_pays(0.02));
        assert!(!model.retry_pays(0.019));
        assert!(!model.retry_pays(0.0));
    }
}

#[test]
fn the_expected_value_is_p_times_value_minus_cost_in_the_models_units() {
    let cents = CostModel::new(50.0, 1.0).unwrap();
    for (p, ev) in [
        (0.0, -1.0),
        (0.01, -0.5),
        (0.1, 4.0),
        (0.5, 24.0),
        (1.0, 49.0),
    ] {
        let got = expected_value_of_retry(p, &cents);
        assert!((got - ev).abs() < 1e-12, "p = {p}: {got} != {ev}");
    }
    assert_eq!(expected_value_of_retry(0.02, &cents), 0.0);
}

#[test]
fn a_free_attempt_pays_while_any_chance_remains() {
    let free = CostModel::new(1.0, 0.0).unwrap();
    assert_eq!(free.break_even_probability(), 0.0);
    assert!(free.retry_pays(f64::MIN_POSITIVE));
    assert!(free.retry_pays(5e-324));
    assert!(!free.retry_pays(0.0));
}

#[test]
fn an_attempt_dearer_than_success_never_pays() {
    let dear = CostModel::new(1.0, 2.0).unwrap();
    assert_eq!(dear.break_even_probability(), 2.0);
    assert!(!dear.retry_pays(1.0));
    assert_eq!(expected_value_of_retry(1.0, &dear), -1.0);
}

#[test]
fn a_probability_outside_zero_to_one_gives_nan_and_never_a_retry() {
    let model = CostModel::new(50.0, 1.0).unwrap();
    for p in [f64::NAN, -0.1, 1.000_001, f64::INFINITY, f64::NEG_INFINITY] {
        assert!(expected_value_of_retry(p, &model).is_nan(), "p = {p}");
        assert!(!model.retry_pays(p));
    }
}

#[test]
fn a_cost_over_value_that_overflows_still_says_stop() {
    let absurd = CostModel::new(1e-10, 1e300).unwrap();
    assert_eq!(absurd.break_even_probability(), f64::INFINITY);
    let ev = expected_value_of_retry(1.0, &absurd);
    assert!(ev.is_finite() && ev < 0.0);
    assert!(!absurd.retry_pays(1.0));
}

#[test]
fn a_margin_too_small_to_multiply_out_keeps_its_sign() {
    // a tiny value: (p - c/V) · V underflows to zero unless its sign is kept
    let tiny = CostModel::new(1e-300, 0.0).unwrap();
    assert!(expected_value_of_retry(5e-324, &tiny) > 0.0);
    assert!(tiny.retry_pays(5e-324));
    let model = CostModel::new(1e-300, 1e-301).unwrap();
    let below = f64::from_bits(model.break_even_probability().to_bits() - 1);
    let above = f64::from_bits(model.break_even_probability().to_bits() + 1);
    assert!(expected_value_of_retry(below, &model) < 0.0);
    assert!(expected_value_of_retry(above, &model) > 0.0);
}
