//! The hash the in-memory store files its keys under: fast, keyed per store.
//!
//! Every lookup hashes an endpoint name, so the hash must be cheap on short
//! strings; keys may come from untrusted input, so it is keyed with a per-store
//! random seed, and it mixes every input bit into the low bits (which pick the
//! bucket) and the high bits (which pick the shard and the table's control tag)
//! alike. It is the folded 64×64→128-bit multiply of wyhash and foldhash, written
//! out here in a few lines rather than taken as a dependency. It is not a
//! cryptographic hash; the store bounds its size whatever the keys do.

/// Two odd constants with well-spread bits (from wyhash).
const P0: u64 = 0xa076_1d64_78bd_642f;
const P1: u64 = 0xe703_7ed1_a0b4_28db;

/// The high and low halves of the 128-bit product, folded together.
#[inline]
fn fold_mul(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64)
}

/// The hash of a byte string under `seed`: sixteen bytes per multiply, every
/// read a fixed-size load (the tail is read as two overlapping words, as wyhash
/// does), so no call to `memcpy` for short names.
#[inline(always)]
pub(crate) fn hash_bytes(seed: u64, bytes: &[u8]) -> u64 {
    let len = bytes.len();
    let mut h = seed ^ P0 ^ (len as u64).wrapping_mul(P1);
    let mut chunks = bytes.chunks_exact(16);
    for chunk in &mut chunks {
        h = fold_mul(read8(chunk, 0) ^ h ^ P0, read8(chunk, 8) ^ P1);
    }
    let rest = chunks.remainder();
    let n = rest.len();
    let (a, b) = if n >= 8 {
        (read8(rest, 0), read8(rest, n - 8))
    } else if n >= 4 {
        (read4(rest, 0), read4(rest, n - 4))
    } else if n > 0 {
        let [first, middle, last] =
            [0, n / 2, n - 1].map(|i| u64::from(rest.get(i).copied().unwrap_or(0)));
        ((first << 16) | (middle << 8) | last, 0)
    } else {
        (0, 0)
    };
    h = fold_mul(a ^ h ^ P1, b ^ P0);
    fold_mul(h ^ P1, seed ^ P0)
}

/// The eight bytes at `at`, little-endian (0 if out of range, which the
/// callers never ask for).
#[inline]
fn read8(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// The four bytes at `at`, little-endian.
#[inline]
fn read4(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map_or(0, |b| u64::from(u32::from_le_bytes(b)))
}

/// Mixes two words into a hash already computed.
#[inline]
pub(crate) fn hash_words(h: u64, a: u64, b: u64) -> u64 {
    fold_mul(h ^ a.wrapping_mul(P0), b ^ P1)
}

#[cfg(test)]
mod tests {
    use super::{hash_bytes, hash_words};

    #[test]
    fn every_byte_and_the_seed_matter() {
        let base = hash_bytes(1, b"api.example.com/v1");
        assert_ne!(base, hash_bytes(2, b"api.example.com/v1"));
        assert_ne!(base, hash_bytes(1, b"api.example.com/v2"));
        assert_ne!(base, hash_bytes(1, b"bpi.example.com/v1"));
        assert_ne!(hash_bytes(1, b""), hash_bytes(1, b"\0"));
        assert_ne!(hash_bytes(1, b"a\0"), hash_bytes(1, b"a"));
        assert_ne!(hash_words(base, 1, 2), hash_words(base, 2, 1));
    }

    #[test]
    fn low_and_high_bits_spread() {
        // 4096 names that differ in one digit land in many buckets and shards.
        let mut low = [false; 256];
        let mut high = [false; 64];
        for i in 0..4096_u32 {
            let h = hash_bytes(7, alloc::format!("host-{i}").as_bytes());
            low[(h & 255) as usize] = true;
            high[(h >> 58) as usize] = true;
        }
        assert!(low.iter().filter(|&&b| b).count() > 250);
        assert!(high.iter().all(|&b| b));
    }
}
