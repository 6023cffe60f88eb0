//! Double-double arithmetic: a value carried as an unevaluated sum `hi + lo` of two
//! doubles, good to about 106 bits.
//!
//! The incomplete beta function is a small series or continued fraction times a
//! prefactor `x^a (1-x)^b / B(a, b)`. Computed as `exp(z)` in plain doubles, the
//! exponent `z` is a sum of terms far larger than itself (for a = b = 1e6 they reach
//! 1e7 while `z` is a few units), and every unit of absolute error in `z` is a unit of
//! relative error in the result. Carrying `z` in double-double makes that error
//! vanish; only the final `exp` rounds. The error-free transformations below use
//! Dekker's splitting rather than a fused multiply-add, which many targets (x86-64
//! without `fma`, thumbv7em) would emulate in software.

use crate::coefficients::{LN_TABLE, LN2_ABC};
use crate::math;

/// An unevaluated sum `hi + lo` with `|lo| <= ulp(hi) / 2`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Dd {
    pub(crate) hi: f64,
    pub(crate) lo: f64,
}

/// `a + b` exactly, as (sum, error).
#[inline]
pub(crate) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    (s, err)
}

/// `a + b` exactly when `|a| >= |b|`.
#[inline]
fn quick_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

#[cfg(not(target_feature = "fma"))]
#[inline]
fn split(a: f64) -> (f64, f64) {
    // 2^27 + 1: splits a 53-bit mantissa into two 26-bit halves.
    const SPLITTER: f64 = 134_217_729.0;
    if a.abs() > 6.7e299 {
        // SPLITTER * a would overflow (and a rounded high half could too): cut the
        // mantissa instead. The halves then have 27 and 26 bits, so the error term
        // of a product loses its last few bits — only ever for arguments this large.
        let hi = f64::from_bits(a.to_bits() & !0x3ff_ffff);
        return (hi, a - hi);
    }
    let t = SPLITTER * a;
    let hi = t - (t - a);
    (hi, a - hi)
}

/// `a * b` exactly, as (product, error). Valid while `|a * b|` stays below ~1e300.
///
/// Where the target has a fused multiply-add (`-C target-cpu=native` on any x86-64
/// since 2013, x86-64-v3, aarch64), the error is one `fma`; elsewhere Dekker's
/// splitting computes the same value in plain arithmetic.
#[inline]
pub(crate) fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    #[cfg(target_feature = "fma")]
    {
        (p, math::fma(a, b, -p))
    }
    #[cfg(not(target_feature = "fma"))]
    {
        let (ah, al) = split(a);
        let (bh, bl) = split(b);
        let err = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
        (p, err)
    }
}

impl Dd {
    pub(crate) const ZERO: Dd = Dd { hi: 0.0, lo: 0.0 };

    #[inline]
    pub(crate) const fn new(hi: f64, lo: f64) -> Dd {
        Dd { hi, lo }
    }

    #[inline]
    pub(crate) const fn from(x: f64) -> Dd {
        Dd { hi: x, lo: 0.0 }
    }

    /// The exact sum of two doubles.
    #[inline]
    pub(crate) fn sum(a: f64, b: f64) -> Dd {
        let (hi, lo) = two_sum(a, b);
        Dd { hi, lo }
    }

    /// The exact product of two doubles.
    #[inline]
    pub(crate) fn prod(a: f64, b: f64) -> Dd {
        let (hi, lo) = two_prod(a, b);
        Dd { hi, lo }
    }

    #[inline]
    pub(crate) fn to_f64(self) -> f64 {
        self.hi + self.lo
    }

    #[inline]
    pub(crate) fn add(self, o: Dd) -> Dd {
        let (s, e) = two_sum(self.hi, o.hi);
        let (t, f) = two_sum(self.lo, o.lo);
        let (s, e) = quick_two_sum(s, e + t);
        let (hi, lo) = quick_two_sum(s, e + f);
        Dd { hi, lo }
    }

    #[inline]
    pub(crate) fn add_f64(self, o: f64) -> Dd {
        let (s, e) = two_sum(self.hi, o);
        let (hi, lo) = quick_two_sum(s, e + self.lo);
        Dd { hi, lo }
    }

    #[inline]
    pub(crate) fn neg(self) -> Dd {
        Dd {
            hi: -self.hi,
            lo: -self.lo,
        }
    }

    #[inline]
    pub(crate) fn sub(self, o: Dd) -> Dd {
        self.add(o.neg())
    }

    #[inline]
    pub(crate) fn mul_f64(self, b: f64) -> Dd {
        let (p, e) = two_prod(self.hi, b);
        let (hi, lo) = quick_two_sum(p, e + self.lo * b);
        Dd { hi, lo }
    }

    #[inline]
    pub(crate) fn mul(self, o: Dd) -> Dd {
        let (p, e) = two_prod(self.hi, o.hi);
        let (hi, lo) = quick_two_sum(p, e + (self.hi * o.lo + self.lo * o.hi));
        Dd { hi, lo }
    }

    /// `self / o` to double-double accuracy.
    #[inline]
    pub(crate) fn div(self, o: Dd) -> Dd {
        let q1 = self.hi / o.hi;
        let r = self.sub(o.mul_f64(q1));
        let q2 = r.hi / o.hi;
        let (hi, lo) = quick_two_sum(q1, q2);
        Dd { hi, lo }
    }

    /// `sqrt(self)` to double-double accuracy (one Newton correction).
    #[inline]
    pub(crate) fn sqrt(self) -> Dd {
        let s = math::sqrt(self.hi);
        if !(s > 0.0) {
            return Dd::from(s);
        }
        let (p, e) = two_prod(s, s);
        let corr = ((self.hi - p) - e + self.lo) / (2.0 * s);
        let (hi, lo) = quick_two_sum(s, corr);
        Dd { hi, lo }
    }

    /// `self / b` to double-double accuracy.
    #[inline]
    pub(crate) fn div_f64(self, b: f64) -> Dd {
        let q1 = self.hi / b;
        // remainder self - q1 * b, exactly up to the lo part
        let (p, e) = two_prod(q1, b);
        let r = ((self.hi - p) - e) + self.lo;
        let q2 = r / b;
        let (hi, lo) = quick_two_sum(q1, q2);
        Dd { hi, lo }
    }
}

/// `exp(z)` for a double-double `z`, rounded to a double (about one ulp).
#[inline]
pub(crate) fn exp_dd(z: Dd) -> f64 {
    let e = math::exp(z.hi);
    // exp(hi + lo) = exp(hi) * (1 + lo + lo^2/2 ...); |lo| < 1e-13 so one term is plenty.
    e + e * z.lo
}

/// `ln(x)` for a positive finite double, as a double-double good to about 1e-25
/// absolute (1e-22 relative near `x = 1`).
///
/// The mantissa `m` in [1, 2) is reduced by a 128-entry table to `1 + r` with
/// `|r| < 1/256`: `r = m·INV_j - 1` exactly (Dekker's product with the table's
/// pre-split `INV_j`, and the subtraction is exact because the product is near 1).
/// Then `ln x = k ln 2 - ln INV_j + r - r²/2 + r³ P(r)`, where only `r²` needs an
/// error-free product and `P` runs in plain doubles (it is 1e-8 of the result).
/// Arguments within 1/64 of one skip the table, so the result stays relatively
/// accurate as `ln x -> 0`.
pub(crate) fn ln_dd(x: f64) -> Dd {
    if !(x > 0.0) || x == f64::INFINITY {
        return Dd::from(math::ln(x));
    }
    let d = x - 1.0;
    if d.abs() < 1.0 / 64.0 {
        // x - 1 is exact here (Sterbenz).
        return ln1p_near_zero(d);
    }
    let (m, k) = frexp1(x);
    let j = ((m - 1.0) * 128.0) as usize;
    let (inv, inv_hi, inv_lo, l_hi, l_lo) = match LN_TABLE.get(j) {
        Some(row) => *row,
        None => (1.0, 1.0, 0.0, 0.0, 0.0),
    };
    #[cfg(target_feature = "fma")]
    let (p, p_err) = {
        let _ = (inv_hi, inv_lo);
        two_prod(m, inv)
    };
    #[cfg(not(target_feature = "fma"))]
    let (p, p_err) = {
        // Dekker's product with the table's pre-split INV_j
        let p = m * inv;
        let (mh, ml) = split(m);
        (
            p,
            ((mh * inv_hi - p) + mh * inv_lo + ml * inv_hi) + ml * inv_lo,
        )
    };
    let (r, rl) = quick_two_sum(p - 1.0, p_err);
    // r^2 = sq + sq_err + 2 r rl
    let (sq, sq_err) = two_prod(r, r);
    let half_sq_lo = 0.5 * (sq_err + 2.0 * r * rl);
    // r^3 (1/3 - r/4 + r^2/5 - ...), |r| < 2^-8: terms to r^11 reach 1e-27
    let poly = horner(&LN1P_TAIL[..9], r) * (r * r * r);
    let kf = k as f64;
    let (s1, e1) = two_sum(kf * LN2_ABC.0, l_hi);
    let (s2, e2) = two_sum(s1, r);
    let (s3, e3) = two_sum(s2, -0.5 * sq);
    let lo = e1 + e2 + e3 + (kf * LN2_ABC.1 + (l_lo + kf * LN2_ABC.2)) + (rl - half_sq_lo + poly);
    let (hi, lo) = quick_two_sum(s3, lo);
    Dd { hi, lo }
}

/// `ln(1 + x)` for an exact double `x > -1` as a double-double.
pub(crate) fn ln_1p_dd(x: f64) -> Dd {
    if x.abs() < 1.0 / 64.0 {
        return ln1p_near_zero(x);
    }
    let s = Dd::sum(1.0, x);
    ln_of_dd(s)
}

/// `ln(s)` for a positive double-double.
#[inline]
pub(crate) fn ln_of_dd(s: Dd) -> Dd {
    // ln(hi + lo) = ln(hi) + ln(1 + lo / hi), and lo / hi < 2^-53.
    ln_dd(s.hi).add_f64(s.lo / s.hi)
}

/// ln(1 + d) for an exact double |d| < 1/64, relatively accurate to ~1e-22.
fn ln1p_near_zero(d: f64) -> Dd {
    // d - d^2/2 + d^3 (1/3 - d/4 + ...); terms to d^13 reach 1e-22 relative.
    let (sq, sq_err) = two_prod(d, d);
    let poly = horner(&LN1P_TAIL, d) * (d * d * d);
    let (s, e) = two_sum(d, -0.5 * sq);
    let (hi, lo) = quick_two_sum(s, e + (poly - 0.5 * sq_err));
    Dd { hi, lo }
}

/// Coefficients of `(ln(1 + r) - r + r²/2) / r³ = 1/3 - r/4 + r²/5 - ...`
const LN1P_TAIL: [f64; 11] = [
    1.0 / 3.0,
    -1.0 / 4.0,
    1.0 / 5.0,
    -1.0 / 6.0,
    1.0 / 7.0,
    -1.0 / 8.0,
    1.0 / 9.0,
    -1.0 / 10.0,
    1.0 / 11.0,
    -1.0 / 12.0,
    1.0 / 13.0,
];

/// `c[0] + c[1] x + c[2] x² + ...` by Horner's rule.
#[inline]
pub(crate) fn horner(c: &[f64], x: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, &k| acc * x + k)
}

/// Splits a positive finite double into `m * 2^k` with `m` in [1, 2).
#[inline]
fn frexp1(x: f64) -> (f64, i32) {
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        // subnormal: scale into the normal range first
        let y = x * 18_014_398_509_481_984.0; // 2^54
        let (m, k) = frexp1(y);
        return (m, k - 54);
    }
    let m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    (m, exp - 1023)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn division_and_products_survive_the_extremes() {
        let q = Dd::from(1.0).div(Dd::from(f64::MAX));
        assert!(q.hi > 0.0 && q.hi.is_finite() && !q.lo.is_nan(), "{q:?}");
        let p = Dd::from(f64::MAX).mul(Dd::from(0.5));
        assert_eq!(p.hi, f64::MAX * 0.5);
        assert!(!p.lo.is_nan());
    }

    #[test]
    fn two_prod_is_exact() {
        let (p, e) = two_prod(0.1, 0.3);
        // 0.1 * 0.3 in exact binary arithmetic differs from the rounded product
        assert!(e != 0.0);
        assert_eq!(p, 0.1 * 0.3);
    }

    #[test]
    fn ln_dd_matches_known_values() {
        // ln 10 = 2.302585092994045684017991454684364...
        let l = ln_dd(10.0);
        assert_eq!(l.hi, core::f64::consts::LN_10);
        assert!(
            (l.lo - (-2.170_756_223_382_249_5e-16)).abs() < 1e-23,
            "lo = {:e}",
            l.lo
        );
        // ln(1 + 2^-30) is 2^-30 - 2^-61 + ...
        let t = ln_dd(1.0 + 2f64.powi(-30));
        assert_eq!(t.hi, 2f64.powi(-30) - 2f64.powi(-61));
        // tiny and subnormal arguments
        let s = ln_dd(5e-324);
        assert!((s.hi - (-744.4400719213812)).abs() < 1e-12);
    }
}
