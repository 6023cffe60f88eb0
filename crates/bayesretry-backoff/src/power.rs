//! `base · factor^n` in nanoseconds, computed so that it never decreases in `n`.
//!
//! A schedule that shrinks from one attempt to the next, even by a nanosecond, is a
//! bug a caller can see, so monotonicity is proved here rather than hoped for:
//!
//! - An integral factor (1, 2, 3, ...) is raised exactly in `u128` arithmetic.
//! - Any other factor is raised by binary powering in double-double arithmetic
//!   (about 106 bits). Powering to `n < 2^32` takes at most 32 squarings, each of
//!   which at most doubles the relative error, so the result is within 2^-64 of
//!   `factor^n`. A factor above 1 is at least 1 + 2^-52, so `factor^(n+1)` exceeds
//!   `factor^n` by far more than that error, and the computed powers strictly
//!   increase. Rounding the final product to `f64` and truncating it to whole
//!   nanoseconds are both monotone, so the delays never decrease.
//!
//! Plain `f64` powering would not do: its error grows like `n · 2^-53`, which for a
//! factor such as 1 + 1e-12 and a large `n` exceeds the growth from one attempt to
//! the next.

/// Above this many nanoseconds every delay is saturated anyway (`Duration::MAX` is
/// below 2^94 ≈ 2e28 ns); stopping here keeps double-double products far from
/// overflow.
const SATURATED: f64 = 1e40;

/// `base · factor^n` nanoseconds, or `u128::MAX` when that is beyond any duration.
/// `factor` is at least 1 for a validated schedule; anything else still returns a
/// number without panicking.
pub(crate) fn scaled_power(base: u128, factor: f64, n: u32) -> u128 {
    if base == 0 {
        return 0;
    }
    if let Some(factor) = as_integer(factor) {
        if factor.is_power_of_two() {
            return shifted(base, factor.trailing_zeros(), n);
        }
        return integral_power(factor, n)
            .and_then(|p| base.checked_mul(p))
            .unwrap_or(u128::MAX);
    }
    let Some(power) = dd_power(factor, n) else {
        return u128::MAX;
    };
    let scaled = Dd::from_u128(base).mul(power);
    let nanos = scaled.hi + scaled.lo;
    // 2^64 as an f64: below it a 64-bit conversion does, without a library call
    if nanos < 18_446_744_073_709_551_616.0 {
        // `as` maps NaN (and anything negative) to 0
        return u128::from(nanos as u64);
    }
    // `as` saturates: above 2^128 (or infinite) gives u128::MAX
    nanos as u128
}

/// `factor` as a `u64`, if it is a whole number from 1 to 2^64 - 1.
fn as_integer(factor: f64) -> Option<u64> {
    // 2^64 as an f64; below it the conversion is exact
    let in_range = (1.0..18_446_744_073_709_551_616.0).contains(&factor);
    let whole = factor as u64;
    (in_range && whole as f64 == factor).then_some(whole)
}

/// `base · (2^bits)^n`, exactly, as a shift (factor 2, the common case, and any
/// other power of two), or `u128::MAX` when that overflows.
fn shifted(base: u128, bits: u32, n: u32) -> u128 {
    let shift = u64::from(bits) * u64::from(n);
    // `base > 0`, so its leading zeros are the room left for the shift
    if shift <= u64::from(base.leading_zeros()) {
        base << shift
    } else if bits == 0 {
        base
    } else {
        u128::MAX
    }
}

/// `factor^n` exactly, or `None` when it overflows `u128`.
fn integral_power(factor: u64, n: u32) -> Option<u128> {
    let mut result: u128 = 1;
    let mut square = u128::from(factor);
    let mut rest = n;
    // one round per bit of `n`
    for _ in 0..u32::BITS {
        if rest & 1 == 1 {
            result = result.checked_mul(square)?;
        }
        rest >>= 1;
        if rest == 0 {
            break;
        }
        // a bit of `rest` is still set, so an overflowing square would overflow
        // the result too
        square = square.checked_mul(square)?;
    }
    Some(result)
}

/// `factor^n` in double-double, or `None` once it is past [`SATURATED`].
fn dd_power(factor: f64, n: u32) -> Option<Dd> {
    let mut result = Dd::ONE;
    let mut square = Dd {
        hi: factor,
        lo: 0.0,
    };
    let mut rest = n;
    // one round per bit of `n`
    for _ in 0..u32::BITS {
        if rest & 1 == 1 {
            result = result.mul(square);
            if !(result.hi <= SATURATED) {
                return None;
            }
        }
        rest >>= 1;
        if rest == 0 {
            break;
        }
        // A bit of `rest` is still set, so the result will be multiplied by this
        // square or a larger one: past the threshold now means past it at the end.
        square = square.mul(square);
        if !(square.hi <= SATURATED) {
            return None;
        }
    }
    Some(result)
}

/// An unevaluated sum `hi + lo` with `|lo| <= ulp(hi) / 2`.
#[derive(Clone, Copy, Debug)]
struct Dd {
    hi: f64,
    lo: f64,
}

impl Dd {
    const ONE: Dd = Dd { hi: 1.0, lo: 0.0 };

    /// `x` exactly: below 2^94 for any duration, so the remainder fits an `f64`.
    fn from_u128(x: u128) -> Dd {
        // the common case, converted without 128-bit library calls
        if x < 1 << 53 {
            return Dd {
                hi: x as u64 as f64,
                lo: 0.0,
            };
        }
        let hi = x as f64;
        // `hi` may round up past `x`, so the remainder is signed.
        let lo = (x as i128).wrapping_sub(hi as i128) as f64;
        Dd { hi, lo }
    }

    /// The product, to about 2^-104 relative (the `lo · lo` term is dropped).
    fn mul(self, other: Dd) -> Dd {
        let (p, e) = two_product(self.hi, other.hi);
        let e = e + (self.hi * other.lo + self.lo * other.hi);
        let hi = p + e;
        Dd {
            hi,
            lo: e - (hi - p),
        }
    }
}

/// `a · b` as a rounded product and its exact rounding error (Dekker), without FMA
/// so that every target computes the same bits.
fn two_product(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    let (a_hi, a_lo) = split(a);
    let (b_hi, b_lo) = split(b);
    let e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo;
    (p, e)
}

/// Veltkamp's split of `a` into two halves of 26 significant bits each.
fn split(a: f64) -> (f64, f64) {
    let c = 134_217_729.0 * a; // 2^27 + 1
    let hi = c - (c - a);
    (hi, a - hi)
}

#[cfg(test)]
mod tests {
    use super::scaled_power;

    #[test]
    fn powers_of_two_shift_exactly_and_saturate() {
        assert_eq!(scaled_power(3, 2.0, 5), 96);
        assert_eq!(scaled_power(3, 4.0, 5), 3 << 10);
        assert_eq!(scaled_power(1, 2.0, 127), 1 << 127);
        assert_eq!(scaled_power(1, 2.0, 128), u128::MAX);
        assert_eq!(scaled_power(2, 2.0, 127), u128::MAX);
        assert_eq!(scaled_power(1, 2.0, u32::MAX), u128::MAX);
        assert_eq!(scaled_power(5, 1.0, u32::MAX), 5);
        assert_eq!(scaled_power(5, 2f64.powi(63), u32::MAX), u128::MAX);
    }

    #[test]
    fn integral_factors_are_exact() {
        assert_eq!(scaled_power(500, 2.0, 0), 500);
        assert_eq!(scaled_power(500, 2.0, 10), 512_000);
        assert_eq!(scaled_power(7, 3.0, 5), 7 * 243);
        assert_eq!(scaled_power(7, 1.0, u32::MAX), 7);
        assert_eq!(scaled_power(1, 2.0, 200), u128::MAX);
        assert_eq!(scaled_power(0, 2.0, u32::MAX), 0);
    }

    #[test]
    fn fractional_factors_are_correctly_rounded_where_exact() {
        // 1.5^10 = 57.6650390625 exactly
        assert_eq!(scaled_power(1 << 20, 1.5, 10), 60_466_176);
        assert_eq!(scaled_power(1_000_000_000, 1.25, 2), 1_562_500_000);
        assert_eq!(scaled_power(1, 1.5, u32::MAX), u128::MAX);
    }

    #[test]
    fn powers_of_a_factor_just_above_one_never_decrease() {
        let factor = 1.0 + f64::EPSILON;
        let base = 1_000_000_000_000_000;
        let mut previous = 0;
        let mut n: u32 = 1;
        // sample exponents up to 2^32 - 1, including the neighbours of powers of two
        for shift in 0..32 {
            for m in [(1u32 << shift) - 1, 1 << shift, (1u32 << shift) | 1] {
                n = n.max(m);
                let now = scaled_power(base, factor, n);
                assert!(now >= previous, "n = {n}: {now} < {previous}");
                previous = now;
            }
        }
        for n in (u32::MAX - 1000)..=u32::MAX {
            let now = scaled_power(base, factor, n);
            assert!(now >= previous, "n = {n}");
            previous = now;
        }
    }
}
