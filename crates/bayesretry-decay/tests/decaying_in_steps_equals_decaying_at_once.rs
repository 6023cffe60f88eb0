//! Exponential decay composes: decaying for `t1` then for `t2` gives what decaying
//! for `t1 + t2` gives, to rounding. This is why one stamp per context is all the
//! state that lazy decay needs.

use bayesretry_decay::{Decay, Evidence, HalfLife, Stamped};
use proptest::prelude::*;

/// Equal to rounding. The exponents `t / h` are rounded to a relative 2^-53, an
/// absolute error that grows with the number of half-lives `x`, and `2^x` turns
/// it into a relative error of about `x · 2^-53 · ln 2`: the tolerance allows
/// ten times that, plus a few units in the last place. Past 1 022 half-lives
/// the factor itself is subnormal, with fewer bits: there, evidence is worth
/// under 2^-1022 of itself, and both readings must just agree that it is
/// negligible.
fn close(a: f64, b: f64, original: f64, half_lives: f64) -> bool {
    if half_lives >= 1_000.0 {
        return a.max(b) <= original * 2.0_f64.powi(-990);
    }
    let tolerance = 1e-15 * (10.0 + half_lives);
    (a - b).abs() <= tolerance * a.abs().max(b.abs())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn two_steps_equal_one(
        s in 0.0_f64..1e9,
        f in 0.0_f64..1e9,
        half_life_ms in 1.0_f64..1e8,
        start in 0_u64..1_000_000_000,
        t1 in 0_u64..1_000_000_000,
        t2 in 0_u64..1_000_000_000,
    ) {
        let decay = Decay::new(HalfLife::new(half_life_ms).unwrap());
        let stamped = Stamped::new(Evidence::new(s, f).unwrap(), start);
        let stepwise = decay.at(decay.at(stamped, start + t1), start + t1 + t2);
        let at_once = decay.at(stamped, start + t1 + t2);
        prop_assert_eq!(stepwise.at_ms(), at_once.at_ms());
        let (a, b) = (stepwise.evidence(), at_once.evidence());
        let half_lives = (t1 + t2) as f64 / half_life_ms;
        prop_assert!(close(a.successes(), b.successes(), s, half_lives), "{:?} vs {:?}", a, b);
        prop_assert!(close(a.failures(), b.failures(), f, half_lives), "{:?} vs {:?}", a, b);
    }

    #[test]
    fn reading_at_many_moments_changes_nothing(
        s in 0.0_f64..1e6,
        half_life_ms in 1.0_f64..1e6,
        reads in proptest::collection::vec(0_u64..100_000, 1..20),
    ) {
        // Reading is pure: only the final moment matters, however often and in
        // whatever order the evidence was read before.
        let decay = Decay::new(HalfLife::new(half_life_ms).unwrap());
        let stamped = Stamped::new(Evidence::new(s, 0.0).unwrap(), 0);
        let last = reads.iter().copied().max().unwrap_or(0);
        for &now in &reads {
            let _ = decay.at(stamped, now);
        }
        prop_assert_eq!(decay.at(stamped, last), decay.at(stamped, last));
    }
}
