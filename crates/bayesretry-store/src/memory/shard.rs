//! [`Shard`]: one independently locked part of a [`MemoryStore`](super::MemoryStore).
//!
//! A shard holds every context of the endpoints that hash to it, with their
//! parents: the (endpoint, class) groups, and this shard's share of each class.
//! All of an endpoint's state is in one shard, so an observe takes one lock.
//!
//! Slot indices (`u32`) link the tables: a context names its group, its class
//! and (when it holds other writers' evidence) its remote set by index, a group
//! its name and class. Every index stored in a live slot points at a live slot
//! of the right table; the code keeps that invariant at each insertion and
//! removal, which is what makes the plain indexing below safe.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::mem::size_of;
use core::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use bayesretry_beta::Beta;
use bayesretry_decay::{Decay, Evidence, Stamped};
use hashbrown::HashTable;

use super::board::{self, Board, Posting};
use super::index::Index;
use super::names::Names;
use crate::class::{ClassRef, OwnedClass};
use crate::error_class::ErrorClass;
use crate::hash::{hash_bytes, hash_words};
use crate::hierarchy::borrowed_evidence;
use crate::name::same_bytes;
use crate::writer::WriterId;
#[cfg(feature = "serde")]
use crate::writer::cmp_versions;

/// No neighbour.
const NIL: u32 = u32::MAX;

/// The most classes a shard tells apart; past it, new classes are filed as
/// [`ErrorClass::Unknown`]. Classes are few by construction: this only guards
/// against a program that mints custom names at run time.
const MAX_CLASSES: usize = board::MAX_CLASSES;

/// What every shard of a store shares, read-only.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params {
    pub(crate) seed: u64,
    pub(crate) decay: Decay,
    pub(crate) prior: Beta,
    pub(crate) hierarchical: bool,
    pub(crate) max_borrowed: f64,
    pub(crate) refresh_ms: u64,
    pub(crate) writer: WriterId,
}

/// A context as a lookup names it, with its hashes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Key<'a> {
    pub(crate) endpoint: &'a str,
    pub(crate) name_hash: u64,
    pub(crate) attempt: u32,
    pub(crate) class: ClassRef<'a>,
    pub(crate) class_word: u64,
}

impl<'a> Key<'a> {
    #[inline(always)]
    pub(crate) fn new(seed: u64, endpoint: &'a str, attempt: u32, class: ClassRef<'a>) -> Key<'a> {
        Key::with_name_hash(
            seed,
            endpoint,
            hash_bytes(seed, endpoint.as_bytes()),
            attempt,
            class,
        )
    }

    /// The key, with `name_hash` taken as the hash of `endpoint`.
    #[inline(always)]
    pub(crate) fn with_name_hash(
        seed: u64,
        endpoint: &'a str,
        name_hash: u64,
        attempt: u32,
        class: ClassRef<'a>,
    ) -> Key<'a> {
        Key {
            endpoint,
            name_hash,
            attempt,
            class,
            class_word: class.word(seed),
        }
    }

    #[inline]
    fn hash(&self) -> u64 {
        context_hash(self.name_hash, self.class_word, self.attempt)
    }
}

/// One context: 64 bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ContextSlot {
    /// This store's own evidence.
    local: Stamped,
    /// The sequence number of `local`; 0 while this store has written none.
    seq: u64,
    name: u32,
    attempt: u32,
    class: u32,
    group: u32,
    /// The context updated just after this one (towards the head).
    newer: u32,
    /// The context updated just before this one (towards the tail).
    older: u32,
    /// Where other writers' evidence for this context is kept, in the
    /// shard's remote sets; [`NIL`] while it holds only this store's own.
    remote: u32,
}

/// An (endpoint, class) group: the running sum of its contexts' evidence.
#[derive(Clone, Copy, Debug)]
struct GroupSlot {
    sum: Stamped,
    name: u32,
    class: u32,
    /// Contexts in the group; 0 for a free slot.
    contexts: u32,
}

/// This shard's share of a class, and its view of the other shards' share.
#[derive(Debug)]
struct ClassSlot {
    class: OwnedClass,
    word: u64,
    /// The sum of this shard's contexts of the class.
    partial: Stamped,
    /// The other shards' evidence, as of the last refresh.
    others: Stamped,
    contexts: u32,
    refreshed_at: u64,
    /// Where this shard posts `partial` for the others, and reads theirs.
    posting: Arc<Posting>,
}

/// One writer's evidence for one context, with its sequence number.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct WriterEntry {
    pub(crate) seq: u64,
    pub(crate) stamped: Stamped,
}

#[cfg(feature = "serde")]
impl WriterEntry {
    /// Whether `self` wins over `other` in a merge; see [`cmp_versions`].
    pub(crate) fn beats(&self, other: &WriterEntry) -> bool {
        let version = |e: &WriterEntry| (e.seq, e.stamped.at_ms(), e.stamped.evidence());
        cmp_versions(version(self), version(other)).is_gt()
    }

    /// Whether `self` wins over `other` in a merge that clamps stamps
    /// ([`MemoryStore::merge_at`](crate::MemoryStore::merge_at)): the larger
    /// sequence number, and for one sequence number — one update of the
    /// writer, of which copies clamped at different moments circulate — the
    /// earlier stamp, the first moment any store took the update as arriving.
    /// A total order, so such merges do not depend on their order; and a copy
    /// whose stamp a store's clock has passed since is not news.
    pub(crate) fn beats_clamped(&self, other: &WriterEntry) -> bool {
        let version = |e: &WriterEntry| (e.seq, u64::MAX - e.stamped.at_ms(), e.stamped.evidence());
        cmp_versions(version(self), version(other)).is_gt()
    }
}

/// Other writers' evidence for one context, sorted by writer, with two sums
/// kept current so that a read costs the same as for a context with no other
/// writer: no per-read summing, no second decay factor.
///
/// Invariant: `sum` is the fold of `writers` in writer order, and `combined`
/// is `decay.combine(local, sum)` for the owning context's `local`. Every
/// write to either refreshes `combined` from them, so a read returns exactly
/// (bit for bit) what combining at read time would give.
#[derive(Debug, Default)]
struct RemoteSet {
    writers: Vec<(WriterId, WriterEntry)>,
    sum: Stamped,
    /// The context's whole evidence: its own `local` combined with `sum`.
    combined: Stamped,
}

impl RemoteSet {
    /// Brings `combined` up to date with `local` and `sum`.
    #[inline]
    fn recombine(&mut self, local: Stamped, decay: &Decay) {
        self.combined = decay.combine(local, self.sum);
    }

    /// The sum over writers, in writer order, so the same set always sums the
    /// same way whatever order it was merged in.
    #[cfg(feature = "serde")]
    fn resum(&mut self, decay: &Decay) {
        self.sum = self
            .writers
            .iter()
            .fold(Stamped::EMPTY, |sum, (_, e)| decay.combine(sum, e.stamped));
    }
}

/// When a merge happens: `now_ms` dates the contexts it makes, and evidence
/// stamped after `clamp_ms` is taken as stamped then.
#[cfg(feature = "serde")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct MergeTime {
    pub(crate) now_ms: u64,
    pub(crate) clamp_ms: u64,
    /// Evidence stamped before this is forgotten (0: none is): an incoming
    /// entry that old is not merged, and a held one no longer stands in the
    /// way of its writer's newer entry, whatever their sequence numbers.
    pub(crate) forget_before: u64,
}

/// One (context, writer) entry, as a shard lists it for a snapshot.
#[cfg(feature = "serde")]
#[derive(Debug)]
pub(crate) struct Listed<'a> {
    pub(crate) endpoint: &'a str,
    pub(crate) attempt: u32,
    pub(crate) class: &'a OwnedClass,
    pub(crate) writer: WriterId,
    pub(crate) entry: WriterEntry,
}

/// One shard.
#[derive(Debug)]
pub(crate) struct Shard {
    number: usize,
    capacity: usize,
    names: Names,
    classes: Vec<ClassSlot>,
    class_index: HashTable<u32>,
    groups: Vec<GroupSlot>,
    free_groups: Vec<u32>,
    group_index: HashTable<u32>,
    slots: Vec<ContextSlot>,
    index: Index,
    /// The most recently updated context.
    head: u32,
    /// The least recently updated context, the next to go.
    tail: u32,
    /// Other writers' evidence, for the contexts that have some; indexed by
    /// [`ContextSlot::remote`].
    remotes: Vec<RemoteSet>,
    /// Slots of `remotes` free for reuse (their writers cleared).
    free_remotes: Vec<u32>,
    seq: u64,
    /// How many classes the board holds.
    board_len: Arc<AtomicUsize>,
}

impl Shard {
    pub(crate) fn new(number: usize, capacity: usize, board_len: Arc<AtomicUsize>) -> Shard {
        Shard {
            number,
            capacity,
            board_len,
            names: Names::default(),
            classes: Vec::new(),
            class_index: HashTable::new(),
            groups: Vec::new(),
            free_groups: Vec::new(),
            group_index: HashTable::new(),
            slots: Vec::new(),
            index: Index::default(),
            head: NIL,
            tail: NIL,
            remotes: Vec::new(),
            free_remotes: Vec::new(),
            seq: 0,
        }
    }

    /// Contexts held.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Forgets everything (the board is cleared by the caller).
    pub(crate) fn clear(&mut self) {
        *self = Shard::new(self.number, self.capacity, Arc::clone(&self.board_len));
    }

    // ----- lookups -----------------------------------------------------------

    /// The slot of `key`'s context, if the shard holds it.
    #[inline(always)]
    #[allow(
        clippy::manual_find,
        reason = "a plain loop compiles to a tighter probe than `Iterator::find`"
    )]
    pub(crate) fn find(&self, key: &Key<'_>) -> Option<u32> {
        for at in self.index.candidates(key.hash()) {
            if self.holds(at, key) {
                return Some(at);
            }
        }
        None
    }

    /// Whether the context at `at` is `key`'s.
    #[inline(always)]
    fn holds(&self, at: u32, key: &Key<'_>) -> bool {
        let Some(slot) = self.slots.get(at as usize) else {
            return false;
        };
        if slot.attempt != key.attempt {
            return false;
        }
        let Some(class) = self.classes.get(slot.class as usize) else {
            return false;
        };
        same_class(class, key) && same_bytes(self.names.bytes(slot.name), key.endpoint.as_bytes())
    }

    fn find_class(&self, word: u64, class: ClassRef<'_>) -> Option<u32> {
        let classes = &self.classes;
        self.class_index
            .find(word, |&at| classes[at as usize].class.as_ref() == class)
            .copied()
    }

    fn find_group(&self, seed: u64, name: u32, class: u32) -> Option<u32> {
        let groups = &self.groups;
        self.group_index
            .find(group_hash(seed, name, class), |&at| {
                let g = &groups[at as usize];
                g.name == name && g.class == class
            })
            .copied()
    }

    /// The same key filed under [`ErrorClass::Unknown`], when the shard has no
    /// room for another class and does not know this one.
    fn overflowed<'k>(&self, key: &Key<'k>) -> Option<Key<'k>> {
        let full = self.classes.len() >= MAX_CLASSES
            || self.board_len.load(Ordering::Relaxed) >= MAX_CLASSES;
        if !full || self.find_class(key.class_word, key.class).is_some() {
            return None;
        }
        Some(Key {
            class: ClassRef::Builtin(ErrorClass::Unknown),
            class_word: ErrorClass::Unknown.code(),
            ..*key
        })
    }

    /// Where a key the table does not hold stands: `Ok(slot)` when it is
    /// filed under `Unknown` ([`overflowed`](Shard::overflowed)) and that
    /// context exists, otherwise `Err(key)` with the key to go on with (the
    /// filed one, or `key` itself).
    fn filed<'k>(&self, key: Key<'k>) -> Result<u32, Key<'k>> {
        match self.overflowed(&key) {
            Some(filed) => self.find(&filed).ok_or(filed),
            None => Err(key),
        }
    }

    // ----- reads -------------------------------------------------------------

    /// A context's own evidence, stamped: this store's plus other writers',
    /// as kept combined in its remote set.
    #[inline]
    fn contribution(&self, at: u32) -> Stamped {
        let slot = &self.slots[at as usize];
        if slot.remote == NIL {
            return slot.local;
        }
        self.remotes[slot.remote as usize].combined
    }

    /// The evidence of a class in every shard as of `now_ms`, refreshing this
    /// shard's view of the others when it is due.
    #[inline(always)]
    fn class_evidence(&mut self, class: u32, p: &Params, fader: &mut Fader<'_>) -> Evidence {
        let number = self.number;
        let slot = &mut self.classes[class as usize];
        if due(slot, p, fader.now_ms) {
            refresh(slot, number, p, fader.now_ms);
        }
        fader.fade(slot.partial).plus(fader.fade(slot.others))
    }

    /// What `key` borrows from its parents (nothing with hierarchical priors
    /// off) and its own evidence, at `now_ms`.
    #[inline]
    pub(crate) fn read(
        &mut self,
        key: Key<'_>,
        p: &Params,
        board: &Mutex<Board>,
        now_ms: u64,
    ) -> (Evidence, Evidence) {
        match self.find(&key) {
            Some(at) => self.read_known(at, p, now_ms),
            None => self.read_unknown(key, p, board, now_ms),
        }
    }

    /// [`read`](Shard::read) of a key not in the table: filed under
    /// `Unknown`, or never seen.
    #[cold]
    #[inline(never)]
    pub(crate) fn read_unknown(
        &mut self,
        key: Key<'_>,
        p: &Params,
        board: &Mutex<Board>,
        now_ms: u64,
    ) -> (Evidence, Evidence) {
        let key = match self.filed(key) {
            Ok(at) => return self.read_known(at, p, now_ms),
            Err(key) => key,
        };
        if !p.hierarchical {
            return (Evidence::NONE, Evidence::NONE);
        }
        // A context never seen: borrow from its group if there is one, and from
        // the class, through this shard's view or, failing that, the board.
        let Some(class_at) = self.find_class(key.class_word, key.class) else {
            let class = lock(board).total(key.class_word, key.class, now_ms, &p.decay);
            let lent = borrowed_evidence(Evidence::NONE, Evidence::NONE, class, p.max_borrowed);
            return (lent, Evidence::NONE);
        };
        let group = self
            .names
            .find(key.name_hash, key.endpoint)
            .and_then(|name| self.find_group(p.seed, name, class_at))
            .map_or(Evidence::NONE, |g| {
                p.decay.evidence_at(self.groups[g as usize].sum, now_ms)
            });
        let class = self.class_evidence(class_at, p, &mut Fader::new(&p.decay, now_ms));
        let lent = borrowed_evidence(Evidence::NONE, group, class, p.max_borrowed);
        (lent, Evidence::NONE)
    }

    #[inline(always)]
    pub(crate) fn read_known(&mut self, at: u32, p: &Params, now_ms: u64) -> (Evidence, Evidence) {
        let mut fader = Fader::new(&p.decay, now_ms);
        let own = fader.fade(self.contribution(at));
        if !p.hierarchical {
            return (Evidence::NONE, own);
        }
        let slot = self.slots[at as usize];
        let group = fader.fade(self.groups[slot.group as usize].sum);
        let class = self.class_evidence(slot.class, p, &mut fader);
        (borrowed_evidence(own, group, class, p.max_borrowed), own)
    }

    // ----- writes ------------------------------------------------------------

    /// Folds `evidence` into `key`'s context as this store's own, at `now_ms`.
    pub(crate) fn observe(
        &mut self,
        key: Key<'_>,
        evidence: Evidence,
        p: &Params,
        board: &Mutex<Board>,
        now_ms: u64,
    ) {
        let at = self.find_or_insert(key, p, board, now_ms);
        self.observe_at(at, evidence, p, now_ms);
    }

    /// Folds `evidence` into the context at `at` as this store's own, at
    /// `now_ms`.
    #[inline]
    pub(crate) fn observe_at(&mut self, at: u32, evidence: Evidence, p: &Params, now_ms: u64) {
        // Saturating: a snapshot may carry this writer's entry at seq 2^64 - 1
        // (nothing but a hand-edited or hostile file does), and wrapping to 0
        // would mark the context as holding none of this store's evidence,
        // leaving it out of every snapshot.
        self.seq = self.seq.saturating_add(1);
        let seq = self.seq;
        let slot = &mut self.slots[at as usize];
        slot.local = p.decay.fold(slot.local, now_ms, evidence);
        slot.seq = seq;
        let (group, class, local, remote) = (slot.group, slot.class, slot.local, slot.remote);
        if remote != NIL {
            self.remotes[remote as usize].recombine(local, &p.decay);
        }
        let g = &mut self.groups[group as usize];
        g.sum = p.decay.fold(g.sum, now_ms, evidence);
        self.touch_class(class, |partial| p.decay.fold(partial, now_ms, evidence));
        self.promote(at);
    }

    #[cfg(feature = "serde")]
    /// Merges one writer's entry for `key`'s context: kept if it beats the one
    /// held for that writer (or none is held).
    pub(crate) fn merge(
        &mut self,
        key: Key<'_>,
        writer: WriterId,
        entry: WriterEntry,
        p: &Params,
        board: &Mutex<Board>,
        time: MergeTime,
    ) {
        let MergeTime {
            now_ms,
            clamp_ms,
            forget_before,
        } = time;
        // Evidence stamped after `clamp_ms` arrives now: stamped then. One
        // update keeps the earliest such stamp (`beats_clamped`), so merged
        // again, clamped anew or not clamped at all once the clock has passed
        // its stamp, it is not news and its decay is not restarted.
        let clamping = clamp_ms != u64::MAX;
        let entry = match entry.stamped.at_ms() > clamp_ms {
            true => WriterEntry {
                seq: entry.seq,
                stamped: Stamped::new(entry.stamped.evidence(), clamp_ms),
            },
            false => entry,
        };
        let live = |e: &WriterEntry| e.stamped.at_ms() >= forget_before;
        if !live(&entry) {
            // Not taken in; but this store's own entry, from an earlier life
            // under its id, still tells it where to number on from, so that
            // its new updates do not reuse the forgotten ones' numbers.
            if writer == p.writer {
                self.seq = self.seq.max(entry.seq);
            }
            return;
        }
        // A forgotten entry loses to any live one but a copy of itself (the
        // same update, stamped otherwise: the earliest stamp still holds, so
        // an update from a clock ahead is not news again): a writer restarted
        // under a fixed id after its entries were forgotten numbers from 1
        // again.
        let same_update = |held: &WriterEntry| {
            held.seq == entry.seq && held.stamped.evidence() == entry.stamped.evidence()
        };
        let stale = |held: &WriterEntry| {
            (live(held) || same_update(held))
                && match clamping {
                    true => !entry.beats_clamped(held),
                    false => !entry.beats(held),
                }
        };
        let at = self.find_or_insert(key, p, board, now_ms);
        let before = self.contribution(at);
        if writer == p.writer {
            let slot = &mut self.slots[at as usize];
            let held = WriterEntry {
                seq: slot.seq,
                stamped: slot.local,
            };
            if slot.seq != 0 && stale(&held) {
                return;
            }
            slot.local = entry.stamped;
            slot.seq = entry.seq;
            let (local, remote) = (slot.local, slot.remote);
            self.seq = self.seq.max(entry.seq);
            if remote != NIL {
                self.remotes[remote as usize].recombine(local, &p.decay);
            }
        } else {
            let remote = self.remote_set(at);
            let local = self.slots[at as usize].local;
            let set = &mut self.remotes[remote as usize];
            match set.writers.binary_search_by_key(&writer, |(w, _)| *w) {
                Ok(i) => {
                    if stale(&set.writers[i].1) {
                        return;
                    }
                    set.writers[i].1 = entry;
                }
                Err(i) => set.writers.insert(i, (writer, entry)),
            }
            // The context's forgotten writers go too, so that a long-lived
            // store merging from peers that come and go stays bounded.
            if forget_before > 0 {
                set.writers.retain(|(_, e)| live(e));
            }
            set.resum(&p.decay);
            set.recombine(local, &p.decay);
        }
        let after = self.contribution(at);
        let slot = self.slots[at as usize];
        let g = &mut self.groups[slot.group as usize];
        g.sum = p.decay.combine(p.decay.remove(g.sum, before), after);
        self.touch_class(slot.class, |partial| {
            p.decay.combine(p.decay.remove(partial, before), after)
        });
        self.promote(at);
    }

    /// The remote set of the context at `at`, made (empty, `combined` equal
    /// to the context's own evidence) if it has none.
    #[cfg(feature = "serde")]
    fn remote_set(&mut self, at: u32) -> u32 {
        let held = self.slots[at as usize].remote;
        if held != NIL {
            return held;
        }
        let remote = match self.free_remotes.pop() {
            Some(free) => free,
            None => {
                self.remotes.push(RemoteSet::default());
                (self.remotes.len() - 1) as u32
            }
        };
        let set = &mut self.remotes[remote as usize];
        set.sum = Stamped::EMPTY;
        set.combined = self.slots[at as usize].local;
        self.slots[at as usize].remote = remote;
        remote
    }

    /// Applies `change` to this shard's share of a class, and posts it for the
    /// other shards.
    #[inline]
    fn touch_class(&mut self, class: u32, change: impl FnOnce(Stamped) -> Stamped) {
        let number = self.number;
        let slot = &mut self.classes[class as usize];
        slot.partial = change(slot.partial);
        slot.posting.post(number, slot.partial);
    }

    /// The slot of `key`'s context, made if need be (evicting the least recently
    /// updated context when the shard is full).
    #[inline]
    fn find_or_insert(
        &mut self,
        key: Key<'_>,
        p: &Params,
        board: &Mutex<Board>,
        now_ms: u64,
    ) -> u32 {
        match self.find(&key) {
            Some(at) => at,
            None => self.insert_unknown(key, p, board, now_ms),
        }
    }

    /// [`find_or_insert`](Shard::find_or_insert) of a key not in the table.
    #[cold]
    #[inline(never)]
    pub(crate) fn insert_unknown(
        &mut self,
        key: Key<'_>,
        p: &Params,
        board: &Mutex<Board>,
        now_ms: u64,
    ) -> u32 {
        let key = match self.filed(key) {
            Ok(at) => return at,
            Err(key) => key,
        };
        let reuse = if self.slots.len() >= self.capacity {
            self.evict(p)
        } else {
            None
        };
        let class = self.class_slot(&key, p, board, now_ms);
        let group = self.group_slot(&key, class, p);
        self.classes[class as usize].contexts += 1;
        self.groups[group as usize].contexts += 1;
        let name = self.groups[group as usize].name;
        let slot = ContextSlot {
            local: Stamped::EMPTY,
            seq: 0,
            name,
            attempt: key.attempt,
            class,
            group,
            newer: NIL,
            older: NIL,
            remote: NIL,
        };
        let at = match reuse {
            Some(at) => {
                self.slots[at as usize] = slot;
                at
            }
            None => {
                if self.slots.len() == self.slots.capacity() {
                    // Grow by doubling, but never past the shard's capacity.
                    let want = self
                        .slots
                        .len()
                        .max(4)
                        .min(self.capacity - self.slots.len());
                    self.slots.reserve_exact(want);
                }
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        };
        self.index.insert(key.hash(), at);
        self.push_front(at);
        at
    }

    /// The class slot for `key`'s class, made if need be.
    fn class_slot(&mut self, key: &Key<'_>, p: &Params, board: &Mutex<Board>, now_ms: u64) -> u32 {
        if let Some(at) = self.find_class(key.class_word, key.class) {
            return at;
        }
        let posting = {
            let mut board = lock(board);
            let unknown = ClassRef::Builtin(ErrorClass::Unknown);
            // The board filled up since `overflowed` looked: post as Unknown.
            board
                .intern(key.class_word, key.class)
                .or_else(|| board.intern(ErrorClass::Unknown.code(), unknown))
        };
        let Some(posting) = posting else {
            // Unreachable: the board always makes room for Unknown.
            return 0;
        };
        self.classes.push(ClassSlot {
            class: key.class.to_owned_class(),
            word: key.class_word,
            partial: Stamped::EMPTY,
            others: Stamped::EMPTY,
            contexts: 0,
            refreshed_at: 0,
            posting,
        });
        let at = (self.classes.len() - 1) as u32;
        let classes = &self.classes;
        self.class_index
            .insert_unique(key.class_word, at, |&other| classes[other as usize].word);
        let number = self.number;
        refresh(&mut self.classes[at as usize], number, p, now_ms);
        at
    }

    /// The group slot for `key`'s endpoint and `class`, made if need be.
    fn group_slot(&mut self, key: &Key<'_>, class: u32, p: &Params) -> u32 {
        if let Some(group) = self
            .names
            .find(key.name_hash, key.endpoint)
            .and_then(|name| self.find_group(p.seed, name, class))
        {
            return group;
        }
        let name = self.names.acquire(p.seed, key.name_hash, key.endpoint);
        let slot = GroupSlot {
            sum: Stamped::EMPTY,
            name,
            class,
            contexts: 0,
        };
        let at = match self.free_groups.pop() {
            Some(at) => {
                self.groups[at as usize] = slot;
                at
            }
            None => {
                self.groups.push(slot);
                (self.groups.len() - 1) as u32
            }
        };
        let groups = &self.groups;
        self.group_index
            .insert_unique(group_hash(p.seed, name, class), at, |&other| {
                let g = &groups[other as usize];
                group_hash(p.seed, g.name, g.class)
            });
        at
    }

    /// Forgets the least recently updated context and returns its slot, to be
    /// reused at once.
    fn evict(&mut self, p: &Params) -> Option<u32> {
        let at = self.tail;
        if at == NIL {
            return None;
        }
        let gone = self.contribution(at);
        let slot = self.slots[at as usize];
        // Out of the index while its name is still interned (the hash needs it).
        let hash = slot_hash(p.seed, &slot, &self.classes, &self.names);
        self.index.remove(hash, at);
        self.unlink(at);
        if slot.remote != NIL {
            self.remotes[slot.remote as usize].writers.clear();
            self.free_remotes.push(slot.remote);
        }

        let g = &mut self.groups[slot.group as usize];
        g.contexts -= 1;
        if g.contexts == 0 {
            let (name, class) = (g.name, g.class);
            if let Ok(entry) = self
                .group_index
                .find_entry(group_hash(p.seed, name, class), |&other| {
                    other == slot.group
                })
            {
                entry.remove();
            }
            self.free_groups.push(slot.group);
            self.names.release(p.seed, name);
        } else {
            g.sum = p.decay.remove(g.sum, gone);
        }
        let c = &mut self.classes[slot.class as usize];
        c.contexts -= 1;
        let emptied = c.contexts == 0;
        self.touch_class(slot.class, |partial| {
            if emptied {
                Stamped::EMPTY
            } else {
                p.decay.remove(partial, gone)
            }
        });
        Some(at)
    }

    // ----- order of updates --------------------------------------------------

    fn promote(&mut self, at: u32) {
        if self.head != at {
            self.unlink(at);
            self.push_front(at);
        }
    }

    fn unlink(&mut self, at: u32) {
        let ContextSlot { newer, older, .. } = self.slots[at as usize];
        match self.slots.get_mut(newer as usize) {
            Some(s) => s.older = older,
            None => self.head = older,
        }
        match self.slots.get_mut(older as usize) {
            Some(s) => s.newer = newer,
            None => self.tail = newer,
        }
    }

    fn push_front(&mut self, at: u32) {
        let old_head = self.head;
        let slot = &mut self.slots[at as usize];
        slot.newer = NIL;
        slot.older = old_head;
        match self.slots.get_mut(old_head as usize) {
            Some(s) => s.newer = at,
            None => self.tail = at,
        }
        self.head = at;
    }

    // ----- snapshots and accounting -----------------------------------------

    /// Every (context, writer) entry this shard holds.
    #[cfg(feature = "serde")]
    pub(crate) fn list(&self, writer: WriterId, mut each: impl FnMut(Listed<'_>)) {
        for slot in &self.slots {
            let endpoint = self.names.get(slot.name);
            let class = &self.classes[slot.class as usize].class;
            if slot.seq != 0 {
                each(Listed {
                    endpoint,
                    attempt: slot.attempt,
                    class,
                    writer,
                    entry: WriterEntry {
                        seq: slot.seq,
                        stamped: slot.local,
                    },
                });
            }
            if let Some(set) = self.remotes.get(slot.remote as usize) {
                for &(writer, entry) in &set.writers {
                    each(Listed {
                        endpoint,
                        attempt: slot.attempt,
                        class,
                        writer,
                        entry,
                    });
                }
            }
        }
    }

    /// Heap bytes held, as (everything, of which endpoint names).
    pub(crate) fn heap_bytes(&self) -> (usize, usize) {
        let remote: usize = self.remotes.capacity() * size_of::<RemoteSet>()
            + self.free_remotes.capacity() * size_of::<u32>()
            + self
                .remotes
                .iter()
                .map(|r| r.writers.capacity() * size_of::<(WriterId, WriterEntry)>())
                .sum::<usize>();
        let total = self.names.heap_bytes()
            + self.classes.capacity() * size_of::<ClassSlot>()
            + self
                .classes
                .iter()
                .map(|c| c.class.heap_bytes())
                .sum::<usize>()
            + self.class_index.allocation_size()
            + self.groups.capacity() * size_of::<GroupSlot>()
            + self.free_groups.capacity() * size_of::<u32>()
            + self.group_index.allocation_size()
            + self.slots.capacity() * size_of::<ContextSlot>()
            + self.index.allocation_size()
            + remote;
        (total, self.names.arena_bytes())
    }
}

/// Locks the board; a poisoned lock is taken over (no code panics while holding
/// it, and the board is plain data, valid between any two statements).
pub(crate) fn lock(board: &Mutex<Board>) -> MutexGuard<'_, Board> {
    board.lock().unwrap_or_else(PoisonError::into_inner)
}

/// [`Decay::evidence_at`] for the several sums one read needs at one `now_ms`,
/// remembering the last factor: a context, its group and its shard's share of
/// the class were usually last updated by the same observe, at the same
/// moment, so one `exp2` serves them all. Without decay the factor is always
/// exactly 1, so every sum is read as it is (`horizon` 0).
struct Fader<'a> {
    decay: &'a Decay,
    now_ms: u64,
    /// Stamps at or after it are read as they are: `now_ms`, or 0 without
    /// decay.
    horizon: u64,
    at_ms: u64,
    factor: f64,
}

impl<'a> Fader<'a> {
    #[inline]
    fn new(decay: &'a Decay, now_ms: u64) -> Fader<'a> {
        Fader {
            decay,
            now_ms,
            horizon: if decay.half_life().is_never() {
                0
            } else {
                now_ms
            },
            at_ms: now_ms,
            factor: 1.0,
        }
    }

    /// The same as `decay.evidence_at(stamped, now_ms)`.
    #[inline]
    fn fade(&mut self, stamped: Stamped) -> Evidence {
        if self.horizon <= stamped.at_ms() {
            return stamped.evidence();
        }
        if stamped.at_ms() != self.at_ms {
            self.at_ms = stamped.at_ms();
            self.factor = self.decay.factor(self.now_ms - self.at_ms);
        }
        stamped.evidence().scaled(self.factor)
    }
}

/// Refreshes a class slot's view of the other shards' shares.
fn refresh(slot: &mut ClassSlot, shard: usize, p: &Params, now_ms: u64) {
    slot.others = slot.posting.others(shard, now_ms, &p.decay);
    slot.refreshed_at = now_ms;
}

/// Whether a class slot's view is due for a refresh: `refresh_ms` after the
/// last one, or `refresh_ms` before it (at once with a zero interval). A
/// reading that far behind the last refresh's is not a thread whose clock
/// lags another's by a little: the last refresh was made at a reading far
/// ahead (a clock stepped forward, then set right), and the view would
/// otherwise stay as it was then until the clock caught up with it.
#[inline]
fn due(slot: &ClassSlot, p: &Params, now_ms: u64) -> bool {
    now_ms.abs_diff(slot.refreshed_at) >= p.refresh_ms
}

/// Whether a class slot holds `key`'s class. The words of two built-in classes
/// are equal exactly when the classes are; a custom class's word is a hash of
/// its name, so then the classes themselves are compared.
#[inline(always)]
fn same_class(slot: &ClassSlot, key: &Key<'_>) -> bool {
    slot.word == key.class_word
        && match (&slot.class, key.class) {
            (OwnedClass::Builtin(_), ClassRef::Builtin(_)) => true,
            (held, wanted) => held.as_ref() == wanted,
        }
}

#[inline]
fn context_hash(name_hash: u64, class_word: u64, attempt: u32) -> u64 {
    hash_words(name_hash, class_word, u64::from(attempt))
}

fn slot_hash(seed: u64, slot: &ContextSlot, classes: &[ClassSlot], names: &Names) -> u64 {
    let name_hash = hash_bytes(seed, names.get(slot.name).as_bytes());
    context_hash(name_hash, classes[slot.class as usize].word, slot.attempt)
}

fn group_hash(seed: u64, name: u32, class: u32) -> u64 {
    hash_words(seed, u64::from(name), u64::from(class))
}

#[cfg(test)]
mod tests {
    use core::mem::size_of;

    use super::ContextSlot;

    #[test]
    fn a_context_slot_is_64_bytes() {
        assert_eq!(size_of::<ContextSlot>(), 64);
    }

    /// A shard of five contexts, its board and its parameters, for writer 1.
    #[cfg(feature = "serde")]
    fn shard_of_five(
        decay: bayesretry_decay::Decay,
        hierarchical: bool,
    ) -> (super::Params, std::sync::Mutex<super::Board>, super::Shard) {
        let p = super::Params {
            seed: 3,
            decay,
            prior: bayesretry_beta::Beta::uniform(),
            hierarchical,
            max_borrowed: 10.0,
            refresh_ms: 0,
            writer: crate::writer::WriterId::new(1),
        };
        let board = super::Board::new(1);
        let shard = super::Shard::new(0, 5, board.len_counter());
        (p, std::sync::Mutex::new(board), shard)
    }

    /// A merge that forgets drops the context's forgotten writers from its
    /// set, so that peers restarted under new ids do not pile up in memory,
    /// and keeps the set's sums those of the writers left.
    #[cfg(feature = "serde")]
    #[test]
    fn a_merge_that_forgets_drops_the_contexts_forgotten_writers() {
        use bayesretry_decay::{Decay, Evidence, Stamped};

        use super::{Key, MergeTime, Shard, WriterEntry};
        use crate::class::ClassRef;
        use crate::error_class::ErrorClass;
        use crate::writer::WriterId;

        let (p, board, mut shard) = shard_of_five(Decay::never(), false);
        let key = || Key::new(p.seed, "api", 1, ClassRef::Builtin(ErrorClass::Timeout));
        let merge = |shard: &mut Shard, writer: u64, at_ms: u64, forget_before: u64| {
            let entry = WriterEntry {
                seq: 1,
                stamped: Stamped::new(Evidence::outcome(false), at_ms),
            };
            let time = MergeTime {
                now_ms: at_ms,
                clamp_ms: at_ms,
                forget_before,
            };
            shard.merge(key(), WriterId::new(writer), entry, &p, &board, time);
        };
        for writer in 2..12 {
            merge(&mut shard, writer, writer * 100, 0);
        }
        fn set(shard: &Shard) -> &super::RemoteSet {
            &shard.remotes[shard.slots[0].remote as usize]
        }
        assert_eq!(set(&shard).writers.len(), 10);
        // writers 2..=6 were last heard of before 700
        merge(&mut shard, 20, 2_000, 700);
        let left: alloc::vec::Vec<u64> = set(&shard).writers.iter().map(|(w, _)| w.get()).collect();
        assert_eq!(left, [7, 8, 9, 10, 11, 20]);
        assert_eq!(set(&shard).sum.evidence(), Evidence::new(0.0, 6.0).unwrap());
    }

    /// Observes and merges from several writers, in an order that mixes them,
    /// on a shard small enough to evict: after every step each live context's
    /// remote set holds the writer-order sum of its writers and that sum
    /// combined with the context's own evidence, bit for bit; no two contexts
    /// share a set, and no live context's set is on the free list.
    #[cfg(feature = "serde")]
    #[test]
    fn remote_sets_keep_their_sums_exact_through_observes_merges_and_evictions() {
        use alloc::format;
        use core::num::NonZeroU64;

        use bayesretry_decay::{Decay, Evidence, HalfLife, Stamped};

        use super::{Key, MergeTime, NIL, WriterEntry};
        use crate::class::ClassRef;
        use crate::error_class::ErrorClass;
        use crate::writer::WriterId;

        let decay = Decay::new(HalfLife::from_ms(NonZeroU64::new(700).unwrap()));
        let (p, board, mut shard) = shard_of_five(decay, true);
        let names: [alloc::string::String; 4] = core::array::from_fn(|i| format!("e{i}"));
        let (mut checked, mut freed) = (0, false);
        for step in 0..400_u64 {
            let mix = step.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40;
            let name = &names[(mix % 4) as usize];
            let key = Key::new(
                p.seed,
                name,
                (mix / 4 % 3) as u32 + 1,
                ClassRef::Builtin(ErrorClass::Timeout),
            );
            let now_ms = step * 37 % 1_000 + step;
            let writer = WriterId::new(mix / 12 % 4 + 1);
            if mix % 5 == 0 {
                shard.observe(key, Evidence::outcome(mix % 2 == 0), &p, &board, now_ms);
            } else {
                let entry = WriterEntry {
                    seq: step / 3 + 1,
                    stamped: Stamped::new(
                        Evidence::new((mix % 7) as f64, (mix % 3) as f64).unwrap(),
                        now_ms.saturating_sub(mix % 300),
                    ),
                };
                shard.merge(
                    key,
                    writer,
                    entry,
                    &p,
                    &board,
                    MergeTime {
                        now_ms,
                        clamp_ms: u64::MAX,
                        // every other merge forgets what is 200 ms old
                        forget_before: (step % 2) * now_ms.saturating_sub(200),
                    },
                );
            }
            freed |= !shard.free_remotes.is_empty();
            let mut seen = alloc::vec::Vec::new();
            for slot in &shard.slots {
                if slot.remote == NIL {
                    continue;
                }
                assert!(!seen.contains(&slot.remote), "a set shared at step {step}");
                assert!(
                    !shard.free_remotes.contains(&slot.remote),
                    "a live set freed"
                );
                seen.push(slot.remote);
                let set = &shard.remotes[slot.remote as usize];
                let sum = set
                    .writers
                    .iter()
                    .fold(Stamped::EMPTY, |sum, (_, e)| decay.combine(sum, e.stamped));
                assert_eq!(set.sum, sum, "step {step}");
                assert_eq!(set.combined, decay.combine(slot.local, sum), "step {step}");
                checked += 1;
            }
        }
        assert!(freed, "evictions freed sets");
        assert!(
            checked > 400,
            "contexts with other writers were checked: {checked}"
        );
    }
}
