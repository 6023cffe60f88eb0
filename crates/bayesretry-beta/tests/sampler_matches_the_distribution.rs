//! `Beta::sample` draws from the distribution `Beta::cdf` describes: an exact
//! Kolmogorov–Smirnov test on seeded streams, from shapes of 0.001 (where a plain
//! ratio of Gamma variates returns 0/0 for a quarter of the draws) to 2e4; the
//! draws that come out as exactly 0 or 1 are as frequent as the probability mass
//! that rounds there; and the sample moments match `mean()` and `variance()`.
//!
//! # The distribution of a rounded draw
//!
//! A draw is the true variate `X` rounded to a double, so it is exactly 0 when
//! `X < 2^-1075` (half the smallest subnormal) and exactly 1 when
//! `1 - X < 2^-54` (half the spacing of the doubles below 1). For shapes near
//! 0.001 these are not rare events: Beta(0.001, 0.001) puts about 24 % of its mass
//! below 2^-1075 and 48 % within 2^-54 of 1. Below 1e-300,
//! `I_x(a, b) = x^a / (a B(a, b))` to the last bit, so `P(X < 2^-1075)` is
//! `I(2^-1074) · 2^-a`, computed from a representable argument. The share of exact
//! zeros (ones) must match these masses; a sampler that is allowed one more ulp of
//! rounding in its last division (2^-1074, 2^-53) is accepted too.
//!
//! The Kolmogorov–Smirnov statistic compares the empirical cdf with the cdf `G` of
//! the rounded draw on both sides of each of its steps, `i/n - G(v)` and
//! `G(v-) - (i-1)/n`: `G` is `Beta::cdf` except for its atoms, `G(0) = P(X < 2^-1075)`
//! and `G(1-) = 1 - P(1 - X < 2^-54)`. (Elsewhere the rounding moves `G` by at most a
//! few 1e-4, among the subnormals and at the last double below 1, against a critical
//! value of 0.014.) With atoms in `G` the test is conservative, so the continuous
//! critical value still bounds the false alarm rate.

#![cfg(feature = "rand")]

use bayesretry_beta::{Beta, inc_beta};
use rand::SeedableRng;
use rand::rngs::StdRng;

/// Draws per distribution.
const N: usize = 20_000;

/// Kolmogorov's asymptotic critical value at significance 1e-3,
/// `sqrt(ln(2 / 1e-3) / 2) = 1.9495`, to be divided by `sqrt(n)`.
const KS_CRITICAL: f64 = 1.95;

/// The distributions under test: tiny shapes (both, one), the arcsine law, the
/// uniform, skewed, moderate and large.
const CASES: [(f64, f64); 8] = [
    (0.001, 0.001),
    (0.01, 0.01),
    (0.005, 2.0),
    (0.5, 0.5),
    (1.0, 1.0),
    (2.0, 5.0),
    (50.0, 30.0),
    (1e4, 2e4),
];

/// Smallest positive subnormal, 2^-1074.
const TINY: f64 = 5e-324;

/// `n` draws of Beta(a, b) from a stream seeded by the case.
fn draws(d: Beta, seed: u64, n: usize) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..n).map(|_| d.sample(&mut rng)).collect()
}

/// The probabilities that a draw rounds to exactly 0 and to exactly 1, each as the
/// range (correctly rounded, one ulp coarser).
fn atoms(a: f64, b: f64) -> ((f64, f64), (f64, f64)) {
    let below_tiny = inc_beta(a, b, TINY);
    let zero = (below_tiny * 2f64.powf(-a), below_tiny);
    // P(1 - X < y) = I_y(b, a); 2^-54 and 2^-53 are representable
    let one = (
        inc_beta(b, a, f64::EPSILON / 4.0),
        inc_beta(b, a, f64::EPSILON / 2.0),
    );
    (zero, one)
}

/// The exact Kolmogorov–Smirnov distance between the sorted draws and `G`.
fn ks_statistic(d: Beta, sorted: &[f64]) -> f64 {
    let (zero, one) = atoms(d.alpha(), d.beta());
    let n = sorted.len() as f64;
    let mut worst: f64 = 0.0;
    for (i, &v) in sorted.iter().enumerate() {
        // G(v-) and G(v) for the cdf of the rounded draw
        let (left, right) = if v == 0.0 {
            (0.0, zero.0)
        } else if v == 1.0 {
            (1.0 - one.0, 1.0)
        } else {
            let g = d.cdf(v);
            (g, g)
        };
        let above = (i + 1) as f64 / n - right;
        let below = left - i as f64 / n;
        worst = worst.max(above).max(below);
    }
    worst
}

/// Whether an observed share of `n` draws is consistent with a probability in
/// `[lo, hi]`: within five standard errors (a bound on the error for every
/// probability in the range), plus one draw for the discreteness of a count.
fn share_matches(share: f64, (lo, hi): (f64, f64), n: usize) -> bool {
    let n = n as f64;
    let sd = (hi * (1.0 - lo) / n).sqrt();
    let slack = 5.0 * sd + 1.0 / n;
    lo - slack <= share && share <= hi + slack
}

#[test]
fn every_draw_is_in_the_unit_interval_and_the_ks_statistic_is_below_the_critical_value() {
    let critical = KS_CRITICAL / (N as f64).sqrt();
    let mut failures = Vec::new();
    let mut largest: f64 = 0.0;
    for (case, (a, b)) in CASES.into_iter().enumerate() {
        let d = Beta::new(a, b).unwrap();
        let mut x = draws(d, 0xB57A_0000 + case as u64, N);
        let outside = x.iter().filter(|v| !(0.0..=1.0).contains(*v)).count();
        if outside > 0 {
            failures.push(format!("{d}: {outside} draws are NaN or outside [0, 1]"));
            continue;
        }
        x.sort_by(f64::total_cmp);
        let ks = ks_statistic(d, &x);
        largest = largest.max(ks);
        println!("{d:<18} KS distance {ks:.5} (critical {critical:.5})");
        if !(ks < critical) {
            failures.push(format!(
                "{d}: KS distance {ks:.5} >= {critical:.5} (significance 1e-3)"
            ));
        }
    }
    println!("largest KS distance {largest:.5}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn draws_are_exactly_zero_or_one_as_often_as_the_mass_that_rounds_there() {
    let mut failures = Vec::new();
    for (case, (a, b)) in CASES.into_iter().enumerate() {
        let d = Beta::new(a, b).unwrap();
        let x = draws(d, 0xA70A_0000 + case as u64, N);
        let nan = x.iter().filter(|v| v.is_nan()).count();
        let zeros = x.iter().filter(|&&v| v == 0.0).count() as f64 / N as f64;
        let ones = x.iter().filter(|&&v| v == 1.0).count() as f64 / N as f64;
        let (zero, one) = atoms(a, b);
        println!(
            "{d:<18} exact 0: {zeros:.4} (mass {:.4}..{:.4})  exact 1: {ones:.4} \
             (mass {:.4}..{:.4})  NaN: {nan}",
            zero.0, zero.1, one.0, one.1
        );
        if nan > 0 {
            failures.push(format!("{d}: {nan} NaN draws"));
        }
        if !share_matches(zeros, zero, N) {
            failures.push(format!(
                "{d}: {zeros:.4} of the draws are exactly 0, the mass below 2^-1075 is {:.4}",
                zero.0
            ));
        }
        if !share_matches(ones, one, N) {
            failures.push(format!(
                "{d}: {ones:.4} of the draws are exactly 1, the mass within 2^-54 of 1 is {:.4}",
                one.0
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The sample mean within five standard errors `σ / sqrt(n)`; the second moment
/// about the true mean within five of its standard errors
/// `sqrt((μ4 - σ^4) / n) = σ² sqrt((κ + 2) / n)`, with κ the excess kurtosis
/// `6[(α - β)²(α + β + 1) - αβ(α + β + 2)] / [αβ(α + β + 2)(α + β + 3)]`.
#[test]
fn sample_mean_and_variance_match_the_distribution() {
    const DRAWS: usize = 100_000;
    let n = DRAWS as f64;
    let mut failures = Vec::new();
    for (case, (a, b)) in [
        (0.01, 0.01),
        (0.005, 2.0),
        (0.5, 0.5),
        (2.0, 5.0),
        (50.0, 30.0),
        (1e4, 2e4),
    ]
    .into_iter()
    .enumerate()
    {
        let d = Beta::new(a, b).unwrap();
        let x = draws(d, 0x3003_0000 + case as u64, DRAWS);
        let (mean, variance) = (d.mean(), d.variance());
        let sample_mean = x.iter().sum::<f64>() / n;
        let second_moment = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;

        let s = a + b;
        let kurtosis = 6.0 * ((a - b) * (a - b) * (s + 1.0) - a * b * (s + 2.0))
            / (a * b * (s + 2.0) * (s + 3.0));
        let se_mean = (variance / n).sqrt();
        let se_variance = variance * ((kurtosis + 2.0) / n).sqrt();
        let z_mean = (sample_mean - mean) / se_mean;
        let z_variance = (second_moment - variance) / se_variance;
        println!("{d:<18} mean z = {z_mean:+.2}, variance z = {z_variance:+.2}");
        if !(z_mean.abs() <= 5.0) {
            failures.push(format!(
                "{d}: sample mean {sample_mean:e}, mean() {mean:e}: {z_mean:+.1} standard errors"
            ));
        }
        if !(z_variance.abs() <= 5.0) {
            failures.push(format!(
                "{d}: sample variance {second_moment:e}, variance() {variance:e}: \
                 {z_variance:+.1} standard errors"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
