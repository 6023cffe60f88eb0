//! Seeded randomness: SplitMix64 as a keyed hash, so that every draw is a pure
//! function of its key (paired luck), and a sequential generator built on it.

use crate::luck::{mix64, unit_of};

/// The SplitMix64 increment (the golden ratio in 64 bits).
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// A 64-bit word that is a pure function of `parts`: each part is folded in with
/// one SplitMix64 step, so keys that differ in any part give unrelated words.
pub(crate) fn key(parts: &[u64]) -> u64 {
    let mut h = GOLDEN;
    for &part in parts {
        h = mix64(h.wrapping_add(GOLDEN) ^ part);
    }
    h
}

/// The top 53 bits of `word` as a number in `[0, 1)`.
pub(crate) fn unit(word: u64) -> f64 {
    unit_of(word)
}

/// A number in `(0, 1]`, for logarithms: `1 - unit`.
pub(crate) fn open_unit(word: u64) -> f64 {
    1.0 - unit(word)
}

/// An exponential variate of mean `mean` from one word (inversion).
pub(crate) fn exponential(word: u64, mean: f64) -> f64 {
    -mean * open_unit(word).ln()
}

/// A standard normal variate from two words (Box–Muller, cosine branch).
pub(crate) fn normal(a: u64, b: u64) -> f64 {
    let r = (-2.0 * open_unit(a).ln()).sqrt();
    r * (core::f64::consts::TAU * unit(b)).cos()
}

/// A sequential SplitMix64 generator, for draws whose order is fixed by the
/// simulation itself (a policy's own jitter stream).
#[derive(Clone, Debug)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose sequence is fixed by `seed`.
    pub(crate) const fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next word.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix64(self.state)
    }

    /// The next number in `[0, 1)`.
    pub(crate) fn next_unit(&mut self) -> f64 {
        unit(self.next_u64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_words_depend_on_every_part_and_on_order() {
        assert_eq!(key(&[1, 2, 3]), key(&[1, 2, 3]));
        assert_ne!(key(&[1, 2, 3]), key(&[1, 2, 4]));
        assert_ne!(key(&[1, 2]), key(&[2, 1]));
        assert_ne!(key(&[0]), key(&[0, 0]));
    }

    #[test]
    fn unit_draws_are_uniform_in_mean_and_bounds() {
        let mut rng = SplitMix64::new(7);
        let n = 100_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let u = rng.next_unit();
            assert!((0.0..1.0).contains(&u));
            sum += u;
        }
        let mean = sum / f64::from(n);
        // standard error of the mean is 1/sqrt(12 n) ~ 0.0009
        assert!((mean - 0.5).abs() < 0.004, "mean {mean}");
    }

    #[test]
    fn exponential_and_normal_draws_have_their_moments() {
        let n = 200_000u64;
        let (mut e, mut z, mut z2) = (0.0, 0.0, 0.0);
        for i in 0..n {
            e += exponential(key(&[1, i]), 2.0);
            let x = normal(key(&[2, i]), key(&[3, i]));
            z += x;
            z2 += x * x;
        }
        let n = n as f64;
        assert!((e / n - 2.0).abs() < 0.03, "exponential mean {}", e / n);
        assert!((z / n).abs() < 0.01, "normal mean {}", z / n);
        assert!((z2 / n - 1.0).abs() < 0.02, "normal variance {}", z2 / n);
    }
}
