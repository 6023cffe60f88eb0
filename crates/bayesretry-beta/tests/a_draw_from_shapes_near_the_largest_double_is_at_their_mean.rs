//! `Beta::sample` for shapes near the largest double: α and β are valid up to
//! `f64::MAX`, and `Beta::update` saturates there, so a posterior can reach
//! them. Such a distribution is a point at α / (α + β) to the last bit (its
//! standard deviation is below 1e-150), and every draw must land there; the
//! two Gamma variates of a draw are each finite, but their sum overflows once
//! α + β passes `f64::MAX`, and a plain `G_a / (G_a + G_b)` then reads 0.

#![cfg(feature = "rand")]
#![allow(
    clippy::unwrap_used,
    reason = "test code: a broken expectation must fail the test"
)]

use bayesretry_beta::Beta;
use rand::SeedableRng;
use rand::rngs::StdRng;

#[test]
fn every_draw_from_shapes_whose_sum_overflows_is_at_the_mean() {
    let cases = [
        (f64::MAX, f64::MAX),
        (1e308, 1e308),
        (9e307, 9e307),
        (1.5e308, 5e307),
        (5e307, 1.5e308),
        // below the overflow, for contrast: already right
        (1e300, 3e300),
    ];
    let mut rng = StdRng::seed_from_u64(17);
    for (a, b) in cases {
        let d = Beta::new(a, b).unwrap();
        let mean = d.mean();
        for _ in 0..200 {
            let x = d.sample(&mut rng);
            assert!(
                (x - mean).abs() <= 4.0 * f64::EPSILON,
                "Beta({a:e}, {b:e}) drew {x}, its mean is {mean}"
            );
        }
    }
}
