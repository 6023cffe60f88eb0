//! [`MemoryStore`]: the in-memory, sharded, bounded [`PosteriorStore`].

mod board;
mod index;
mod names;
mod recent;
mod shard;

use alloc::boxed::Box;
use core::fmt;
use core::hash::{BuildHasher, Hasher};
use std::collections::hash_map::RandomState;
use std::sync::{Mutex, MutexGuard, PoisonError};

use bayesretry_beta::Beta;
use bayesretry_decay::{Decay, Evidence};

use self::board::Board;
use self::recent::RecentName;
use self::shard::{Key, Params, Shard, lock as lock_board};
use crate::class::ClassRef;
use crate::config::StoreConfig;
use crate::context::Context;
use crate::hash::hash_bytes;
use crate::name::clip_name;
use crate::posterior_store::PosteriorStore;
use crate::writer::WriterId;

/// A shard behind its own mutex, alone on its cache lines so that two threads
/// locking neighbouring shards do not slow each other down.
#[repr(align(128))]
struct Padded(Mutex<Shard>);

/// The in-memory [`PosteriorStore`]: sharded, bounded, with hierarchical priors,
/// time decay and (with `serde`) mergeable snapshots. `&self`, `Send + Sync`.
///
/// ```
/// use bayesretry_store::{Context, ErrorClass, MemoryStore, PosteriorStore};
///
/// let store = MemoryStore::new();
/// let ctx = Context::new("api.example.com", 1, ErrorClass::Http(503));
/// for now in 0..10 {
///     store.observe(&ctx, now % 5 != 0, now); // 8 successes, 2 failures
/// }
/// let posterior = store.posterior(&ctx, 10);
/// assert_eq!((posterior.alpha(), posterior.beta()), (9.0, 3.0));
/// assert_eq!(store.len(), 1);
/// ```
///
/// # Hot path
///
/// An endpoint name is hashed with a fast keyed hash, at most once per call:
/// each thread remembers where the last name it hashed lay in memory, its
/// length and its hash, so the calls of a retry loop, which pass the same
/// string each time, hash it once. The remembered hash is only a guess, which
/// the lookup checks in full, so a reused buffer that now holds another name of
/// the same length is never taken for it. The hash picks the shard and, within
/// it, the context, whose table entry is an 8-byte bucket (32 bits of the hash
/// and a slot number) in a linear-probing table made for this one lookup,
/// pointing into a vector of 64-byte slots. The name is compared, in line,
/// against the copy the shard interned the first time it saw it, and only in a
/// bucket whose hash bits match, so a lookup allocates nothing and calls
/// nothing. A context's parents are reached through indices stored in its
/// slot, so reading a posterior with hierarchical priors costs one table probe
/// and a few additions (plus one `exp2` per term when evidence decays; without
/// decay none is taken).
///
/// # Sharding
///
/// Contexts are split into independently locked shards by endpoint: all of an
/// endpoint's contexts and its (endpoint, class) parents live in one shard, so
/// every call takes exactly one shard lock, held for tens of nanoseconds. Two
/// threads on different endpoints usually take different locks and run in
/// parallel; two threads on one endpoint serialise on its shard, and lose no
/// update.
///
/// # Bounded
///
/// Endpoint names, attempt numbers and (through custom names) classes may come
/// from untrusted input, so the store holds at most `max_contexts` contexts:
/// each shard holds `max_contexts / shards`, and a shard that needs room for a
/// new context forgets its *least recently updated* one — read-only lookups
/// never create a context and never move one up. Everything else a shard keeps
/// (interned names, groups) belongs to a live context and goes with the last
/// one; names longer than `max_endpoint_bytes` are cut. Memory is therefore
/// bounded by `max_contexts`, whatever the keys. A forgotten context's evidence
/// leaves its parents' sums with it; if the key comes back it starts from its
/// borrowed prior.
///
/// # The class level across shards
///
/// The class parent sums every endpoint, and endpoints are spread over shards.
/// Reading it from every shard on each call would take every lock, so each
/// shard posts its share of each class to a shared board on every change — a
/// few atomic stores to a cache line only that shard writes, under a sequence
/// lock, no mutex — and keeps a view of the other shards' shares, read from the
/// board without a lock when the class is first used in the shard and then at
/// most once every `class_refresh_ms` of the callers' clock. A shard's own
/// share is always exact; the other shards' may be that old (0 refreshes on
/// every read: exact, and O(shards) per read). A reading more than
/// `class_refresh_ms` behind the one that last refreshed the view refreshes
/// it too, so one reading far ahead (a clock stepped forward, then set right)
/// does not keep the view as it was until the clock catches up. A shard that has never seen a
/// class reads the board directly. Since the class level lends at most
/// `max_borrowed` pseudo-observations, the lag moves a borrowed prior, never a
/// well-observed posterior.
///
/// # Writers and sequence numbers
///
/// Every store writes under a [`WriterId`]. Each of its contexts carries the
/// store's own evidence with a sequence number that grows with every update
/// (per shard, so it keeps growing when a context is forgotten and comes back)
/// and, after a `merge` (with `serde`), other writers' evidence, one
/// entry each. A context's evidence is the sum over writers, each decayed from
/// its own last update. That sum is kept, not taken on each read: a context
/// holding other writers' evidence keeps their sum and that sum combined with
/// its own, brought up to date by every merge and observe that changes either
/// (exponential decay lets a sum of evidences stamped at different moments be
/// held as one stamped total). A read of such a context therefore costs what a
/// read of a context with one writer does, and returns the same bits as
/// summing at read time would.
pub struct MemoryStore {
    config: StoreConfig,
    params: Params,
    shards: Box<[Padded]>,
    /// Bits 32 and up of a name's hash pick its shard (the table within the
    /// shard uses the low bits and the top seven).
    shard_mask: usize,
    board: Mutex<Board>,
    max_endpoint_bytes: usize,
}

impl MemoryStore {
    /// A store with the [default settings](StoreConfig#default).
    pub fn new() -> MemoryStore {
        MemoryStore::from_checked(StoreConfig::new())
    }

    /// Built by [`StoreConfig::build`], which has checked every setting.
    pub(crate) fn from_checked(config: StoreConfig) -> MemoryStore {
        // Fewer shards than asked when max_contexts would leave some empty.
        let mut shards = config.shards;
        while shards > config.max_contexts {
            shards /= 2;
        }
        let shards = shards.max(1);
        let capacity = (config.max_contexts / shards).max(1);
        let random = RandomState::new();
        let draw = |salt: u64| {
            let mut h = random.build_hasher();
            h.write_u64(salt);
            h.finish()
        };
        let params = Params {
            seed: config.hash_seed.unwrap_or_else(|| draw(1)),
            decay: Decay::new(config.half_life),
            prior: config.prior,
            hierarchical: config.hierarchical && config.max_borrowed > 0.0,
            max_borrowed: config.max_borrowed,
            refresh_ms: config.class_refresh_ms,
            // Never the reserved id: `u64::MAX` is drawn as its neighbour.
            writer: config
                .writer
                .unwrap_or_else(|| WriterId::new(draw(2).min(u64::MAX - 1))),
        };
        let board = Board::new(shards);
        let board_len = board.len_counter();
        MemoryStore {
            config,
            params,
            shards: (0..shards)
                .map(|n| Padded(Mutex::new(Shard::new(n, capacity, board_len.clone()))))
                .collect(),
            shard_mask: shards - 1,
            board: Mutex::new(board),
            max_endpoint_bytes: config.max_endpoint_bytes,
        }
    }

    /// The settings the store was built with.
    pub const fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// The id this store writes its evidence under.
    pub const fn writer(&self) -> WriterId {
        self.params.writer
    }

    /// The number of shards in use.
    pub fn shards(&self) -> usize {
        self.shards.len()
    }

    /// The prior of `ctx` at `now_ms`: the configured prior plus what the
    /// context borrows from its parents (just the configured prior with
    /// hierarchical priors off).
    pub fn prior(&self, ctx: &Context<'_>, now_ms: u64) -> Beta {
        self.read(ctx, now_ms).0.posterior(self.params.prior)
    }

    /// The evidence of `ctx` itself at `now_ms`, every writer's, decayed: what
    /// its posterior adds to its [`prior`](MemoryStore::prior).
    pub fn evidence(&self, ctx: &Context<'_>, now_ms: u64) -> Evidence {
        self.read(ctx, now_ms).1
    }

    /// How many contexts the store holds.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| lock(&s.0).len()).sum()
    }

    /// Whether the store holds no context.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every context. Sequence numbers start over, so a store that is
    /// cleared and keeps its [`WriterId`] should `load` its
    /// last snapshot rather than write afresh.
    pub fn clear(&self) {
        for (number, shard) in self.shards.iter().enumerate() {
            let mut shard = lock(&shard.0);
            shard.clear();
            lock_board(&self.board).clear_shard(number);
        }
    }

    /// The bytes the store holds on the heap (its tables, slots and names,
    /// allocator overhead excluded), as `(total, of which endpoint names)`.
    pub fn heap_bytes(&self) -> (usize, usize) {
        let mut total = self.shards.len() * core::mem::size_of::<Padded>();
        let mut names = 0;
        for shard in self.shards.iter() {
            let (t, n) = lock(&shard.0).heap_bytes();
            total += t;
            names += n;
        }
        (total + lock_board(&self.board).heap_bytes(), names)
    }

    /// The size of one context's slot, in bytes: the per-context cost besides
    /// its share of the hash table (one 8-byte bucket, at most three quarters full)
    /// and its endpoint's name and group, which its endpoint's contexts share.
    pub const CONTEXT_SLOT_BYTES: usize = core::mem::size_of::<shard::ContextSlot>();

    #[inline(always)]
    fn key<'a>(&self, ctx: &Context<'a>) -> Key<'a> {
        let endpoint = clip_name(ctx.endpoint(), self.max_endpoint_bytes);
        Key::new(
            self.params.seed,
            endpoint,
            ctx.attempt(),
            ClassRef::of(ctx.error_class()),
        )
    }

    #[inline]
    fn shard(&self, key: &Key<'_>) -> MutexGuard<'_, Shard> {
        let at = (key.name_hash >> 32) as usize & self.shard_mask;
        lock(&self.shards[at].0)
    }

    /// The key of `ctx` with the hash this thread remembers for its endpoint,
    /// if it remembers one: a guess (see [`RecentName`]).
    #[inline(always)]
    fn guessed_key<'a>(&self, ctx: &Context<'a>) -> Option<Key<'a>> {
        let endpoint = clip_name(ctx.endpoint(), self.max_endpoint_bytes);
        let seed = self.params.seed;
        RecentName::guess(seed, endpoint).map(|name_hash| {
            Key::with_name_hash(
                seed,
                endpoint,
                name_hash,
                ctx.attempt(),
                ClassRef::of(ctx.error_class()),
            )
        })
    }

    /// The key of `ctx`, its endpoint hashed (and remembered by this thread).
    #[inline(always)]
    fn hashed_key<'a>(&self, ctx: &Context<'a>) -> Key<'a> {
        let key = self.key(ctx);
        RecentName::remember(self.params.seed, key.endpoint, key.name_hash);
        key
    }

    /// Whether `key`'s name hash is its endpoint's true hash.
    #[inline]
    fn is_true(&self, key: &Key<'_>) -> bool {
        hash_bytes(self.params.seed, key.endpoint.as_bytes()) == key.name_hash
    }

    /// What `ctx` borrows from its parents, and its own evidence, at `now_ms`.
    #[inline]
    fn read(&self, ctx: &Context<'_>, now_ms: u64) -> (Evidence, Evidence) {
        if let Some(key) = self.guessed_key(ctx) {
            let mut shard = self.shard(&key);
            if let Some(at) = shard.find(&key) {
                return shard.read_known(at, &self.params, now_ms);
            }
            if self.is_true(&key) {
                return shard.read_unknown(key, &self.params, &self.board, now_ms);
            }
        }
        let key = self.hashed_key(ctx);
        self.shard(&key)
            .read(key, &self.params, &self.board, now_ms)
    }

    #[inline]
    fn fold(&self, ctx: &Context<'_>, evidence: Evidence, now_ms: u64) {
        if let Some(key) = self.guessed_key(ctx) {
            let mut shard = self.shard(&key);
            let found = match shard.find(&key) {
                Some(at) => Some(at),
                None if self.is_true(&key) => {
                    Some(shard.insert_unknown(key, &self.params, &self.board, now_ms))
                }
                None => None,
            };
            if let Some(at) = found {
                shard.observe_at(at, evidence, &self.params, now_ms);
                return;
            }
        }
        let key = self.hashed_key(ctx);
        self.shard(&key)
            .observe(key, evidence, &self.params, &self.board, now_ms);
    }
}

impl PosteriorStore for MemoryStore {
    #[inline]
    fn posterior(&self, ctx: &Context<'_>, now_ms: u64) -> Beta {
        let (lent, own) = self.read(ctx, now_ms);
        lent.plus(own).posterior(self.params.prior)
    }

    #[inline]
    fn observe(&self, ctx: &Context<'_>, success: bool, now_ms: u64) {
        self.fold(ctx, Evidence::outcome(success), now_ms);
    }

    fn observe_weighted(&self, ctx: &Context<'_>, successes: f64, failures: f64, now_ms: u64) {
        let evidence = Evidence::new_lenient(successes, failures);
        if !evidence.is_none() {
            self.fold(ctx, evidence, now_ms);
        }
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryStore")
            .field("config", &self.config)
            .field("writer", &self.params.writer)
            .field("shards", &self.shards.len())
            .finish_non_exhaustive()
    }
}

/// Locks a shard; a poisoned lock is taken over, since no code panics while
/// holding it and a shard is valid between any two of its operations.
#[inline]
fn lock(shard: &Mutex<Shard>) -> MutexGuard<'_, Shard> {
    shard.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(feature = "serde")]
mod snapshots {
    use alloc::vec::Vec;

    use bayesretry_decay::Stamped;

    use super::shard::{Key, MergeTime, WriterEntry};
    use super::{MemoryStore, lock};
    use crate::name::clip_name;
    use crate::snapshot::{Snapshot, SnapshotEntry};

    impl MemoryStore {
        /// Every writer's evidence for every context, as of its last update,
        /// with `now_ms` recorded as the time the snapshot was taken.
        ///
        /// Shards are read one after the other, each under its lock: the
        /// snapshot is consistent per endpoint, not across endpoints updated
        /// while it was taken. Evidence is not decayed in the snapshot (each
        /// entry keeps its own last-update time), so snapshots merge exactly.
        /// The snapshot records this store's writer as
        /// [`taken_by`](Snapshot::taken_by).
        ///
        /// With a half-life, entries last updated more than 64 half-lives
        /// before `now_ms` are left out, forgotten
        /// ([`Snapshot::forget_before`], at
        /// [`Decay::forgotten_before`](bayesretry_decay::Decay::forgotten_before)):
        /// each is worth less than 2⁻⁶⁴ of itself. So the snapshots (and the
        /// files) of processes restarted under new writer ids shed their dead
        /// writers' entries instead of growing by them at every restart.
        pub fn snapshot(&self, now_ms: u64) -> Snapshot {
            let mut entries = Vec::new();
            for shard in self.shards.iter() {
                lock(&shard.0).list(self.params.writer, |listed| {
                    entries.push(SnapshotEntry::from_parts(
                        listed.endpoint,
                        listed.attempt,
                        listed.class.encode(),
                        listed.writer,
                        listed.entry.seq,
                        listed.entry.stamped.evidence(),
                        listed.entry.stamped.at_ms(),
                    ));
                });
            }
            let mut snapshot =
                Snapshot::from_entries(now_ms, entries).taken_by_writer(self.params.writer);
            if let Some(cutoff) = self.params.decay.forgotten_before(now_ms) {
                snapshot.forget_before(cutoff);
            }
            snapshot
        }

        /// Replaces everything the store holds by the snapshot's contents:
        /// [`clear`](MemoryStore::clear), then [`merge`](MemoryStore::merge).
        /// The snapshot's entries written under this store's
        /// [`WriterId`](crate::WriterId)
        /// become its own again, sequence numbers included.
        pub fn load(&self, snapshot: &Snapshot) {
            self.clear();
            self.merge(snapshot);
        }

        /// Merges a snapshot into the store: for every (context, writer) entry,
        /// the one with the larger sequence number is kept (ties broken the same
        /// way everywhere), and a context's evidence is the sum over its writers.
        ///
        /// Merging is commutative, associative and idempotent: stores that merged
        /// the same snapshots, in any order and any number of times, hold the
        /// same entries, so merging a snapshot twice never counts its evidence
        /// twice. Each entry decays from its own last-update time. Contexts
        /// merged in count towards `max_contexts` like any other.
        ///
        /// With a half-life, prefer [`merge_at`](MemoryStore::merge_at), which
        /// also guards against evidence stamped by a clock ahead of this one.
        pub fn merge(&self, snapshot: &Snapshot) {
            let time = MergeTime {
                now_ms: snapshot.taken_at_ms(),
                clamp_ms: u64::MAX,
                forget_before: 0,
            };
            self.merge_entries(snapshot, time);
        }

        /// [`merge`](MemoryStore::merge) at `now_ms` on this store's clock:
        /// evidence stamped after `now_ms` is taken as arriving at `now_ms`.
        ///
        /// Every writer stamps its evidence with its own clock, and a context
        /// adds its writers' evidence up as of the latest stamp. A writer whose
        /// clock runs ahead of this store's (a host's wall clock set wrong, a
        /// clock of another origin, this store's own clock set back since it
        /// saved) stamps evidence in this store's future; merged as it is, its
        /// stamp would become the context's, decaying this store's evidence by
        /// the difference (a day ahead, and all of it is gone), and the
        /// newcomer's would not fade until this clock caught up. Merged here,
        /// it adds up at its full weight and fades from `now_ms`.
        ///
        /// Copies of one update (one writer's sequence number) then circulate
        /// with different stamps: the original, and the copies stores clamped
        /// at different moments and passed on. Of these, the store keeps the
        /// earliest stamp (for two entries of one sequence number, the earlier
        /// wins, where `merge` keeps the later): merged again — clamped anew,
        /// or, once this clock has passed its stamp, not clamped at all — the
        /// update is not news, so a fleet that merges every second does not
        /// restart its decay, and a day-old update is not restored at full
        /// weight. The result does not depend on the order of the merges.
        /// Evidence stamped up to `now_ms`, with no such copies about, merges
        /// exactly as with `merge`.
        ///
        /// With a half-life, it also forgets, as
        /// [`snapshot`](MemoryStore::snapshot) does, evidence more than 64
        /// half-lives old at `now_ms`: an incoming entry that old is not
        /// merged; a held one gives way to any live entry of its writer, lower
        /// sequence numbers included, but a copy of the same update (a writer
        /// restarted under a fixed id after its entries were forgotten numbers
        /// them from 1 again); and a context's other writers that old are dropped when it
        /// merges. Two limits follow. A copy clamped more than 64 half-lives
        /// ago may be dropped so, and an update stamped that far ahead of this
        /// clock is then taken as news once more when this clock passes its
        /// stamp, fading from there. And a restarted writer's update that
        /// matches its forgotten entry in sequence number and counts is taken
        /// for a copy of it, and heard only with the writer's next update of
        /// the context (which carries all of its evidence).
        ///
        /// Use this wherever the store's clock is at hand: a policy's `load`
        /// and a fleet's sync do.
        pub fn merge_at(&self, snapshot: &Snapshot, now_ms: u64) {
            let time = MergeTime {
                now_ms,
                clamp_ms: now_ms,
                forget_before: self.params.decay.forgotten_before(now_ms).unwrap_or(0),
            };
            self.merge_entries(snapshot, time);
        }

        /// Merges the entries of `snapshot` at `time`.
        fn merge_entries(&self, snapshot: &Snapshot, time: MergeTime) {
            for entry in snapshot.entries() {
                let Some(class) = entry.class_ref() else {
                    continue;
                };
                let endpoint = clip_name(entry.endpoint(), self.max_endpoint_bytes);
                let key = Key::new(self.params.seed, endpoint, entry.attempt(), class);
                let writer_entry = WriterEntry {
                    seq: entry.seq(),
                    stamped: Stamped::new(entry.evidence(), entry.updated_at_ms()),
                };
                self.shard(&key).merge(
                    key,
                    entry.writer(),
                    writer_entry,
                    &self.params,
                    &self.board,
                    time,
                );
            }
        }
    }
}
