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

use crate::coefficients::{LN_TABLE, LN2};
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

#[inline]
fn split(a: f64) -> (f64, f64) {
    // 2^27 + 1: splits a 53-bit mantissa into two 26-bit halves.
    const SPLITTER: f64 = 134_217_729.0;
    let t = SPLITTER * a;
    let hi = t - (t - a);
    (hi, a - hi)
}

/// `a * b` exactly, as (product, error). Valid while `|a * b|` stays below ~1e300.
#[inline]
pub(crate) fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    let err = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    (p, err)
}

impl Dd {
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

/// `ln(x)` for a positive finite double, as a double-double good to about 1e-22
/// relative: the mantissa is reduced by a 128-entry table to `1 + r` with
/// `|r| < 1/256`, and `ln(1 + r)` is summed with its two leading terms in
/// double-double. Arguments within 1/64 of one skip the table, so the result stays
/// relatively accurate as `ln(x) -> 0`.
pub(crate) fn ln_dd(x: f64) -> Dd {
    if !(x > 0.0) || x == f64::INFINITY {
        return Dd::from(math::ln(x));
    }
    if (x - 1.0).abs() < 1.0 / 64.0 {
        // x - 1 is exact here (Sterbenz).
        return ln1p_small(Dd::from(x - 1.0));
    }
    let (m, k) = frexp1(x);
    // m in [1, 2): the top 7 mantissa bits select the table row.
    let j = ((m - 1.0) * 128.0) as usize;
    let (inv, l_hi, l_lo) = match LN_TABLE.get(j) {
        Some(row) => *row,
        None => (1.0, 0.0, 0.0),
    };
    // r = m * inv - 1 exactly: the product is near 1, so subtracting 1 is exact.
    let (p, e) = two_prod(m, inv);
    let r = Dd::sum(p - 1.0, e);
    let lnm = ln1p_small(r).add(Dd::new(l_hi, l_lo));
    let kf = k as f64;
    Dd::prod(LN2.0, kf).add(Dd::from(LN2.1 * kf)).add(lnm)
}

/// `ln(1 + x)` for an exact double `x > -1` as a double-double.
pub(crate) fn ln_1p_dd(x: f64) -> Dd {
    if x.abs() < 1.0 / 64.0 {
        return ln1p_small(Dd::from(x));
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

/// ln(1 + r) for |r| < 1/64 given as a double-double.
fn ln1p_small(r: Dd) -> Dd {
    let x = r.hi;
    // -r^4/4 + r^5/5 - ... in plain doubles: absolute error ~1e-16 * |r|^4.
    let mut tail = 0.0;
    let mut k = 16;
    while k >= 4 {
        let sign = if k % 2 == 1 { 1.0 } else { -1.0 };
        tail = tail * x + sign / k as f64;
        k -= 1;
    }
    let r2 = r.mul(r);
    let r3 = r2.mul(r);
    tail *= r2.hi * r2.hi;
    // r - r^2/2 + r^3/3 in double-double
    r.sub(r2.mul_f64(0.5)).add(r3.div_f64(3.0)).add_f64(tail)
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
            (l.lo - (-2.170_756_223_382_249_5e-16)).abs() < 1e-26,
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
