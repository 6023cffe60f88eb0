//! The regularized incomplete gamma ratios `P(a, x)` and `Q(a, x) = 1 - P(a, x)` for
//! `0 < a <= 1`: the first term of the asymptotic expansion of `I_x(a, b)` for large
//! `a` and small `b` (DiDonato and Morris 1992, §9) is a `Q(b, z)`.

use crate::gamma::gam1;
use crate::math;

/// `(P(a, x), Q(a, x))` for `0 < a <= 1`, `x >= 0`, given
/// `r = exp(-x) x^a / Γ(a)` and `ln x` (the caller has both in accurate form; `x`
/// itself may be subnormal, with few bits left).
///
/// Below `x = 1.1` a Taylor series of `P / x^a`; above, Legendre's continued fraction
/// for `Q / r`, evaluated by the even-part recurrence with positive terms.
pub(crate) fn grat1(a: f64, x: f64, ln_x: f64, r: f64) -> (f64, f64) {
    const EPS: f64 = 1e-17;
    if x == 0.0 {
        return (0.0, 1.0);
    }
    if x < 1.1 {
        let mut an = 3.0;
        let mut c = x;
        let mut sum = x / (a + 3.0);
        let tol = 0.1 * EPS / (a + 1.0);
        let mut guard = 0;
        loop {
            an += 1.0;
            c = -c * (x / an);
            let t = c / (a + an);
            sum += t;
            guard += 1;
            if t.abs() <= tol || guard > 200 {
                break;
            }
        }
        let j = a * x * ((sum / 6.0 - 0.5 / (a + 2.0)) * x + 1.0 / (a + 1.0));
        let z = a * ln_x;
        let h = gam1(a);
        let g = 1.0 + h;
        if (x >= 0.25 && a < x / 2.59) || z > -0.13394 {
            let l = math::exp_m1(z);
            let w = 1.0 + l;
            let q = (w * j - l) * g - h;
            if q < 0.0 { (1.0, 0.0) } else { (1.0 - q, q) }
        } else {
            let w = math::exp(z);
            let p = w * g * (1.0 - j);
            (p, 1.0 - p)
        }
    } else {
        let q = r * continued_fraction(a, x);
        (1.0 - q, q)
    }
}

/// `Q(a, x) / r` with `r = exp(-x) x^a / Γ(a)`, for `0 < a <= 1`, `x > 0`.
///
/// Above `x = 1.1` the continued fraction yields the ratio itself, so `r` (an
/// `exp`, a `ln` and a `ln Γ`) is only computed below it, where the Taylor series
/// gives `Q` on its own.
pub(crate) fn q_over_r(a: f64, x: f64, ln_x: f64) -> f64 {
    if x >= 1.1 {
        continued_fraction(a, x)
    } else {
        let r = math::exp(-x + a * ln_x - crate::gamma::ln_gamma(a));
        let (_, q) = grat1(a, x, ln_x, r);
        q / r
    }
}

/// Legendre's continued fraction for `Q(a, x) / r`, `x >= 1.1`, by the even-part
/// recurrence with positive terms.
fn continued_fraction(a: f64, x: f64) -> f64 {
    const EPS: f64 = 1e-17;
    let mut a2nm1 = 1.0;
    let mut a2n = 1.0;
    let mut b2nm1 = x;
    let mut b2n = x + (1.0 - a);
    let mut c = 1.0;
    let mut an0;
    let mut guard = 0;
    loop {
        a2nm1 = x * a2n + c * a2nm1;
        b2nm1 = x * b2n + c * b2nm1;
        let am0 = a2nm1 / b2nm1;
        c += 1.0;
        let cma = c - a;
        a2n = a2nm1 + cma * a2n;
        b2n = b2nm1 + cma * b2n;
        an0 = a2n / b2n;
        // keep the recurrence in range
        if b2n > 1e100 {
            a2nm1 /= b2n;
            b2nm1 /= b2n;
            a2n /= b2n;
            b2n = 1.0;
        }
        guard += 1;
        if (an0 - am0).abs() < EPS * an0 || guard > 500 {
            break;
        }
    }
    an0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gamma::ln_gamma;

    fn r(a: f64, x: f64) -> f64 {
        math::exp(-x + a * math::ln(x) - ln_gamma(a))
    }

    #[test]
    fn matches_closed_forms() {
        // a = 1: Q(1, x) = exp(-x)
        for &x in &[0.1, 0.9, 1.5, 7.0, 30.0] {
            let (p, q) = grat1(1.0, x, math::ln(x), x * math::exp(-x));
            let want = math::exp(-x);
            assert!((q / want - 1.0).abs() < 1e-15, "x = {x}: {q} vs {want}");
            assert!((p + q - 1.0).abs() < 1e-15);
        }
        // a = 0.5: Q(0.5, x) = erfc(sqrt x); erfc(1) = 0.15729920705028513066, erfc(3) = 2.2090496998585441373e-5
        let (_, q) = grat1(0.5, 1.0, 0.0, r(0.5, 1.0));
        assert!((q / 0.157_299_207_050_285_13 - 1.0).abs() < 1e-15, "{q}");
        let (_, q) = grat1(0.5, 9.0, math::ln(9.0), r(0.5, 9.0));
        assert!((q / 2.209_049_699_858_544_1e-5 - 1.0).abs() < 1e-14, "{q}");
    }
}
