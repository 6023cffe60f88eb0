//! [`Board`]: where shards post their share of each class for the other shards.

use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::hint::spin_loop;
use core::mem::size_of;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering, fence};

use bayesretry_decay::{Decay, Evidence, Stamped};
use hashbrown::HashTable;

use crate::class::{ClassRef, OwnedClass};
use crate::error_class::ErrorClass;

/// The most classes the board tells apart (the same bound as a shard's); past
/// it, new classes are filed as [`ErrorClass::Unknown`].
pub(crate) const MAX_CLASSES: usize = 1_024;

/// How many times a reader tries to read a slot that its writer keeps
/// changing before it gives up on it. A write takes nanoseconds and a shard
/// writes a class's slot once per outcome, so a reader needs a second try now
/// and then; the cap is there so that no loop is unbounded. A reader can still
/// exhaust it when the writing thread is descheduled in the middle of a write
/// (the version stays odd for a whole time slice): it then takes that shard's
/// share as empty for this one read — never a half-written one, whose counts
/// would belong to no moment. The class-level view is a prior that the next
/// read refreshes, so a share missed once costs nothing lasting.
const READ_TRIES: u32 = 1_000;

/// One shard's share of one class: a sequence lock over three words, alone on
/// its cache line. Only the shard that owns it writes it, under that shard's
/// mutex; any shard reads it, without a lock.
#[repr(align(64))]
#[derive(Debug, Default)]
struct Slot {
    /// Odd while a write is under way.
    version: AtomicU64,
    successes: AtomicU64,
    failures: AtomicU64,
    at_ms: AtomicU64,
}

impl Slot {
    fn write(&self, value: Stamped) {
        let version = self.version.load(Ordering::Relaxed);
        self.version
            .store(version.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        let e = value.evidence();
        self.successes
            .store(e.successes().to_bits(), Ordering::Relaxed);
        self.failures
            .store(e.failures().to_bits(), Ordering::Relaxed);
        self.at_ms.store(value.at_ms(), Ordering::Relaxed);
        self.version
            .store(version.wrapping_add(2), Ordering::Release);
    }

    /// Whether the slot has ever been written (or a first write is under way).
    ///
    /// A slot never written holds the zeros it was made with, which read as
    /// empty: its version alone says so, in one load instead of a read's five
    /// and a fence. A class's posting has a slot per shard, and a shard's
    /// refresh sums all the others', most of them never written where the
    /// endpoints are fewer than the shards (32 by default); skipping those
    /// leaves every sum as it was, empty shares adding nothing.
    #[inline]
    fn written(&self) -> bool {
        self.version.load(Ordering::Relaxed) != 0
    }

    /// The share, or [`Stamped::EMPTY`] for a slot never written (see
    /// [`written`](Slot::written)).
    fn read(&self) -> Stamped {
        for _ in 0..READ_TRIES {
            let before = self.version.load(Ordering::Acquire);
            if before == 0 {
                return Stamped::EMPTY;
            }
            let successes = f64::from_bits(self.successes.load(Ordering::Relaxed));
            let failures = f64::from_bits(self.failures.load(Ordering::Relaxed));
            let at_ms = self.at_ms.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            let after = self.version.load(Ordering::Relaxed);
            if before == after && before % 2 == 0 {
                return Stamped::new(Evidence::new_lenient(successes, failures), at_ms);
            }
            spin_loop();
        }
        // never consistent: the writer is stalled mid-write (see READ_TRIES)
        Stamped::EMPTY
    }
}

/// One class's shares, one slot per shard.
#[derive(Debug)]
pub(crate) struct Posting {
    class: OwnedClass,
    word: u64,
    slots: Box<[Slot]>,
}

impl Posting {
    /// Posts `shard`'s share (called by that shard only, under its lock).
    #[inline]
    pub(crate) fn post(&self, shard: usize, share: Stamped) {
        if let Some(slot) = self.slots.get(shard) {
            slot.write(share);
        }
    }

    /// The sum of every shard's share but `shard`'s, as of `now_ms` (or the
    /// latest share's stamp, if later).
    pub(crate) fn others(&self, shard: usize, now_ms: u64, decay: &Decay) -> Stamped {
        sum(
            self.slots
                .iter()
                .enumerate()
                .filter(|&(i, slot)| i != shard && slot.written())
                .map(|(_, slot)| slot.read()),
            now_ms,
            decay,
        )
    }

    /// The sum of every shard's share, as of `now_ms`.
    fn total(&self, now_ms: u64, decay: &Decay) -> Evidence {
        let all = sum(
            self.slots.iter().filter(|s| s.written()).map(Slot::read),
            now_ms,
            decay,
        );
        decay.evidence_at(all, now_ms)
    }
}

/// Every class's postings. A shard posts its share of a class on every change
/// (a few atomic stores to a cache line only it writes) and reads the other
/// shards' shares without a lock when its view is due for a refresh. The mutex
/// around the board is taken only to add a class, and to read a class a shard
/// has never seen.
#[derive(Debug)]
pub(crate) struct Board {
    postings: Vec<Arc<Posting>>,
    index: HashTable<u32>,
    shards: usize,
    /// `postings.len()`, readable without the board's lock.
    len: Arc<AtomicUsize>,
}

impl Board {
    pub(crate) fn new(shards: usize) -> Board {
        Board {
            postings: Vec::new(),
            index: HashTable::new(),
            shards,
            len: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// A counter of the classes on the board, shared with the shards.
    pub(crate) fn len_counter(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.len)
    }

    fn find(&self, word: u64, class: ClassRef<'_>) -> Option<&Arc<Posting>> {
        let postings = &self.postings;
        self.index
            .find(word, |&at| {
                postings
                    .get(at as usize)
                    .is_some_and(|p| p.class.as_ref() == class)
            })
            .and_then(|&at| postings.get(at as usize))
    }

    /// The posting of `class`, made if need be; `None` when the board is full
    /// and does not know the class.
    pub(crate) fn intern(&mut self, word: u64, class: ClassRef<'_>) -> Option<Arc<Posting>> {
        if let Some(posting) = self.find(word, class) {
            return Some(Arc::clone(posting));
        }
        let unknown = class == ClassRef::Builtin(ErrorClass::Unknown);
        if self.postings.len() >= MAX_CLASSES && !unknown {
            return None;
        }
        let posting = Arc::new(Posting {
            class: class.to_owned_class(),
            word,
            slots: (0..self.shards).map(|_| Slot::default()).collect(),
        });
        self.postings.push(Arc::clone(&posting));
        let at = (self.postings.len() - 1) as u32;
        let postings = &self.postings;
        self.index.insert_unique(word, at, |&other| {
            postings.get(other as usize).map_or(0, |p| p.word)
        });
        self.len.store(self.postings.len(), Ordering::Relaxed);
        Some(posting)
    }

    /// The evidence every shard posted for `class`, as of `now_ms`: for a shard
    /// that has never seen the class.
    pub(crate) fn total(
        &self,
        word: u64,
        class: ClassRef<'_>,
        now_ms: u64,
        decay: &Decay,
    ) -> Evidence {
        self.find(word, class)
            .map_or(Evidence::NONE, |posting| posting.total(now_ms, decay))
    }

    /// Forgets what `shard` posted (called under that shard's lock).
    pub(crate) fn clear_shard(&self, shard: usize) {
        for posting in &self.postings {
            posting.post(shard, Stamped::EMPTY);
        }
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.postings.capacity() * size_of::<Arc<Posting>>()
            + self
                .postings
                .iter()
                .map(|p| {
                    size_of::<Posting>()
                        + 2 * size_of::<usize>()
                        + p.slots.len() * size_of::<Slot>()
                        + p.class.heap_bytes()
                })
                .sum::<usize>()
            + self.index.allocation_size()
    }
}

/// The sum of stamped evidence, as of the latest of `now_ms` and their stamps.
fn sum(parts: impl Iterator<Item = Stamped>, now_ms: u64, decay: &Decay) -> Stamped {
    parts
        .filter(|s| !s.evidence().is_none())
        .fold(Stamped::new(Evidence::NONE, now_ms), |total, part| {
            decay.combine(total, part)
        })
}

#[cfg(test)]
mod tests {
    use alloc::vec;
    use alloc::vec::Vec;
    use std::thread;

    use bayesretry_decay::{Decay, Evidence, Stamped};

    use super::{Board, Slot};
    use crate::class::ClassRef;
    use crate::error_class::ErrorClass;

    #[test]
    fn readers_never_see_a_torn_share() {
        let mut board = Board::new(2);
        let class = ClassRef::Builtin(ErrorClass::Timeout);
        let posting = board.intern(7, class).unwrap();
        thread::scope(|s| {
            s.spawn(|| {
                for i in 0..200_000_u64 {
                    let n = i as f64;
                    posting.post(0, Stamped::new(Evidence::new(n, 2.0 * n).unwrap(), i));
                }
            });
            for _ in 0..20_000 {
                let seen = posting.others(1, 0, &Decay::never());
                let e = seen.evidence();
                // Written together, read together: failures are twice successes.
                assert_eq!(e.failures(), 2.0 * e.successes());
            }
        });
    }

    #[test]
    fn readers_racing_first_writes_read_whole_shares_and_all_of_them_at_the_end() {
        use core::sync::atomic::{AtomicUsize, Ordering};

        const WRITERS: usize = 3;
        const ROUNDS: u64 = 300;
        // a shard of its own for the readers, which no one writes
        let reader = WRITERS;
        let mut board = Board::new(WRITERS + 1);
        let postings: Vec<_> = (0..24_u16)
            .map(|k| {
                let class = ClassRef::Builtin(ErrorClass::Http(500 + k));
                board.intern(u64::from(k), class).unwrap()
            })
            .collect();
        let writing = AtomicUsize::new(WRITERS);
        thread::scope(|s| {
            for shard in 0..WRITERS {
                let (postings, writing) = (&postings, &writing);
                s.spawn(move || {
                    // every slot starts never written: the first round races
                    // the readers' skip of version 0, the later ones their
                    // reads of a slot being rewritten
                    for n in 1..=ROUNDS {
                        for posting in postings {
                            let e = Evidence::new(n as f64, 2.0 * n as f64).unwrap();
                            posting.post(shard, Stamped::new(e, n));
                        }
                        thread::yield_now();
                    }
                    writing.fetch_sub(1, Ordering::Release);
                });
            }
            for _ in 0..2 {
                let (postings, writing) = (&postings, &writing);
                s.spawn(move || {
                    let mut last = vec![0.0_f64; postings.len()];
                    loop {
                        let done = writing.load(Ordering::Acquire) == 0;
                        for (posting, last) in postings.iter().zip(&mut last) {
                            let e = posting.others(reader, 0, &Decay::never()).evidence();
                            // whole shares only: a torn one breaks the ratio.
                            // A sum may fall for a moment (a writer stalled
                            // mid-write reads as empty, see READ_TRIES, and a
                            // machine that deschedules a thread can stall it
                            // anywhere), so what is checked for loss is the
                            // read once the writers are done
                            assert_eq!(e.failures(), 2.0 * e.successes());
                            *last = e.successes();
                        }
                        if done {
                            break;
                        }
                    }
                    let all = (WRITERS as u64 * ROUNDS) as f64;
                    assert!(last.iter().all(|&seen| seen == all), "{last:?}");
                });
            }
        });
        for (k, posting) in postings.iter().enumerate() {
            let class = ClassRef::Builtin(ErrorClass::Http(500 + k as u16));
            let total = board.total(k as u64, class, 0, &Decay::never());
            assert_eq!(total.successes(), (WRITERS as u64 * ROUNDS) as f64);
            assert_eq!(
                posting.others(0, 0, &Decay::never()).evidence().successes(),
                600.0
            );
        }
    }

    #[test]
    fn a_slot_whose_writer_stalls_mid_write_reads_as_empty_never_half_written() {
        use core::sync::atomic::Ordering;

        let slot = super::Slot::default();
        slot.write(Stamped::new(Evidence::new(3.0, 6.0).unwrap(), 5));
        assert_eq!(slot.read().evidence().successes(), 3.0);
        // a writer paused between its two version bumps, with one count
        // already new: every try sees an odd version
        slot.version.fetch_add(1, Ordering::Relaxed);
        slot.successes.store(9.0_f64.to_bits(), Ordering::Relaxed);
        let seen = slot.read();
        assert_eq!(seen.evidence().successes(), 0.0);
        assert_eq!(seen.evidence().failures(), 0.0);
        // the paused write completes: the new share is read whole
        slot.failures.store(18.0_f64.to_bits(), Ordering::Relaxed);
        slot.version.fetch_add(1, Ordering::Release);
        let seen = slot.read();
        assert_eq!(seen.evidence().successes(), 9.0);
        assert_eq!(seen.evidence().failures(), 18.0);
    }

    #[test]
    fn a_slot_never_written_reads_as_empty_and_a_written_one_in_full() {
        let slot = Slot::default();
        assert_eq!(slot.read(), Stamped::EMPTY);
        let share = Stamped::new(Evidence::new(1.0, 2.0).unwrap(), 5);
        slot.write(share);
        assert_eq!(slot.read(), share);
        // written back to nothing, it reads as nothing, in full
        slot.write(Stamped::EMPTY);
        assert_eq!(slot.read(), Stamped::EMPTY);
    }

    #[test]
    fn a_full_board_files_new_classes_as_unknown() {
        let mut board = Board::new(1);
        for status in 0..super::MAX_CLASSES as u16 {
            assert!(
                board
                    .intern(
                        u64::from(status),
                        ClassRef::Builtin(ErrorClass::Http(status))
                    )
                    .is_some()
            );
        }
        assert!(
            board
                .intern(9_999, ClassRef::Builtin(ErrorClass::Http(9_999)))
                .is_none()
        );
        assert!(
            board
                .intern(1 << 20, ClassRef::Builtin(ErrorClass::Unknown))
                .is_some()
        );
    }
}
