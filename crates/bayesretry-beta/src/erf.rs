//! The scaled complementary error function `erfcx(z) = exp(z²) erfc(z)` for `z >= 0`,
//! which the large-parameter expansion of the incomplete beta function needs to full
//! relative precision even where `erfc(z)` itself underflows.
//!
//! Chebyshev fits on [0, 1], [1, 2], [2, 4] and [4, 8] (generated with mpmath), and the
//! asymptotic series `1/(z √π) Σ (-1)^n (2n-1)!! / (2z²)^n` beyond 8, where its
//! smallest term is below 1e-27.

use crate::coefficients::{ERFCX_0_1, ERFCX_1_2, ERFCX_2_4, ERFCX_4_8};
use crate::gamma::chebyshev;

const FRAC_1_SQRT_PI: f64 = 0.5 * core::f64::consts::FRAC_2_SQRT_PI;

/// `exp(z²) erfc(z)` for `z >= 0` (NaN passes through; negative input is clamped to 0).
pub(crate) fn erfcx(z: f64) -> f64 {
    if z.is_nan() {
        return z;
    }
    let z = if z < 0.0 { 0.0 } else { z };
    if z <= 1.0 {
        chebyshev(&ERFCX_0_1, 2.0 * z - 1.0)
    } else if z <= 2.0 {
        chebyshev(&ERFCX_1_2, 2.0 * z - 3.0)
    } else if z <= 4.0 {
        chebyshev(&ERFCX_2_4, z - 3.0)
    } else if z <= 8.0 {
        chebyshev(&ERFCX_4_8, 0.5 * z - 3.0)
    } else {
        let v = 1.0 / (2.0 * z * z);
        let mut term = 1.0;
        let mut sum = 1.0;
        let mut n = 1;
        while n < 40 {
            term *= -((2 * n - 1) as f64) * v;
            sum += term;
            if term.abs() < 1e-18 * sum {
                break;
            }
            n += 1;
        }
        FRAC_1_SQRT_PI / z * sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // erfcx(0) = 1; erfcx(1) = 0.42758357615580700442; erfcx(10) = 0.05614099274382258586
        assert!((erfcx(0.0) - 1.0).abs() < 2e-16);
        assert!((erfcx(1.0) / 0.427_583_576_155_807 - 1.0).abs() < 3e-16);
        assert!((erfcx(10.0) / 0.056_140_992_743_822_59 - 1.0).abs() < 3e-16);
        assert!((erfcx(5.0) / 0.110_704_637_733_068_63 - 1.0).abs() < 3e-16);
    }
}
