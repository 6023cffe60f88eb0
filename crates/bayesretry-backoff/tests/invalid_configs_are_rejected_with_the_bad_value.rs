//! `Config::build` rejects every config no backoff could honour, with an error
//! that names the bad value and the bound it broke.

use core::time::Duration;

use bayesretry_backoff::{Config, Error, Exponential, Jitter, Schedule};

#[test]
fn a_base_delay_above_the_max_delay_is_rejected() {
    let err = Config::new()
        .with_base_delay(Duration::from_secs(60))
        .with_max_delay(Duration::from_secs(30))
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        Error::BaseAboveMax {
            base: Duration::from_secs(60),
            max: Duration::from_secs(30),
        }
    );
    assert_eq!(
        err.to_string(),
        "base delay must be <= max delay (30s), got 60s"
    );
}

#[test]
fn a_base_delay_equal_to_the_max_delay_is_fine() {
    let backoff = Config::new()
        .with_base_delay(Duration::from_secs(5))
        .with_max_delay(Duration::from_secs(5))
        .build()
        .unwrap();
    assert_eq!(backoff.scheduled_delay(9), Duration::from_secs(5));
}

#[test]
fn factors_below_one_nan_or_infinite_are_rejected() {
    for factor in [0.999, 0.0, -2.0, f64::NEG_INFINITY, f64::INFINITY] {
        let err = Config::new().with_factor(factor).build().unwrap_err();
        assert_eq!(err, Error::InvalidFactor(factor));
        assert_eq!(
            err.to_string(),
            format!("exponential factor must be finite and >= 1, got {factor}")
        );
    }
    let err = Config::new().with_factor(f64::NAN).build().unwrap_err();
    assert!(matches!(err, Error::InvalidFactor(v) if v.is_nan()));
    assert_eq!(
        err.to_string(),
        "exponential factor must be finite and >= 1, got NaN"
    );
}

#[test]
fn a_factor_of_exactly_one_is_a_constant_schedule() {
    let backoff = Config::new()
        .with_factor(1.0)
        .with_jitter(Jitter::None)
        .build()
        .unwrap();
    assert_eq!(backoff.delay(1, 0), backoff.delay(u32::MAX, 0));
}

#[test]
fn the_schedule_validates_through_with_schedule_too() {
    let err = Config::new()
        .with_schedule(Exponential::new(0.5))
        .build()
        .unwrap_err();
    assert_eq!(err, Error::InvalidFactor(0.5));
    assert_eq!(Exponential::new(1.5).validate(), Ok(()));
}

#[test]
fn a_proportional_spread_outside_zero_to_one_is_rejected() {
    for spread in [-0.1, 1.000_001, 2.0, f64::INFINITY] {
        let err = Config::new()
            .with_jitter(Jitter::Proportional(spread))
            .build()
            .unwrap_err();
        assert_eq!(err, Error::InvalidSpread(spread));
        assert_eq!(
            err.to_string(),
            format!("proportional jitter spread must be within [0, 1], got {spread}")
        );
    }
    let err = Config::new()
        .with_jitter(Jitter::Proportional(f64::NAN))
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::InvalidSpread(v) if v.is_nan()));
    for spread in [0.0, 0.25, 1.0] {
        assert!(
            Config::new()
                .with_jitter(Jitter::Proportional(spread))
                .build()
                .is_ok()
        );
    }
}

#[test]
fn decorrelated_jitter_with_a_zero_base_is_rejected() {
    let err = Config::new()
        .with_base_delay(Duration::ZERO)
        .with_jitter(Jitter::Decorrelated)
        .build()
        .unwrap_err();
    assert_eq!(err, Error::DecorrelatedWithZeroBase);
    assert_eq!(
        err.to_string(),
        "decorrelated jitter needs a base delay > 0ns, got 0ns"
    );
}

#[test]
fn errors_are_std_errors() {
    fn takes_error(_: &dyn core::error::Error) {}
    takes_error(&Error::InvalidFactor(0.5));
}
