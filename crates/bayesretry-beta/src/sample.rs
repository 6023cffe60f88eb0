//! Sampling Beta(α, β) as a ratio of Gamma variates, in log space.
//!
//! `X = G_a / (G_a + G_b)` with `G_k ~ Gamma(k, 1)`. For a shape below one the usual
//! boost `G_k = G_{k+1} U^{1/k}` underflows: with `k = 0.001`, `U^{1000}` is zero for
//! half of all `U`, and both variates vanish together in a quarter of the draws,
//! giving 0/0. Carrying `ln G_k = ln G_{k+1} + ln(U)/k` instead never underflows,
//! and `X = 1 / (1 + exp(ln G_b - ln G_a))` is then evaluated on the side that keeps
//! its relative precision.

use rand_core::Rng;

use crate::math;

/// A uniform draw in the open interval (0, 1) with 53 random bits.
#[inline]
fn open01<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / 9_007_199_254_740_992.0)
}

/// A standard normal draw (Box–Muller; one of the pair is discarded for simplicity).
#[inline]
fn normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1 = open01(rng);
    let u2 = open01(rng);
    math::sqrt(-2.0 * math::ln(u1)) * math::cos(core::f64::consts::TAU * u2)
}

/// `ln G` for `G ~ Gamma(shape, 1)`, as `base + ln(u) / shape` with the two parts
/// kept apart: for a shape near 1e-320 the second is `-inf` in doubles, and the
/// caller still needs to compare two such variates.
fn ln_gamma_variate<R: Rng + ?Sized>(shape: f64, rng: &mut R) -> (f64, f64, f64) {
    if shape < 1.0 {
        let ln_u = math::ln(open01(rng));
        let base = ln_gamma_variate_large(shape + 1.0, rng);
        return (base, ln_u, shape);
    }
    (ln_gamma_variate_large(shape, rng), 0.0, 1.0)
}

/// `ln G` for `G ~ Gamma(shape, 1)`, `shape >= 1`.
fn ln_gamma_variate_large<R: Rng + ?Sized>(shape: f64, rng: &mut R) -> f64 {
    // Marsaglia and Tsang (2000): acceptance above 95 % for every shape >= 1, so the
    // cap of 64 rounds is never reached in practice (probability below 1e-80).
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / math::sqrt(9.0 * d);
    for _ in 0..64 {
        let z = normal(rng);
        let t = 1.0 + c * z;
        if t <= 0.0 {
            continue;
        }
        let v = t * t * t;
        let u = open01(rng);
        if math::ln(u) < 0.5 * z * z + d - d * v + d * math::ln(v) {
            return math::ln(d * v);
        }
    }
    math::ln(d)
}

/// One Beta(a, b) draw.
pub(crate) fn beta<R: Rng + ?Sized>(a: f64, b: f64, rng: &mut R) -> f64 {
    let (base_a, ln_ua, sa) = ln_gamma_variate(a, rng);
    let (base_b, ln_ub, sb) = ln_gamma_variate(b, rng);
    let la = base_a + ln_ua / sa;
    let lb = base_b + ln_ub / sb;
    let d = if la.is_finite() || lb.is_finite() {
        la - lb
    } else {
        // both boosts overflowed: compare ln(u_a)/a with ln(u_b)/b as
        // ln(u_a)·b against ln(u_b)·a, which stays finite
        let (x, y) = (ln_ua * sb, ln_ub * sa);
        if x > y {
            f64::INFINITY
        } else if x < y {
            f64::NEG_INFINITY
        } else {
            0.0
        }
    };
    if d < 0.0 {
        // X = e^d / (1 + e^d): small X keeps its relative precision
        let e = math::exp(d);
        e / (1.0 + e)
    } else {
        1.0 / (1.0 + math::exp(-d))
    }
}
