//! Paired luck: every draw of the environment is a pure function of
//! `(seed, scenario, call, attempt, purpose)`, every draw of a policy a pure
//! function of `(seed, policy, decision)`.

/// SplitMix64's golden-ratio increment.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's finaliser: a bijective mix of 64 bits.
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Folds `word` into the running key `acc`: one SplitMix64 step of the sum, so
/// that the order of the words matters and neighbouring keys land far apart.
const fn fold(acc: u64, word: u64) -> u64 {
    mix64(acc.wrapping_add(GAMMA).wrapping_add(mix64(word)))
}

/// The top 53 bits of `word` as a uniform number in [0, 1): `(word >> 11) / 2^53`.
pub fn unit_of(word: u64) -> f64 {
    let bits = (word >> 11) as f64;
    bits / 9_007_199_254_740_992.0
}

/// What an environment draw is for: a draw for one purpose never shares its
/// value with a draw for another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Purpose {
    /// The gap before the call arrives (exponential).
    Arrival,
    /// Whether the call is doomed.
    Doom,
    /// Whether the attempt succeeds.
    Success,
    /// The error class of a failed attempt.
    Class,
    /// The first uniform of the attempt's latency.
    Latency,
    /// The second uniform of the attempt's latency (Box–Muller).
    LatencyPair,
    /// The shard a call goes to (S8).
    Shard,
}

impl Purpose {
    const fn code(self) -> u64 {
        match self {
            Purpose::Arrival => 1,
            Purpose::Doom => 2,
            Purpose::Success => 3,
            Purpose::Class => 4,
            Purpose::Latency => 5,
            Purpose::LatencyPair => 6,
            Purpose::Shard => 7,
        }
    }
}

/// The environment's luck for one seed and one scenario.
///
/// `unit(call, attempt, purpose)` is
/// `unit_of(fold(fold(fold(fold(seed, scenario), call), attempt), purpose))`:
/// every policy run on the same seed and scenario sees the same value for the
/// same attempt of the same call, whatever it did before.
#[derive(Clone, Copy, Debug)]
pub struct Luck {
    key: u64,
}

impl Luck {
    /// The luck of `seed` in the scenario numbered `scenario`.
    pub const fn new(seed: u64, scenario: u64) -> Luck {
        Luck {
            key: fold(seed, scenario),
        }
    }

    /// A uniform number in [0, 1) for this call, attempt (0 for per-call draws)
    /// and purpose.
    pub fn unit(&self, call: u64, attempt: u32, purpose: Purpose) -> f64 {
        let key = fold(
            fold(fold(self.key, call), u64::from(attempt)),
            purpose.code(),
        );
        unit_of(key)
    }
}

/// A policy's own randomness: the `n`th draw of stream `(seed, policy)`.
#[derive(Debug, Clone)]
pub struct PolicyStream {
    key: u64,
    next: u64,
}

impl PolicyStream {
    /// The stream of `policy` (a name) under `seed`.
    pub fn new(seed: u64, policy: &str) -> PolicyStream {
        PolicyStream {
            key: fold(seed ^ 0x5EED_5EED_5EED_5EED, name_hash(policy)),
            next: 0,
        }
    }

    /// The seed a policy with its own generator is built with.
    pub const fn seed(&self) -> u64 {
        self.key
    }

    /// The next uniform number in [0, 1) (decision id = the draw's index).
    pub fn unit(&mut self) -> f64 {
        let word = fold(self.key, self.next);
        self.next = self.next.wrapping_add(1);
        unit_of(word)
    }
}

/// FNV-1a of a name, to key a stream by a policy's name.
pub(crate) fn name_hash(name: &str) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01B3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_key_gives_the_same_value_and_neighbours_differ() {
        let luck = Luck::new(1, 2);
        let a = luck.unit(7, 1, Purpose::Success);
        assert_eq!(
            a.to_bits(),
            Luck::new(1, 2).unit(7, 1, Purpose::Success).to_bits()
        );
        assert_ne!(a, luck.unit(7, 2, Purpose::Success));
        assert_ne!(a, luck.unit(8, 1, Purpose::Success));
        assert_ne!(a, luck.unit(7, 1, Purpose::Class));
        assert_ne!(a, Luck::new(2, 2).unit(7, 1, Purpose::Success));
    }

    #[test]
    fn units_are_uniform_enough() {
        let luck = Luck::new(3, 1);
        let n = 20_000_u64;
        let mut sum = 0.0;
        for i in 0..n {
            let u = luck.unit(i, 0, Purpose::Doom);
            assert!((0.0..1.0).contains(&u));
            sum += u;
        }
        let mean = sum / n as f64;
        // sd of the mean: sqrt(1/12 / n) = 0.002
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
    }

    #[test]
    fn the_top_53_bits_map_onto_the_unit_interval() {
        assert_eq!(unit_of(0), 0.0);
        assert!(unit_of(u64::MAX) < 1.0);
        assert_eq!(unit_of(1 << 63), 0.5);
    }
}
