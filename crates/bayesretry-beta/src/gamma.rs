//! The gamma-function family: `ln Γ`, `ln B`, `1/Γ(1+a) - 1`, digamma and the
//! Stirling remainder, in plain doubles for the public API and in double-double for
//! the prefactors of the incomplete beta function.
//!
//! # Method
//!
//! * On `[1, 2]`, `ln Γ(x) = (x - 1)(x - 2) R(x)` with `R` a Chebyshev series fitted
//!   with mpmath (`scripts/generate_coefficients.py`). Factoring out the zeros keeps
//!   the result *relatively* accurate next to `x = 1` and `x = 2`, where a direct
//!   fit would only be absolutely accurate.
//! * Below 1 and up to 10 the recurrence `Γ(x + 1) = x Γ(x)` moves the argument into
//!   `[1, 2]` (at most eight steps, the product carried exactly enough).
//! * From 10 up, Stirling's series with ten Bernoulli terms; its remainder is below
//!   1e-19 there.

use crate::coefficients::{LGAMMA_R, LN_2PI_HALF, STIRLING};
use crate::dd::{Dd, ln_dd, ln_of_dd};
use crate::math;

/// Euler–Mascheroni constant.
pub(crate) const EULER: f64 = 0.577_215_664_901_532_9;

/// Clenshaw evaluation of a Chebyshev series at `t` in [-1, 1].
#[inline]
pub(crate) fn chebyshev(coeffs: &[f64], t: f64) -> f64 {
    let mut b1 = 0.0;
    let mut b2 = 0.0;
    let t2 = 2.0 * t;
    for &c in coeffs.iter().skip(1).rev() {
        let b0 = t2 * b1 - b2 + c;
        b2 = b1;
        b1 = b0;
    }
    let c0 = coeffs.first().copied().unwrap_or(0.0);
    t * b1 - b2 + c0
}

/// `ln Γ(1 + a)` for `a` in [-0.5, 1.5], relatively accurate next to `a = 0` and `a = 1`.
pub(crate) fn ln_gamma_1p(a: f64) -> f64 {
    if a < 0.0 {
        // ln Γ(1 + a) = ln Γ(2 + a) - ln(1 + a); both terms vanish linearly at a = 0.
        let x = 2.0 + a;
        (1.0 + a) * a * chebyshev(&LGAMMA_R, 2.0 * x - 3.0) - math::ln_1p(a)
    } else if a <= 1.0 {
        a * (a - 1.0) * chebyshev(&LGAMMA_R, 2.0 * a - 1.0)
    } else {
        // ln Γ(1 + a) = ln a + ln Γ(a), a in (1, 1.5]
        math::ln(a) + (a - 1.0) * (a - 2.0) * chebyshev(&LGAMMA_R, 2.0 * a - 3.0)
    }
}

/// `1/Γ(1 + a) - 1` for `a` in [-0.5, 1.5], relatively accurate near its zeros 0 and 1.
pub(crate) fn gam1(a: f64) -> f64 {
    math::exp_m1(-ln_gamma_1p(a))
}

/// Stirling's remainder `Δ(x) = ln Γ(x) - [(x - 1/2) ln x - x + ln(2π)/2]` for x >= 10.
#[inline]
pub(crate) fn stirling_delta(x: f64) -> f64 {
    let r = 1.0 / x;
    let r2 = r * r;
    let mut s = 0.0;
    for &c in STIRLING.iter().rev() {
        s = s * r2 + c;
    }
    s * r
}

/// Natural logarithm of the gamma function, `ln Γ(x)`, for `x > 0`.
///
/// Relative error below 8 machine epsilons from 1e-8 to 1e12 and absolute error below
/// 4 epsilons within 0.05 of the zeros at 1 and 2 (checked against mpmath in the test
/// suite). Returns NaN for `x <= 0` or NaN, and `+∞` for `x = +∞`.
///
/// ```
/// use bayesretry_beta::ln_gamma;
/// // Γ(5) = 24
/// assert!((ln_gamma(5.0) - 24f64.ln()).abs() < 1e-15);
/// assert_eq!(ln_gamma(1.0), 0.0);
/// assert!(ln_gamma(-1.0).is_nan());
/// ```
pub fn ln_gamma(x: f64) -> f64 {
    if !(x > 0.0) {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return f64::INFINITY;
    }
    if x < 0.5 {
        return ln_gamma_1p(x) - math::ln(x);
    }
    if x <= 2.5 {
        // x - 1 is exact on [0.5, 2.5]
        return ln_gamma_1p(x - 1.0);
    }
    if x < 10.0 {
        let (p, y) = shift_down(x);
        return math::ln(p.hi) + p.lo / p.hi + ln_gamma_1p(y - 1.0);
    }
    if x > 1e280 {
        return (x - 0.5) * (math::ln(x) - 1.0) + (LN_2PI_HALF.0 - 0.5);
    }
    // (x - 1/2)(ln x - 1) + (ln(2π)/2 - 1/2) + Δ(x), with ln x in double-double so the
    // leading product keeps its last bits.
    let l = ln_dd(x).add_f64(-1.0);
    let main = l.mul(Dd::sum(x, -0.5));
    main.add_f64(LN_2PI_HALF.0 - 0.5)
        .add_f64(stirling_delta(x) + LN_2PI_HALF.1)
        .to_f64()
}

/// For x in [2.5, 10): the product (x-1)(x-2)...(x-n) as a double-double and the
/// reduced argument y = x - n in [1.5, 2.5).
#[inline]
fn shift_down(x: f64) -> (Dd, f64) {
    let mut y = x;
    let mut p = Dd::from(1.0);
    let mut guard = 0;
    while y >= 2.5 && guard < 16 {
        y -= 1.0;
        p = p.mul_f64(y);
        guard += 1;
    }
    (p, y)
}

/// `ln Γ(x)` for `x > 0` as a double-double, absolutely accurate to ~1e-17 for
/// moderate arguments and to ~1e-24 relative for large ones.
pub(crate) fn ln_gamma_dd(x: f64) -> Dd {
    if x < 0.5 {
        // ln Γ(1 + x) is small here; -ln x carries the magnitude.
        return ln_dd(x).neg().add_f64(ln_gamma_1p(x));
    }
    if x <= 2.5 {
        return Dd::from(ln_gamma_1p(x - 1.0));
    }
    if x < 10.0 {
        let (p, y) = shift_down(x);
        return ln_of_dd(p).add_f64(ln_gamma_1p(y - 1.0));
    }
    if x > 1e280 {
        return Dd::from(ln_gamma(x));
    }
    let l = ln_dd(x).add_f64(-1.0);
    let main = l.mul(Dd::sum(x, -0.5));
    main.add(Dd::new(LN_2PI_HALF.0, LN_2PI_HALF.1))
        .add_f64(-0.5)
        .add_f64(stirling_delta(x))
}

/// `ln Γ(x)` for a double-double argument `x = hi + lo` (|lo| tiny next to hi).
#[inline]
pub(crate) fn ln_gamma_of_dd(x: Dd) -> Dd {
    let g = ln_gamma_dd(x.hi);
    if x.lo == 0.0 {
        g
    } else {
        g.add_f64(x.lo * digamma(x.hi))
    }
}

/// `ln B(a, b)` for double-double arguments, as a double-double.
pub(crate) fn ln_beta_dd(a: Dd, b: Dd) -> Dd {
    let s = a.add(b);
    ln_gamma_of_dd(a)
        .add(ln_gamma_of_dd(b))
        .sub(ln_gamma_of_dd(s))
}

/// Natural logarithm of the beta function, `ln B(a, b) = ln Γ(a) + ln Γ(b) - ln Γ(a + b)`,
/// for `a, b > 0`.
///
/// Computed in double-double, so the cancellation between the three gamma terms
/// (which reach 1e7 for arguments near 1e6) costs nothing. Returns NaN when either
/// argument is not a positive number.
///
/// ```
/// use bayesretry_beta::ln_beta;
/// // B(2, 3) = 1/12
/// assert!((ln_beta(2.0, 3.0) - (1.0f64 / 12.0).ln()).abs() < 1e-15);
/// ```
pub fn ln_beta(a: f64, b: f64) -> f64 {
    if !(a > 0.0) || !(b > 0.0) {
        return f64::NAN;
    }
    if a == f64::INFINITY || b == f64::INFINITY {
        return f64::NEG_INFINITY;
    }
    if a > 1e280 || b > 1e280 {
        return ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b);
    }
    ln_beta_dd(Dd::from(a), Dd::from(b)).to_f64()
}

/// The digamma function ψ(x) = Γ'(x)/Γ(x) for x > 0 (a few ulps; it only ever
/// multiplies terms that are tiny next to the result).
pub(crate) fn digamma(x: f64) -> f64 {
    if !(x > 0.0) {
        return f64::NAN;
    }
    let mut acc = 0.0;
    let mut y = x;
    if y < 1e-8 {
        return -1.0 / y - EULER;
    }
    let mut guard = 0;
    while y < 10.0 && guard < 16 {
        acc -= 1.0 / y;
        y += 1.0;
        guard += 1;
    }
    // ψ(y) ~ ln y - 1/(2y) - Σ B_2k / (2k y^2k)
    let r2 = 1.0 / (y * y);
    let mut s = 0.0;
    for (k, &c) in STIRLING.iter().enumerate().rev() {
        // B_2k / (2k) = c * (2k - 1)
        let two_k_minus_1 = (2 * k + 1) as f64;
        s = s * r2 + c * two_k_minus_1;
    }
    acc + math::ln(y) - 0.5 / y - s * r2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_points() {
        assert_eq!(ln_gamma(1.0), 0.0);
        assert_eq!(ln_gamma(2.0), 0.0);
        assert!((ln_gamma(3.0) - core::f64::consts::LN_2).abs() < 2e-16);
        assert!((ln_gamma(0.5) - 0.572_364_942_924_700_1).abs() < 2e-16);
    }

    #[test]
    fn gam1_matches_definition() {
        // 1/Γ(1.5) - 1 = 2/sqrt(pi) - 1
        let v = gam1(0.5);
        assert!((v - (core::f64::consts::FRAC_2_SQRT_PI - 1.0)).abs() < 1e-16);
        assert_eq!(gam1(0.0), 0.0);
    }

    #[test]
    fn digamma_known_values() {
        assert!((digamma(1.0) + EULER).abs() < 1e-15);
        // ψ(0.5) = -γ - 2 ln 2
        let want = -EULER - 2.0 * core::f64::consts::LN_2;
        assert!((digamma(0.5) - want).abs() < 1e-15);
        assert!((digamma(1e6) - 13.815_510_057_964_19).abs() < 1e-13);
    }

    #[test]
    fn ln_beta_dd_cancels_for_large_arguments() {
        // ln B(1e6, 1e6) = -1386295.3474... (mpmath)
        let v = ln_beta(1e6, 1e6);
        assert!((v - -1_386_300.003_362_921_1).abs() < 1e-8, "{v}");
    }
}
