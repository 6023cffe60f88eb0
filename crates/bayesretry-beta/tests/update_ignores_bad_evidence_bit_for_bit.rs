//! `Beta::update` adds evidence in `[0, ∞)` and leaves a count as it was for
//! evidence that is NaN, infinite or negative: checked bit for bit against the
//! rule as the documentation states it, on hand-picked edges (zeros of both
//! signs, subnormals, the largest double, infinities, NaNs of both signs) and
//! on random bit patterns, for counts from the smallest positive double to the
//! largest.

use bayesretry_beta::Beta;
use proptest::prelude::*;

/// The documented rule, written as the range it states.
fn reference(base: f64, e: f64) -> f64 {
    if (0.0..f64::INFINITY).contains(&e) {
        (base + e).min(f64::MAX)
    } else {
        base
    }
}

fn check(alpha: f64, beta: f64, s: f64, f: f64) {
    let Ok(prior) = Beta::new(alpha, beta) else {
        return;
    };
    let posterior = prior.update(s, f);
    assert_eq!(
        posterior.alpha().to_bits(),
        reference(alpha, s).to_bits(),
        "alpha {alpha:e} + {s:e}"
    );
    assert_eq!(
        posterior.beta().to_bits(),
        reference(beta, f).to_bits(),
        "beta {beta:e} + {f:e}"
    );
}

const EDGES: [f64; 14] = [
    0.0,
    -0.0,
    f64::MIN_POSITIVE,
    -f64::MIN_POSITIVE,
    5e-324,
    -5e-324,
    1.0,
    -1.0,
    f64::MAX,
    f64::MIN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    -f64::NAN,
];

#[test]
fn edges_match_the_documented_rule() {
    let counts = [5e-324, f64::MIN_POSITIVE, 0.5, 1.0, 3.0, 1e300, f64::MAX];
    for &base in &counts {
        for &s in &EDGES {
            for &f in &EDGES {
                check(base, 2.0, s, f);
                check(1.0, base, s, f);
            }
        }
    }
}

proptest! {
    #[test]
    fn random_bits_match_the_documented_rule(
        alpha in any::<u64>(),
        beta in any::<u64>(),
        s in any::<u64>(),
        f in any::<u64>(),
    ) {
        check(f64::from_bits(alpha), f64::from_bits(beta), f64::from_bits(s), f64::from_bits(f));
    }

    #[test]
    fn ordinary_counts_match_the_documented_rule(
        alpha in 1e-3_f64..1e6,
        beta in 1e-3_f64..1e6,
        s in -1e3_f64..1e3,
        f in -1e3_f64..1e3,
    ) {
        check(alpha, beta, s, f);
    }
}
