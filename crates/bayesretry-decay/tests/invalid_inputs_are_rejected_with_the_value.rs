//! Half-lives and evidence are checked once, when they are made, and the error
//! names the rejected value.

use bayesretry_decay::{Error, Evidence, HalfLife};

#[test]
fn half_lives_must_be_finite_and_positive() {
    for bad in [0.0, -1.0, -0.0, f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(HalfLife::new(bad), Err(Error::InvalidHalfLife(bad)));
    }
    assert!(matches!(HalfLife::new(f64::NAN), Err(Error::InvalidHalfLife(v)) if v.is_nan()));
    assert_eq!(
        HalfLife::new(-2.5).unwrap_err().to_string(),
        "half-life must be finite and > 0 milliseconds, got -2.5"
    );
    assert!(HalfLife::new(5e-324).is_ok());
    assert_eq!(HalfLife::default(), HalfLife::NEVER);
    assert_eq!(HalfLife::NEVER.to_string(), "never");
}

#[test]
fn evidence_must_be_finite_and_not_negative() {
    assert_eq!(Evidence::new(-1.0, 0.0), Err(Error::InvalidEvidence(-1.0)));
    assert_eq!(
        Evidence::new(0.0, f64::INFINITY),
        Err(Error::InvalidEvidence(f64::INFINITY))
    );
    assert!(Evidence::new(f64::NAN, 0.0).is_err());
    assert_eq!(
        Evidence::new(0.0, -3.0).unwrap_err().to_string(),
        "evidence must be finite and >= 0, got -3"
    );
    // The lenient form drops the bad count and keeps the good one.
    assert_eq!(
        Evidence::new_lenient(f64::NAN, 2.0),
        Evidence::new(0.0, 2.0).unwrap()
    );
}

#[test]
fn evidence_saturates_instead_of_overflowing() {
    let max = Evidence::new(f64::MAX, f64::MAX).unwrap();
    let sum = max.plus(max);
    assert_eq!((sum.successes(), sum.failures()), (f64::MAX, f64::MAX));
    assert_eq!(sum.strength(), f64::MAX);
    assert_eq!(max.mean(), Some(0.5));
    assert_eq!(Evidence::NONE.mean(), None);
    assert_eq!(max.minus(max.plus(max)), Evidence::NONE);
    assert_eq!(max.scaled(f64::NAN), Evidence::NONE);
}
