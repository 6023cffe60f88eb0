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

use crate::coefficients::{LGAMMA_R_HI, LGAMMA_R_LO, LN_2PI_HALF, STIRLING};
use crate::dd::{Dd, ln_1p_dd, ln_dd, ln_of_dd};
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

/// `R(x) = ln Γ(x) / ((x - 1)(x - 2))` for `x` in [1, 2].
#[inline]
fn lgamma_r(x: f64) -> f64 {
    if x <= 1.5 {
        chebyshev(&LGAMMA_R_LO, 4.0 * x - 5.0)
    } else {
        chebyshev(&LGAMMA_R_HI, 4.0 * x - 7.0)
    }
}

/// `ln Γ(1 + a)` for `a` in [-0.5, 1.5], relatively accurate next to `a = 0` and `a = 1`.
pub(crate) fn ln_gamma_1p(a: f64) -> f64 {
    if a < 0.0 {
        // ln Γ(1 + a) = ln Γ(2 + a) - ln(1 + a); both terms vanish linearly at a = 0.
        let x = 2.0 + a;
        (1.0 + a) * a * lgamma_r(x) - math::ln_1p(a)
    } else if a <= 1.0 {
        a * (a - 1.0) * lgamma_r(1.0 + a)
    } else {
        // ln Γ(1 + a) = ln a + ln Γ(a), a in (1, 1.5]
        math::ln(a) + (a - 1.0) * (a - 2.0) * lgamma_r(a)
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
    // (x - 1/2)(ln x - 1) + (ln(2π)/2 - 1/2) + Δ(x); x - 1/2 and ln x - 1 are exact
    // operations on their rounded inputs, so this stays within a few ulps.
    (x - 0.5) * (math::ln(x) - 1.0) + ((LN_2PI_HALF.0 - 0.5) + stirling_delta(x))
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

/// `ln Γ(x)` for `x > 0` split as `ln(factor) + log`, both double-double.
///
/// Below 10 the recurrence leaves a rational `factor` (`1/x`, or the product
/// `(x-1)(x-2)...`) and a small `log = ln Γ(y)` with `y` in [0.5, 2.5]; from 10 up
/// the factor is 1 and `log` is Stirling's series. Keeping the factors apart lets a
/// caller combine those of several gamma functions (a beta function has three)
/// into one rational and take a single logarithm of it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GammaParts {
    pub(crate) factor: Dd,
    pub(crate) log: Dd,
}

const ONE: Dd = Dd::from(1.0);

/// [`GammaParts`] of `ln Γ(x)` for a double-double argument `x = hi + lo`; the `lo`
/// half enters to first order through ψ(hi), which needs only a few digits.
#[inline]
pub(crate) fn ln_gamma_parts(x: Dd) -> GammaParts {
    let h = x.hi;
    let (mut parts, slope) = if h < 1e-100 {
        // 1/h would leave the range a product of factors can take
        let p = GammaParts {
            factor: ONE,
            log: ln_dd(h).neg().add_f64(ln_gamma_1p(h)),
        };
        (p, f64::NAN)
    } else if h < 0.5 {
        // Γ(h) = Γ(1 + h) / h
        let p = GammaParts {
            factor: ONE.div_f64(h),
            log: Dd::from(ln_gamma_1p(h)),
        };
        (p, f64::NAN)
    } else if h <= 2.5 {
        (
            GammaParts {
                factor: ONE,
                log: Dd::from(ln_gamma_1p(h - 1.0)),
            },
            f64::NAN,
        )
    } else if h < 10.0 {
        let (p, y) = shift_down(h);
        (
            GammaParts {
                factor: p,
                log: Dd::from(ln_gamma_1p(y - 1.0)),
            },
            f64::NAN,
        )
    } else if h > 1e280 {
        (
            GammaParts {
                factor: ONE,
                log: Dd::from(ln_gamma(h)),
            },
            math::ln(h),
        )
    } else {
        // (h - 1/2)(ln h - 1) + ln(2π)/2 - 1/2 + Δ(h)
        let l = ln_dd(h);
        let g = l
            .add_f64(-1.0)
            .mul(Dd::sum(h, -0.5))
            .add(Dd::new(LN_2PI_HALF.0, LN_2PI_HALF.1))
            .add_f64(-0.5)
            .add_f64(stirling_delta(h));
        (
            GammaParts {
                factor: ONE,
                log: g,
            },
            l.hi - 0.5 / h,
        )
    };
    if x.lo != 0.0 {
        let psi = if slope.is_nan() {
            digamma_small(h)
        } else {
            slope
        };
        parts.log = parts.log.add_f64(x.lo * psi);
    }
    parts
}

/// ln of `num_1 · num_2 / den` for positive double-double factors, with one
/// logarithm when the product stays in range.
#[inline]
fn ln_ratio(n1: Dd, n2: Dd, d: Dd) -> Dd {
    let in_range = |v: Dd| v.hi > 1e-100 && v.hi < 1e100;
    if n1 == ONE && n2 == ONE && d == ONE {
        return Dd::ZERO;
    }
    if in_range(n1) && in_range(n2) && in_range(d) {
        ln_of_dd(n1.mul(n2).div(d))
    } else {
        ln_of_dd(n1).add(ln_of_dd(n2)).sub(ln_of_dd(d))
    }
}

/// `ln Γ(l) - ln Γ(l + s)` for `l >= 10` (TOMS 708's `algdiv`, in double-double):
/// `-s ln l - (l + s - 1/2) ln(1 + s/l) + s + Δ(l) - Δ(l + s)`, given `ln l`.
///
/// Nothing of the size of `ln Γ(l)` is formed, so the difference keeps its
/// digits when `l` is 1e6 and `s` is 1e-3, and stays finite when `l` is near
/// `f64::MAX` (where `ln Γ(l)` itself overflows).
fn ln_gamma_ratio(s: Dd, l: Dd, ln_l: Dd) -> Dd {
    let u = s.div(l);
    let l1p = if u.hi < 1.0 / 64.0 {
        ln_1p_dd(u.hi).add_f64(u.lo / (1.0 + u.hi))
    } else {
        ln_of_dd(u.add_f64(1.0))
    };
    // (l - 1/2) ln(1 + u) - s nearly cancels: keep both in double-double
    let t = l.add_f64(-0.5).mul(l1p).add(s.mul(l1p)).sub(s);
    let delta = stirling_delta(l.hi) - stirling_delta(l.hi + s.hi);
    ln_l.mul(s).add(t).neg().add_f64(delta)
}

/// `ln B(a, b)` (or, with `times_a`, `ln(a B(a, b))`) for double-double arguments.
fn ln_beta_impl(a: Dd, b: Dd, times_a: bool) -> Dd {
    let a_is_small = a.hi <= b.hi;
    let (sm, lg) = if a_is_small { (a, b) } else { (b, a) };
    if lg.hi < 10.0 {
        let pa = ln_gamma_parts(a);
        let pb = ln_gamma_parts(b);
        let ps = ln_gamma_parts(a.add(b));
        let fa = if times_a { pa.factor.mul(a) } else { pa.factor };
        return ln_ratio(fa, pb.factor, ps.factor)
            .add(pa.log)
            .add(pb.log)
            .sub(ps.log);
    }
    if sm.hi > 1e280 {
        // both beyond double-double range: the Stirling form in plain doubles,
        // -a ln(1 + b/a) - b ln(1 + a/b) + ln(2π (1/a + 1/b)) / 2
        let (x, y) = (a.hi, b.hi);
        let v = -(x * math::ln_1p(y / x)) - y * math::ln_1p(x / y)
            + 0.5 * math::ln(1.0 / x + 1.0 / y)
            + LN_2PI_HALF.0;
        return Dd::from(if times_a { v + math::ln(x) } else { v });
    }
    // ln B = ln Γ(sm) + [ln Γ(lg) - ln Γ(lg + sm)]
    let ln_lg = ln_of_dd(lg);
    let ps = ln_gamma_parts(sm);
    let mut v = ln_gamma_ratio(sm, lg, ln_lg).add(ps.log);
    if times_a && a_is_small {
        // ln(a Γ(a)): fold a into the factor of the small one
        let f = ps.factor.mul(a);
        v = v.add(ln_ratio(f, ONE, ONE));
    } else {
        v = v.add(ln_ratio(ps.factor, ONE, ONE));
        if times_a {
            v = v.add(ln_lg);
        }
    }
    v
}

/// `ln B(a, b)` for double-double arguments, as a double-double.
pub(crate) fn ln_beta_dd(a: Dd, b: Dd) -> Dd {
    ln_beta_impl(a, b, false)
}

/// `ln(a B(a, b)) = ln Γ(a + 1) + ln Γ(b) - ln Γ(a + b)` for double-double
/// arguments, without forming the (generally inexact) sum `a + 1`.
pub(crate) fn ln_a_beta_dd(a: Dd, b: Dd) -> Dd {
    ln_beta_impl(a, b, true)
}

/// A small memo of `ln B` values for one evaluation or one quantile search.
///
/// The quantile solver evaluates `I_x(a, b)` several times for the same `(a, b)`,
/// and every evaluation needs `ln B` of the same few parameter pairs (the shifts
/// of `bup` repeat too); three gamma functions and a logarithm in double-double
/// are the largest fixed cost of an evaluation, so they are computed once.
#[derive(Debug, Default)]
pub(crate) struct Memo {
    slots: [core::cell::Cell<Option<MemoEntry>>; 4],
    next: core::cell::Cell<usize>,
}

/// The bit patterns of `(a, b)`, whether `a` multiplies the beta function, and the
/// value.
type MemoKey = (u64, u64, u64, u64, bool);
type MemoEntry = (MemoKey, Dd);

impl Memo {
    pub(crate) fn new() -> Memo {
        Memo::default()
    }

    fn get(&self, a: Dd, b: Dd, with_a: bool) -> Dd {
        let key = (
            a.hi.to_bits(),
            a.lo.to_bits(),
            b.hi.to_bits(),
            b.lo.to_bits(),
            with_a,
        );
        for slot in &self.slots {
            if let Some((k, v)) = slot.get() {
                if k == key {
                    return v;
                }
            }
        }
        let v = if with_a {
            ln_a_beta_dd(a, b)
        } else {
            ln_beta_dd(a, b)
        };
        let i = self.next.get() % self.slots.len();
        if let Some(slot) = self.slots.get(i) {
            slot.set(Some((key, v)));
        }
        self.next.set(i + 1);
        v
    }

    /// `ln B(a, b)`, memoized.
    pub(crate) fn ln_beta(&self, a: Dd, b: Dd) -> Dd {
        self.get(a, b, false)
    }

    /// `ln(a B(a, b))`, memoized.
    pub(crate) fn ln_a_beta(&self, a: Dd, b: Dd) -> Dd {
        self.get(a, b, true)
    }
}

/// ψ(x) for 0 < x < 10 to about three digits: enough for the first-order
/// correction of a double-double argument, and free of logarithms.
#[inline]
fn digamma_small(x: f64) -> f64 {
    // move to y in [1.5, 2.5) with ψ(x + 1) = ψ(x) + 1/x
    let mut y = x;
    let mut acc = 0.0;
    let mut guard = 0;
    while y < 1.5 && guard < 4 {
        acc -= 1.0 / y;
        y += 1.0;
        guard += 1;
    }
    while y >= 2.5 && guard < 16 {
        y -= 1.0;
        acc += 1.0 / y;
        guard += 1;
    }
    // Taylor series of ψ about 2 (third order; error below 0.003 on [1.5, 2.5])
    let t = y - 2.0;
    acc + (0.422_784_335_098_467_1
        + t * (0.644_934_066_848_226_4
            + t * (-0.202_056_903_159_594_3 + t * 0.082_323_233_711_138_19)))
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
