//! Sampling Beta(α, β) as a ratio of Gamma variates, in log space.
//!
//! `X = G_a / (G_a + G_b)` with `G_k ~ Gamma(k, 1)`. For a shape below one the usual
//! boost `G_k = G_{k+1} U^{1/k}` underflows: with `k = 0.001`, `U^{1000}` is zero for
//! half of all `U`, and both variates vanish together in a quarter of the draws,
//! giving 0/0. Carrying `ln G_k = ln G_{k+1} + ln(U)/k` instead never underflows,
//! and `X = 1 / (1 + exp(ln G_b - ln G_a))` is then evaluated on the side that keeps
//! its relative precision. When both shapes are at least one nothing can underflow
//! and the plain ratio is used.

use rand_core::Rng;

use crate::math;

/// A uniform draw in the open interval (0, 1) with 53 random bits.
#[inline]
fn open01<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / 9_007_199_254_740_992.0)
}

/// Standard normal draws, two at a time (Marsaglia's polar method: one `ln` and one
/// `sqrt` per pair, no trigonometry), the second kept for the next call.
struct Normals {
    spare: Option<f64>,
}

impl Normals {
    fn next<R: Rng + ?Sized>(&mut self, rng: &mut R) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        // acceptance is pi/4 per round; 64 rounds fail with probability 1e-43
        for _ in 0..64 {
            let u = 2.0 * open01(rng) - 1.0;
            let v = 2.0 * open01(rng) - 1.0;
            let s = u * u + v * v;
            if s < 1.0 && s > 0.0 {
                let f = math::sqrt(-2.0 * math::ln(s) / s);
                self.spare = Some(v * f);
                return u * f;
            }
        }
        0.0
    }
}

/// `G ~ Gamma(shape, 1)` for `shape >= 1` (Marsaglia and Tsang 2000, with their
/// squeeze, so most draws need no logarithm). Acceptance is above 95 % for every
/// shape >= 1; the cap of 64 rounds is never reached in practice (probability below
/// 1e-80).
fn gamma_large<R: Rng + ?Sized>(shape: f64, normals: &mut Normals, rng: &mut R) -> f64 {
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / math::sqrt(9.0 * d);
    for _ in 0..64 {
        let z = normals.next(rng);
        let t = 1.0 + c * z;
        if t <= 0.0 {
            continue;
        }
        let v = t * t * t;
        let u = open01(rng);
        let z2 = z * z;
        if u < 1.0 - 0.0331 * z2 * z2 || math::ln(u) < 0.5 * z2 + d - d * v + d * math::ln(v) {
            return d * v;
        }
    }
    d
}

/// One Beta(a, b) draw.
pub(crate) fn beta<R: Rng + ?Sized>(a: f64, b: f64, rng: &mut R) -> f64 {
    let mut normals = Normals { spare: None };
    if a >= 1.0 && b >= 1.0 {
        // no underflow possible: the plain ratio
        let ga = gamma_large(a, &mut normals, rng);
        let gb = gamma_large(b, &mut normals, rng);
        let sum = ga + gb;
        if sum < f64::INFINITY {
            return ga / sum;
        }
        // shapes near the largest double: each variate is finite (at most its
        // shape) but their sum is not, and ga / inf would read 0; halved, it is
        let (ha, hb) = (0.5 * ga, 0.5 * gb);
        return ha / (ha + hb);
    }
    // ln G_k = ln G_{k+1} + ln(u) / k for a shape below one, the two parts kept apart
    // so that a boost that overflows to -inf can still be compared
    let mut log_parts = |shape: f64| {
        if shape < 1.0 {
            let ln_u = math::ln(open01(rng));
            (
                math::ln(gamma_large(shape + 1.0, &mut normals, rng)),
                ln_u,
                shape,
            )
        } else {
            (math::ln(gamma_large(shape, &mut normals, rng)), 0.0, 1.0)
        }
    };
    let (base_a, ln_ua, sa) = log_parts(a);
    let (base_b, ln_ub, sb) = log_parts(b);
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
