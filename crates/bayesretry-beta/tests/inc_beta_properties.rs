//! Properties of the incomplete beta function, its inverse and the conjugate
//! updates, checked on random inputs: parameters log-uniform over [1e-3, 1e6] (the
//! range the accuracy gates of the crate are stated for), arguments log-uniform
//! down to the smallest subnormal near 0 and down to the last double below 1 near 1.
//!
//! A property that rounding alone could break is stated with the slack the
//! documented accuracy allows (`inc_beta` within a relative 1e-13 below
//! max(a, b) = 1e4 and 1e-12 up to 1e6, the quantile within 1e-12 and 1e-10), so a
//! failure here is a defect, never noise.
//!
//! Failing cases are saved to `inc_beta_properties.proptest-regressions` beside
//! this file, and every later run replays them first: commit that file.

use bayesretry_beta::{Beta, inc_beta, inc_beta_complement, inc_beta_inv, inc_beta_inv_complement};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

const EPS: f64 = f64::EPSILON;

/// Cases per property: enough to reach every region of the parameter plane, few
/// enough that the file runs in seconds in a debug build.
const CASES: u32 = 256;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: CASES,
        // `tests/` holds no lib.rs, so proptest's default (`SourceParallel`) falls back
        // to this same place with a warning; naming it keeps the file where it belongs.
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

/// Documented relative accuracy of `inc_beta` and `inc_beta_complement`.
fn cdf_gate(a: f64, b: f64) -> f64 {
    if a.max(b) < 1e4 { 1e-13 } else { 1e-12 }
}

/// Documented relative accuracy of the quantile.
fn quantile_gate(a: f64, b: f64) -> f64 {
    if a.max(b) < 1e4 { 1e-12 } else { 1e-10 }
}

/// How far a computed quantile `x` may sit from the true root: the documented
/// relative error, taken on whichever of `x` and `1 - x` the solver works in,
/// plus two units in the last place of `x` (at least two subnormal steps).
fn quantile_slack(a: f64, b: f64, x: f64) -> f64 {
    quantile_gate(a, b) * x.min(1.0 - x) + 2.0 * (x * EPS).max(f64::from_bits(1))
}

/// Log-uniform on [lo, hi]: every decade equally likely.
fn log_uniform(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    (lo.ln()..=hi.ln()).prop_map(move |l| l.exp().clamp(lo, hi))
}

/// A shape parameter in the range of the accuracy gates.
fn parameter() -> impl Strategy<Value = f64> {
    log_uniform(1e-3, 1e6)
}

/// A point of (0, 1): log-uniform near 0 (subnormals included), log-uniform in
/// `1 - x` near 1 (so `1 - x` is exact), or uniform.
fn point() -> impl Strategy<Value = f64> {
    prop_oneof![
        log_uniform(5e-324, 0.5),
        log_uniform(EPS / 2.0, 0.5).prop_map(|y| 1.0 - y),
        f64::MIN_POSITIVE..1.0,
    ]
}

/// A probability in [1e-6, 1 - 1e-6], log-uniform in its smaller tail. Above 1/2,
/// `1 - p` is exact.
fn probability() -> impl Strategy<Value = f64> {
    prop_oneof![
        log_uniform(1e-6, 0.5),
        log_uniform(1e-6, 0.5).prop_map(|q| 1.0 - q),
    ]
}

/// Whether `u` and `v` agree to `rel` relative to the larger of them.
fn close(u: f64, v: f64, rel: f64) -> bool {
    (u - v).abs() <= rel * u.abs().max(v.abs())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn every_value_is_a_probability(a in parameter(), b in parameter(), x in point()) {
        for (name, v) in [
            ("inc_beta", inc_beta(a, b, x)),
            ("inc_beta_complement", inc_beta_complement(a, b, x)),
            ("inc_beta_inv", inc_beta_inv(a, b, x)),
            ("inc_beta_inv_complement", inc_beta_inv_complement(a, b, x)),
        ] {
            // `contains` is false for NaN
            prop_assert!((0.0..=1.0).contains(&v), "{name}({a:e}, {b:e}, {x:e}) = {v}");
        }
    }

    #[test]
    fn inc_beta_is_monotone_in_x(
        a in parameter(),
        b in parameter(),
        x1 in point(),
        x2 in point(),
    ) {
        let (lo, hi) = if x1 <= x2 { (x1, x2) } else { (x2, x1) };
        let (i_lo, i_hi) = (inc_beta(a, b, lo), inc_beta(a, b, hi));
        prop_assert!(
            i_lo <= i_hi,
            "I decreases from x = {lo:e} to {hi:e} (a = {a:e}, b = {b:e}): {i_lo:e} > {i_hi:e}"
        );
        let (c_lo, c_hi) = (inc_beta_complement(a, b, lo), inc_beta_complement(a, b, hi));
        prop_assert!(
            c_lo >= c_hi,
            "1 - I increases from x = {lo:e} to {hi:e} (a = {a:e}, b = {b:e}): {c_lo:e} < {c_hi:e}"
        );
    }

    /// `1 - I_x(a, b) = I_{1-x}(b, a)`, and so `I_x(a, b) + I_{1-x}(b, a) = 1`. The
    /// evaluation reflects to the same routine either way, so both hold to rounding.
    #[test]
    fn the_complement_is_the_mirrored_function(
        a in parameter(),
        b in parameter(),
        x in point(),
    ) {
        // an exact pair: whichever of x and y is at least 1/2 is recovered exactly
        let y = 1.0 - x;
        let x = 1.0 - y;
        let complement = inc_beta_complement(a, b, x);
        let mirrored = inc_beta(b, a, y);
        if complement.max(mirrored) >= 1e-300 {
            prop_assert!(
                close(complement, mirrored, 1e-13),
                "1 - I_x(a, b) = {complement:e} but I_y(b, a) = {mirrored:e} \
                 (a = {a:e}, b = {b:e}, x = {x:e}, y = {y:e})"
            );
        }
        let sum = inc_beta(a, b, x) + mirrored;
        prop_assert!(
            (sum - 1.0).abs() <= 4.0 * EPS,
            "I_x(a, b) + I_y(b, a) = 1 {:+e} (a = {a:e}, b = {b:e}, x = {x:e})",
            sum - 1.0
        );
    }

    /// The cdf is well conditioned at the quantile where the quantile is not: so
    /// rather than comparing `cdf(quantile(p))` with `p` directly, check that the
    /// true root lies within the documented error of the returned one, i.e. that the
    /// cdf just below it is at most `p` and just above it at least `p` (each up to
    /// the cdf's own accuracy). Above 1/2 the check runs in the upper tail, against
    /// the exact `1 - p`, so it keeps its relative meaning there.
    #[test]
    fn the_cdf_at_the_quantile_brackets_p(
        a in parameter(),
        b in parameter(),
        p in probability(),
    ) {
        let d = Beta::new(a, b).unwrap();
        let x = d.quantile(p);
        prop_assert!((0.0..=1.0).contains(&x), "quantile({p:e}) = {x} for {d}");
        let h = quantile_slack(a, b, x);
        let (below, above) = ((x - h).max(0.0), (x + h).min(1.0));
        let g = cdf_gate(a, b);
        if p <= 0.5 {
            let (f_below, f_above) = (d.cdf(below), d.cdf(above));
            prop_assert!(
                f_below <= p * (1.0 + g) && f_above >= p * (1.0 - g),
                "{d}: quantile({p:e}) = {x:e}, but cdf({below:e}) = {f_below:e} \
                 and cdf({above:e}) = {f_above:e} do not bracket p"
            );
        } else {
            let q = 1.0 - p;
            let (s_below, s_above) = (d.sf(below), d.sf(above));
            prop_assert!(
                s_below >= q * (1.0 - g) && s_above <= q * (1.0 + g),
                "{d}: quantile(1 - {q:e}) = {x:e}, but sf({below:e}) = {s_below:e} \
                 and sf({above:e}) = {s_above:e} do not bracket 1 - p"
            );
        }
    }

    /// The same for the upper-tail quantile, solved from `q` itself.
    #[test]
    fn the_sf_at_the_upper_quantile_brackets_q(
        a in parameter(),
        b in parameter(),
        q in probability(),
    ) {
        let x = inc_beta_inv_complement(a, b, q);
        prop_assert!(
            (0.0..=1.0).contains(&x),
            "inc_beta_inv_complement({a:e}, {b:e}, {q:e}) = {x}"
        );
        let h = quantile_slack(a, b, x);
        let (below, above) = ((x - h).max(0.0), (x + h).min(1.0));
        let g = cdf_gate(a, b);
        let s_below = inc_beta_complement(a, b, below);
        let s_above = inc_beta_complement(a, b, above);
        prop_assert!(
            s_below >= q * (1.0 - g) && s_above <= q * (1.0 + g),
            "a = {a:e}, b = {b:e}: upper quantile of {q:e} is {x:e}, but \
             1 - I({below:e}) = {s_below:e} and 1 - I({above:e}) = {s_above:e} do not bracket q"
        );
    }

    /// With whole counts on the uniform prior every sum is an exact integer, so the
    /// order of the updates cannot matter even by an ulp.
    #[test]
    fn updates_commute(s1 in 0u32..1000, f1 in 0u32..1000, s2 in 0u32..1000, f2 in 0u32..1000) {
        let (s1, f1, s2, f2) = (f64::from(s1), f64::from(f1), f64::from(s2), f64::from(f2));
        let u = Beta::uniform();
        let one_then_two = u.update(s1, f1).update(s2, f2);
        prop_assert_eq!(one_then_two, u.update(s2, f2).update(s1, f1));
        prop_assert_eq!(one_then_two, u.update(s1 + s2, f1 + f2));
    }

    /// On any prior each order rounds twice, so the two agree to two ulps.
    #[test]
    fn updates_of_any_prior_commute_up_to_rounding(
        alpha in parameter(),
        beta in parameter(),
        s1 in 0u32..1000,
        f1 in 0u32..1000,
        s2 in 0u32..1000,
        f2 in 0u32..1000,
    ) {
        let (s1, f1, s2, f2) = (f64::from(s1), f64::from(f1), f64::from(s2), f64::from(f2));
        let prior = Beta::new(alpha, beta).unwrap();
        let x = prior.update(s1, f1).update(s2, f2);
        let y = prior.update(s2, f2).update(s1, f1);
        prop_assert!(
            close(x.alpha(), y.alpha(), 2.0 * EPS) && close(x.beta(), y.beta(), 2.0 * EPS),
            "{prior} updated by ({s1}, {f1}) then ({s2}, {f2}) is {x}, the other way round {y}"
        );
    }

    #[test]
    fn observing_outcomes_in_any_order_gives_the_same_posterior(
        (outcomes, shuffled) in prop::collection::vec(any::<bool>(), 0..200)
            .prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle())),
    ) {
        let observe_all = |v: &[bool]| v.iter().fold(Beta::uniform(), |b, &o| b.observe(o));
        let posterior = observe_all(&outcomes);
        prop_assert_eq!(posterior, observe_all(&shuffled));
        let successes = outcomes.iter().filter(|&&o| o).count() as f64;
        let failures = outcomes.len() as f64 - successes;
        prop_assert_eq!(posterior, Beta::uniform().update(successes, failures));
    }

    /// For c >= 1/2, `lower_bound(c) <= median <= upper_bound(c)`, up to the
    /// quantile's accuracy (at c = 1/2 all three are the same root).
    #[test]
    fn credible_bounds_lie_either_side_of_the_median(
        a in parameter(),
        b in parameter(),
        c in 0.5..1.0f64,
    ) {
        let d = Beta::new(a, b).unwrap();
        let median = d.quantile(0.5);
        let slack = 2.0 * quantile_slack(a, b, median);
        let (lower, upper) = (d.lower_bound(c), d.upper_bound(c));
        prop_assert!(
            lower <= median + slack && median <= upper + slack,
            "{d}, c = {c}: lower bound {lower:e}, median {median:e}, upper bound {upper:e}"
        );
    }

    #[test]
    fn the_credible_interval_contains_the_median(
        a in parameter(),
        b in parameter(),
        mass in 0.0..=1.0f64,
    ) {
        let d = Beta::new(a, b).unwrap();
        let median = d.quantile(0.5);
        let slack = 2.0 * quantile_slack(a, b, median);
        let (lo, hi) = d.credible_interval(mass);
        prop_assert!(
            lo <= median + slack && median <= hi + slack,
            "{d}: the {mass} credible interval [{lo:e}, {hi:e}] misses the median {median:e}"
        );
    }

    /// One more observation moves the mean by `β / ((α + β)(α + β + 1))` or
    /// `α / (...)`, at least ~1e-15 of it in this range, and the bound by a relative
    /// ~1/(α + β) >= 5e-7: both far above their rounding, so no slack is needed.
    #[test]
    fn a_success_never_lowers_the_mean_or_the_upper_bound_and_a_failure_never_raises_them(
        a in parameter(),
        b in parameter(),
        confidence in probability(),
    ) {
        let d = Beta::new(a, b).unwrap();
        let (up, down) = (d.observe(true), d.observe(false));
        prop_assert!(
            down.mean() <= d.mean() && d.mean() <= up.mean(),
            "means after a failure, before, after a success: {:e}, {:e}, {:e} ({d})",
            down.mean(),
            d.mean(),
            up.mean()
        );
        let (b_down, b_now, b_up) = (
            down.upper_bound(confidence),
            d.upper_bound(confidence),
            up.upper_bound(confidence),
        );
        prop_assert!(
            b_down <= b_now && b_now <= b_up,
            "upper {confidence} bounds after a failure, before, after a success: \
             {b_down:e}, {b_now:e}, {b_up:e} ({d})"
        );
    }
}
