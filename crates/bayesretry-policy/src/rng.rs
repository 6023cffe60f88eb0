//! The jitter's random words: SplitMix64 over an atomic counter.

use core::sync::atomic::{AtomicU64, Ordering};

/// The golden-ratio increment of SplitMix64.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// A seedable, lock-free source of random words, shared by every call of a
/// policy. Each draw advances a counter by SplitMix64's increment and mixes it, so
/// concurrent calls never draw the same word, and one seed replays one sequence.
#[derive(Debug)]
pub(crate) struct SplitMix {
    state: AtomicU64,
}

impl SplitMix {
    pub(crate) const fn new(seed: u64) -> SplitMix {
        SplitMix {
            state: AtomicU64::new(seed),
        }
    }

    /// The next random word.
    pub(crate) fn next_u64(&self) -> u64 {
        let z = self
            .state
            .fetch_add(GAMMA, Ordering::Relaxed)
            .wrapping_add(GAMMA);
        mix(z)
    }

    /// A uniform number in (0, 1), for a Thompson draw.
    pub(crate) fn next_unit(&self) -> f64 {
        // 53 random bits, shifted half a step off zero
        #[expect(clippy::cast_precision_loss, reason = "53-bit values are exact in f64")]
        let bits = (self.next_u64() >> 11) as f64;
        (bits + 0.5) / (1_u64 << 53) as f64
    }
}

/// SplitMix64's finaliser.
pub(crate) const fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seed for a policy built without one: the time and a per-process address.
pub(crate) fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let local = 0_u8;
    let address = core::ptr::addr_of!(local) as usize as u64;
    #[expect(
        clippy::cast_possible_truncation,
        reason = "only the low bits are mixed"
    )]
    mix((nanos as u64) ^ address.rotate_left(32))
}

#[cfg(test)]
mod tests {
    use super::SplitMix;

    #[test]
    fn one_seed_replays_one_sequence_and_units_stay_open() {
        let a = SplitMix::new(7);
        let b = SplitMix::new(7);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
            let u = a.next_unit();
            assert!(u > 0.0 && u < 1.0);
            let _ = b.next_unit();
        }
    }
}
