//! The random words of the jitter and the Thompson draws: SplitMix64 over a shared counter, drawn by each
//! thread from blocks of it that the thread reserves.

use core::cell::Cell;
use core::sync::atomic::{AtomicU64, Ordering};

/// The golden-ratio increment of SplitMix64.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// Words a thread reserves from a policy's counter at a time.
const BLOCK: u64 = 64;

/// The source of every policy's id: one per policy built, never reused.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A seedable source of random words, shared by every call of a policy.
///
/// The words are SplitMix64's: the `k`-th is the mix of `seed + k·γ`. A shared
/// atomic counter would hand them out one by one, at the price of an atomic
/// read-modify-write per draw — which also waits for every store before it — on
/// a line every thread writes. Instead each thread reserves a block of
/// [`BLOCK`] counter values with one atomic add and draws from it with plain
/// loads and stores of its own, until the block runs out or the thread draws
/// for another policy (each thread keeps the block of the last policy it drew
/// for; the rest of an abandoned block is never drawn).
///
/// So blocks never overlap and two draws never give the same word, on any
/// threads; and a policy drawn on one thread at a time, with no other policy's
/// draws in between, gives exactly the sequence of a plain SplitMix64 from its
/// seed: one seed replays one sequence, whatever the block size. A thread
/// that interleaves the draws of two policies still replays one sequence from
/// the same seeds in the same order.
#[derive(Debug)]
pub(crate) struct SplitMix {
    /// The policy's id: which block a thread's block is.
    id: u64,
    /// The counter value before the next unreserved block.
    state: AtomicU64,
}

/// The block a thread draws from: the id of its policy, the counter value it
/// drew last and the last one it may draw. An id of 0 (no policy's) is no block.
#[derive(Clone, Copy)]
struct Block {
    id: u64,
    at: u64,
    end: u64,
}

std::thread_local! {
    static BLOCK_OF_THREAD: Cell<Block> = const { Cell::new(Block { id: 0, at: 0, end: 0 }) };
}

impl SplitMix {
    pub(crate) fn new(seed: u64) -> SplitMix {
        SplitMix {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            state: AtomicU64::new(seed),
        }
    }

    /// The next random word.
    #[inline]
    pub(crate) fn next_u64(&self) -> u64 {
        let block = BLOCK_OF_THREAD.with(Cell::get);
        let block = match block.id == self.id && block.at != block.end {
            true => block,
            false => self.reserve(),
        };
        let at = block.at.wrapping_add(GAMMA);
        BLOCK_OF_THREAD.with(|cell| cell.set(Block { at, ..block }));
        mix(at)
    }

    /// A fresh block of the counter for the calling thread.
    #[cold]
    fn reserve(&self) -> Block {
        let span = GAMMA.wrapping_mul(BLOCK);
        let at = self.state.fetch_add(span, Ordering::Relaxed);
        Block {
            id: self.id,
            at,
            end: at.wrapping_add(span),
        }
    }
}

/// The policy's words as a [`rand_core::Rng`], for a Thompson draw
/// ([`bayesretry_beta::Beta::sample`] through the decision engine): the
/// sampler takes as many words as its rejection steps need, from the same
/// sequence as the jitter.
pub(crate) struct Draws<'a>(&'a SplitMix);

impl<'a> Draws<'a> {
    pub(crate) fn of(rng: &'a SplitMix) -> Draws<'a> {
        Draws(rng)
    }
}

impl rand_core::TryRng for Draws<'_> {
    type Error = core::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        // the high half: SplitMix's best-mixed bits
        Ok(u32::try_from(self.0.next_u64() >> 32).unwrap_or(u32::MAX))
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(self.0.next_u64())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        // bounded by the slice: one word per eight bytes
        for chunk in dst.chunks_mut(8) {
            let word = self.0.next_u64().to_le_bytes();
            chunk.copy_from_slice(&word[..chunk.len()]);
        }
        Ok(())
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
    use std::collections::HashSet;

    use rand_core::Rng;

    use super::{BLOCK, Draws, GAMMA, SplitMix, mix};

    #[test]
    fn one_seed_replays_one_sequence_and_draws_take_from_it() {
        let a = SplitMix::new(7);
        let b = SplitMix::new(7);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        // a draw's words are the next words of the policy's one sequence
        let rng = SplitMix::new(7);
        let word = |k: u64| mix(7_u64.wrapping_add(k.wrapping_mul(GAMMA)));
        let mut k = 0;
        for _ in 0..100 {
            k += 1;
            assert_eq!(Draws::of(&rng).next_u32(), (word(k) >> 32) as u32);
            k += 1;
            assert_eq!(Draws::of(&rng).next_u64(), word(k));
            let mut bytes = [0_u8; 11];
            Draws::of(&rng).fill_bytes(&mut bytes);
            assert_eq!(bytes[..8], word(k + 1).to_le_bytes());
            assert_eq!(bytes[8..], word(k + 2).to_le_bytes()[..3]);
            k += 2;
        }
    }

    #[test]
    fn one_policy_on_one_thread_draws_plain_splitmix_across_blocks() {
        let rng = SplitMix::new(7);
        for k in 1..=3 * BLOCK + 5 {
            assert_eq!(
                rng.next_u64(),
                mix(7_u64.wrapping_add(k.wrapping_mul(GAMMA)))
            );
        }
    }

    #[test]
    fn threads_and_interleaved_policies_never_draw_the_same_word() {
        let rng = SplitMix::new(7);
        let other = SplitMix::new(7);
        let words: Vec<u64> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(|| {
                        (0..500)
                            .map(|i| {
                                if i % 7 == 0 {
                                    // another policy's draw abandons this thread's block
                                    let _ = other.next_u64();
                                }
                                rng.next_u64()
                            })
                            .collect::<Vec<u64>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|handle| handle.join().unwrap())
                .collect()
        });
        let distinct: HashSet<u64> = words.iter().copied().collect();
        assert_eq!(distinct.len(), words.len());
    }
}
