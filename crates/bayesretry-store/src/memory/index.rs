//! [`Index`]: the table a shard finds a context's slot in, from its hash.
//!
//! Every read and every observe goes through this lookup, so it is built for
//! that one job rather than taken from a general hash table. Each bucket is a
//! single `u64`: the low 32 bits of the key's hash above the slot number plus
//! one (0 marks an empty bucket). A lookup starts at the bucket the hash's low
//! bits pick and walks forward (linear probing) until it meets an empty
//! bucket; a bucket whose 32 hash bits differ from the key's is passed over
//! without touching the slot, so the key's equality — attempt, class, and the
//! endpoint's bytes — is checked only on a bucket that almost surely holds it.
//! The equality is a generic closure, inlined into the lookup. (A general
//! table such as `hashbrown`'s reaches its equality through a `dyn FnMut`,
//! an indirect call that cannot be inlined, on every probe.)
//!
//! The buckets stay at most three quarters full, so a probe sequence is short
//! and lies on one or two cache lines. Removing a key shifts the buckets after
//! it back into the hole (backward-shift deletion), so there are no tombstones
//! and a table that sees many insertions and removals never slows down. Since
//! a bucket keeps its hash bits, growing and shifting never rehash a key.
//! Every probe loop stops after visiting each bucket once at most.

use alloc::vec;
use alloc::vec::Vec;
use core::mem::size_of;

/// The smallest table allocated.
const MIN_BUCKETS: usize = 8;

/// Slot numbers of a shard by the hash of their key; see the
/// [module documentation](self).
#[derive(Debug, Default)]
pub(crate) struct Index {
    /// A power of two in length, or empty.
    buckets: Vec<u64>,
    len: usize,
}

/// The bucket holding slot `at` under a hash whose low 32 bits are `tag`.
#[inline]
fn entry(tag: u32, at: u32) -> u64 {
    (u64::from(tag) << 32) | u64::from(at.wrapping_add(1))
}

impl Index {
    /// The slots filed under a hash with the same low 32 bits as `hash`, in
    /// probe order: the candidates for the key whose hash it is, to be checked
    /// by the caller.
    #[inline(always)]
    pub(crate) fn candidates(&self, hash: u64) -> Candidates<'_> {
        let tag = hash as u32;
        let mask = self.buckets.len().wrapping_sub(1);
        Candidates {
            buckets: &self.buckets,
            mask,
            pos: tag as usize & mask,
            tag,
            left: self.buckets.len(),
        }
    }

    /// The slot whose key has hash `hash` and for which `eq` holds, if any.
    #[cfg(test)]
    fn find(&self, hash: u64, mut eq: impl FnMut(u32) -> bool) -> Option<u32> {
        self.candidates(hash).find(|&at| eq(at))
    }

    /// Files slot `at` under `hash`; the caller has checked that its key is
    /// not in the table.
    pub(crate) fn insert(&mut self, hash: u64, at: u32) {
        if (self.len + 1) * 4 > self.buckets.len() * 3 {
            self.grow();
        }
        self.put(entry(hash as u32, at));
        self.len += 1;
    }

    /// Takes slot `at`, filed under `hash`, out of the table.
    pub(crate) fn remove(&mut self, hash: u64, at: u32) {
        let mask = self.buckets.len().wrapping_sub(1);
        let wanted = entry(hash as u32, at);
        let mut hole = hash as u32 as usize & mask;
        let mut found = false;
        for _ in 0..self.buckets.len() {
            match self.buckets.get(hole).copied() {
                Some(bucket) if bucket == wanted => {
                    found = true;
                    break;
                }
                Some(0) | None => return,
                Some(_) => hole = (hole + 1) & mask,
            }
        }
        if !found {
            return;
        }
        self.len -= 1;
        // Shift back every bucket after the hole that may move to it: one whose
        // home is not between the hole and where it lies.
        let mut next = (hole + 1) & mask;
        for _ in 0..self.buckets.len() {
            let bucket = self.buckets.get(next).copied().unwrap_or(0);
            if bucket == 0 {
                break;
            }
            let home = (bucket >> 32) as usize & mask;
            if next.wrapping_sub(home) & mask >= next.wrapping_sub(hole) & mask {
                if let Some(h) = self.buckets.get_mut(hole) {
                    *h = bucket;
                }
                hole = next;
            }
            next = (next + 1) & mask;
        }
        if let Some(h) = self.buckets.get_mut(hole) {
            *h = 0;
        }
    }

    /// Heap bytes held.
    pub(crate) fn allocation_size(&self) -> usize {
        self.buckets.capacity() * size_of::<u64>()
    }

    /// Puts `bucket` in the first empty bucket from its home on.
    fn put(&mut self, bucket: u64) {
        let mask = self.buckets.len().wrapping_sub(1);
        let mut pos = (bucket >> 32) as usize & mask;
        for _ in 0..self.buckets.len() {
            match self.buckets.get_mut(pos) {
                Some(b) if *b == 0 => {
                    *b = bucket;
                    return;
                }
                Some(_) => pos = (pos + 1) & mask,
                None => return,
            }
        }
    }

    /// Doubles the table, refiling every bucket from the hash bits it keeps.
    fn grow(&mut self) {
        let size = (self.buckets.len() * 2).max(MIN_BUCKETS);
        let old = core::mem::replace(&mut self.buckets, vec![0; size]);
        for bucket in old.into_iter().filter(|&b| b != 0) {
            self.put(bucket);
        }
    }
}

/// The iterator of [`Index::candidates`]: it walks the probe sequence from
/// the hash's home bucket to the first empty one, at most once round the table.
#[derive(Debug)]
pub(crate) struct Candidates<'a> {
    buckets: &'a [u64],
    mask: usize,
    pos: usize,
    tag: u32,
    /// Buckets not yet visited.
    left: usize,
}

impl Iterator for Candidates<'_> {
    type Item = u32;

    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        while self.left > 0 {
            self.left -= 1;
            let bucket = self.buckets.get(self.pos).copied().unwrap_or(0);
            if bucket == 0 {
                self.left = 0;
                return None;
            }
            self.pos = (self.pos + 1) & self.mask;
            if (bucket >> 32) as u32 == self.tag {
                return Some((bucket as u32).wrapping_sub(1));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;

    use proptest::prelude::*;
    use std::collections::HashMap;

    use super::Index;

    /// Hashes crowded into few homes, so that probe runs are long and wrap.
    fn crowded(key: u32) -> u64 {
        u64::from(key % 7).wrapping_mul(0x9E37_79B9) ^ (u64::from(key) << 40)
    }

    proptest! {
        /// Any sequence of insertions and removals leaves the table finding
        /// exactly what a `HashMap` holds, with hashes that collide a lot.
        #[test]
        fn the_index_agrees_with_a_map(ops in proptest::collection::vec((0_u32..64, any::<bool>()), 0..400)) {
            let mut index = Index::default();
            let mut map: HashMap<u32, u32> = HashMap::new();
            let mut next_slot = 0_u32;
            for (key, insert) in ops {
                let hash = crowded(key);
                if insert && !map.contains_key(&key) {
                    index.insert(hash, next_slot);
                    map.insert(key, next_slot);
                    next_slot += 1;
                } else if !insert {
                    if let Some(at) = map.remove(&key) {
                        index.remove(hash, at);
                    }
                }
                for k in 0..64_u32 {
                    let found = index.find(crowded(k), |at| map.get(&k) == Some(&at));
                    prop_assert_eq!(found, map.get(&k).copied());
                }
                prop_assert_eq!(index.len, map.len());
                let full: Vec<_> = index.buckets.iter().filter(|&&b| b != 0).collect();
                prop_assert_eq!(full.len(), map.len());
            }
        }
    }
}
