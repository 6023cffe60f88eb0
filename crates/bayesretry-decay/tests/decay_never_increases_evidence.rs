//! Decay only ever takes evidence away: for any evidence, half-life and pair of
//! `u64` times, each count read later is at most what it was, never negative and
//! never NaN — a clock that goes backwards included.
#![allow(
    clippy::unwrap_used,
    reason = "the strategies only generate valid half-lives"
)]

use bayesretry_decay::{Decay, Evidence, HalfLife, Stamped};
use proptest::prelude::*;

fn count() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(f64::MAX),
        Just(f64::MIN_POSITIVE),
        0.0_f64..1e6,
        0.0_f64..f64::MAX,
    ]
}

fn half_life() -> impl Strategy<Value = HalfLife> {
    prop_oneof![
        Just(HalfLife::NEVER),
        Just(HalfLife::new(f64::MIN_POSITIVE).unwrap()),
        Just(HalfLife::new(5e-324).unwrap()),
        Just(HalfLife::new(f64::MAX).unwrap()),
        (1e-3_f64..1e12).prop_map(|ms| HalfLife::new(ms).unwrap()),
    ]
}

fn time() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0), Just(u64::MAX), any::<u64>(), 0_u64..10_000_000]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn no_count_grows_and_none_becomes_nan(
        s in count(), f in count(), h in half_life(), at in time(), now in time(),
    ) {
        let decay = Decay::new(h);
        let stamped = Stamped::new(Evidence::new(s, f).unwrap(), at);
        let later = decay.at(stamped, now);
        let e = later.evidence();
        prop_assert!(e.successes() <= s && e.failures() <= f, "{:?} -> {:?}", stamped, later);
        prop_assert!(e.successes() >= 0.0 && e.failures() >= 0.0);
        prop_assert!(!e.successes().is_nan() && !e.failures().is_nan());
        // The stamp never moves back, and moves to `now` when that is later.
        prop_assert_eq!(later.at_ms(), at.max(now));
        let factor = decay.factor_between(at, now);
        prop_assert!((0.0..=1.0).contains(&factor));
        if now <= at {
            prop_assert_eq!(later, stamped);
        }
    }

    #[test]
    fn the_posterior_is_always_a_valid_beta(
        s in count(), f in count(), h in half_life(), at in time(), now in time(),
    ) {
        let decay = Decay::new(h);
        let prior = bayesretry_decay::Beta::uniform();
        let posterior = decay.posterior_from(prior, Evidence::new(s, f).unwrap(), at, now);
        prop_assert!(posterior.alpha() >= 1.0 && posterior.alpha().is_finite());
        prop_assert!(posterior.beta() >= 1.0 && posterior.beta().is_finite());
    }
}
