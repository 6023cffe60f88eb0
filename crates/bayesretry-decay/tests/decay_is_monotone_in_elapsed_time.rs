//! The longer evidence goes without an update, the less it is worth: the decay
//! factor never rises with elapsed time, and the posterior mean moves
//! monotonically back toward the prior's.

use bayesretry_decay::{Beta, Decay, Evidence, HalfLife, Stamped};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn the_factor_never_rises_with_elapsed_time(
        half_life_ms in 1e-3_f64..1e12,
        a in any::<u64>(),
        b in any::<u64>(),
    ) {
        let decay = Decay::new(HalfLife::new(half_life_ms).unwrap());
        let (shorter, longer) = (a.min(b), a.max(b));
        prop_assert!(decay.factor(longer) <= decay.factor(shorter));
    }

    #[test]
    fn the_posterior_returns_monotonically_toward_the_prior(
        failures in 1.0_f64..1e4,
        half_life_ms in 1.0_f64..1e6,
        t1 in 0_u64..100_000_000,
        dt in 0_u64..100_000_000,
    ) {
        let decay = Decay::new(HalfLife::new(half_life_ms).unwrap());
        let prior = Beta::uniform();
        let stamped = Stamped::new(Evidence::new(0.0, failures).unwrap(), 0);
        let earlier = decay.posterior(prior, stamped, t1);
        let later = decay.posterior(prior, stamped, t1 + dt);
        prop_assert!(later.mean() >= earlier.mean());
        prop_assert!(later.mean() <= prior.mean());
        prop_assert!(later.strength() <= earlier.strength());
    }
}

#[test]
fn whole_half_lives_are_exact_powers_of_two() {
    let decay = Decay::new(HalfLife::new(1_000.0).unwrap());
    for k in 0..60_u32 {
        assert_eq!(decay.factor(u64::from(k) * 1_000), 0.5_f64.powi(k as i32));
    }
    assert_eq!(Decay::never().factor(u64::MAX), 1.0);
}
