//! SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
//! generators", OOPSLA 2014): the generator the iterator form is seeded with, and
//! the mixer behind hash jitter. Its finaliser is a bijection on `u64` that sends
//! nearby inputs (keys 1, 2, 3, attempts 4, 5, 6) to unrelated outputs, which is
//! exactly what spreading many clients' retries apart needs. It is not a
//! cryptographic generator, and jitter does not need one.

/// The SplitMix64 increment: 2^64 divided by the golden ratio, made odd.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 finaliser (Stafford's "Mix13" variant of the MurmurHash3 mixer).
#[inline]
pub(crate) const fn mix(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The random word of hash jitter for `key` at `attempt`: output number `attempt`
/// of the SplitMix64 sequence whose seed is `key`, mixed first so that consecutive
/// keys start unrelated sequences.
#[inline]
pub(crate) const fn keyed(key: u64, attempt: u32) -> u64 {
    mix(mix(key).wrapping_add(GAMMA.wrapping_mul(attempt as u64)))
}

/// 64-bit FNV-1a of `bytes`, mixed: turns a name (a client id, a host) into a key.
pub(crate) const fn key_of(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    mix(hash)
}

/// A SplitMix64 generator: 8 bytes of state, seeded by the caller.
#[derive(Clone, Debug)]
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub(crate) const fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix(self.state)
    }
}

#[cfg(test)]
mod tests {
    use super::{SplitMix64, key_of, keyed};

    #[test]
    fn matches_the_published_splitmix64_sequence() {
        // The first outputs for seed 1234567, as listed with Vigna's reference
        // implementation (prng.di.unimi.it/splitmix64.c).
        let mut rng = SplitMix64::new(1_234_567);
        let got = [rng.next_u64(), rng.next_u64(), rng.next_u64()];
        assert_eq!(
            got,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423,
            ]
        );
    }

    #[test]
    fn keyed_words_differ_across_keys_and_attempts() {
        assert_ne!(keyed(1, 1), keyed(2, 1));
        assert_ne!(keyed(1, 1), keyed(1, 2));
        assert_eq!(keyed(7, 3), keyed(7, 3));
        assert_ne!(key_of(b"client-1"), key_of(b"client-2"));
    }
}
