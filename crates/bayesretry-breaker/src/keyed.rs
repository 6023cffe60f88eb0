//! [`KeyedBreaker`]: one breaker per key — an endpoint, or an (endpoint, shard) pair
//! — in a map of bounded size.

use alloc::vec::Vec;
use core::fmt;
use core::hash::{BuildHasher, Hash};
use core::num::NonZeroUsize;
use core::sync::atomic::{AtomicU64, Ordering};
use std::collections::HashMap;
use std::hash::RandomState;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::breaker::{Admission, Breaker, ProbeRound, State, Transition};
use crate::shared::FailureCount;

/// A breaker per key, shared by every thread: `&self`, `Send + Sync`.
///
/// # Why per shard
///
/// An endpoint is often many backends behind one name: shards of a database,
/// partitions of a queue, models behind one API, tenants on one host. When one shard
/// fails, an endpoint-wide breaker sees the endpoint's success rate fall by that
/// shard's share and either stays closed (the healthy shards outvote the outage) or
/// opens for everyone (and refuses calls that would have succeeded). Keyed by
/// `(endpoint, shard)`, each shard has its own posterior, and a dead shard opens
/// its own breaker without touching its siblings.
///
/// # Bounded
///
/// Keys often come from request data — a tenant id, a shard hash — so the map holds
/// at most `max_keys` breakers and evicts the least recently used one (checked or
/// recorded) to make room. An evicted breaker's history is lost, and the key starts
/// afresh from the template if it comes back: size `max_keys` above the number of
/// keys that are live at once. [`check`](KeyedBreaker::check) on an unknown key
/// admits the call without creating an entry; only [`record`](KeyedBreaker::record)
/// creates one, so merely asking never evicts anything.
///
/// One mutex guards the whole map: a check is a hash, a lookup and a few field
/// reads, which keeps the lock held for tens of nanoseconds. The hasher is std's
/// randomly seeded one by default, so keys chosen by an attacker cannot force
/// collisions; [`with_hasher`](KeyedBreaker::with_hasher) takes any other. The seed
/// affects where keys land in the table, never which breaker opens or is evicted.
///
/// ```
/// use core::num::NonZeroUsize;
/// use bayesretry_breaker::{Config, KeyedBreaker};
///
/// let template = Config::new().with_min_strength(5.0).with_open_below(0.2).build().unwrap();
/// let breakers = KeyedBreaker::new(template, NonZeroUsize::new(1_000).unwrap());
/// for now in 0..200 {
///     let _ = breakers.record(&("db", 3), now, false); // shard 3 is down
///     let _ = breakers.record(&("db", 4), now, true);
/// }
/// assert!(!breakers.check(&("db", 3), 200).is_allowed());
/// assert!(breakers.check(&("db", 4), 200).is_allowed());
/// assert!(breakers.check(&("db", 5), 200).is_allowed()); // never seen: admitted
/// ```
pub struct KeyedBreaker<K, S = RandomState> {
    template: Breaker,
    map: Mutex<Lru<K, S>>,
    /// Failures recorded for every key since the map was made: the clock that
    /// orders the beginnings of attempts ([`failures_recorded`](KeyedBreaker::failures_recorded)).
    /// Written under the map's lock, read without it.
    failures: AtomicU64,
}

impl<K: Hash + Eq + Clone> KeyedBreaker<K> {
    /// A map of at most `max_keys` breakers, each starting as a copy of `template`.
    pub fn new(template: Breaker, max_keys: NonZeroUsize) -> Self {
        KeyedBreaker::with_hasher(template, max_keys, RandomState::new())
    }
}

impl<K: Hash + Eq + Clone, S: BuildHasher> KeyedBreaker<K, S> {
    /// Like [`new`](KeyedBreaker::new), with the given hasher.
    pub fn with_hasher(template: Breaker, max_keys: NonZeroUsize, hasher: S) -> Self {
        KeyedBreaker {
            template,
            map: Mutex::new(Lru::new(max_keys.get(), hasher)),
            failures: AtomicU64::new(0),
        }
    }

    /// Whether a call for `key` may be made at `now_ms`; see [`Breaker::check`]. An
    /// unknown key is admitted, and no entry is made for it.
    pub fn check(&self, key: &K, now_ms: u64) -> Admission {
        let mut map = self.lock();
        match map.get_mut(key) {
            Some(slot) => slot.breaker.check(now_ms),
            None => Admission::Allowed,
        }
    }

    /// Records the outcome of a call for `key` made at `now_ms`; see
    /// [`Breaker::record`]. An unknown key gets a copy of the template first,
    /// evicting the least recently used key if the map is full.
    pub fn record(&self, key: &K, now_ms: u64, success: bool) -> Option<Transition> {
        self.record_with(key, now_ms, success, None)
    }

    /// How many failures have been recorded, for every key, since the map was
    /// made: one atomic load, no lock. An attempt notes it when it begins and
    /// hands it back with its outcome to
    /// [`record_since`](KeyedBreaker::record_since), as with
    /// [`SharedBreaker::failures_recorded`](crate::SharedBreaker::failures_recorded).
    ///
    /// One count for the whole map, not one per key: it only has to order the
    /// beginnings of attempts, and any failure between two beginnings tells
    /// them apart, whichever key it was for. A count per key would restart
    /// when its key is evicted or removed, and a note taken before that would
    /// then read as later than every note taken after.
    pub fn failures_recorded(&self) -> FailureCount {
        FailureCount::new(self.failures.load(Ordering::Acquire))
    }

    /// [`record`](KeyedBreaker::record) for an attempt that began when
    /// [`failures_recorded`](KeyedBreaker::failures_recorded) read
    /// `failures_before`. A failure that begins a run of failures for `key`
    /// remembers its note as the run's beginning. A success of an attempt that
    /// began before that — a failure, of any key, was recorded between the two
    /// beginnings — is recorded as [`Breaker::record_late_success`] records
    /// it: as evidence, without ending the run, and, while the key's breaker
    /// is not closed, never as a probe's result. See
    /// [`SharedBreaker::record_success_since`](crate::SharedBreaker::record_success_since)
    /// for why, and for what the count cannot order.
    ///
    /// A key evicted or removed while the attempt ran comes back afresh; its
    /// new run's beginning is read on the same count, so the attempt's note
    /// still orders against it.
    ///
    /// ```
    /// use core::num::NonZeroUsize;
    /// use bayesretry_breaker::{Config, KeyedBreaker};
    ///
    /// let breakers = KeyedBreaker::new(Config::new().build().unwrap(), NonZeroUsize::new(8).unwrap());
    /// let shard = ("db", 3);
    /// let _ = breakers.record(&shard, 0, true);
    /// let slow = breakers.failures_recorded(); // a slow attempt begins
    /// let _ = breakers.record(&shard, 1, false); // a failure, then a success
    /// let _ = breakers.record(&shard, 2, true);
    /// let _ = breakers.record(&shard, 3, false); // an outage begins
    /// let _ = breakers.record(&shard, 4, false);
    /// let _ = breakers.record_since(&shard, slow, 5, true); // the slow one ends
    /// assert_eq!(breakers.snapshot(&shard).unwrap().failure_run(), 2, "the run goes on");
    ///
    /// let now = breakers.failures_recorded(); // an attempt begins in the run
    /// let _ = breakers.record_since(&shard, now, 6, true);
    /// assert_eq!(breakers.snapshot(&shard).unwrap().failure_run(), 0, "the shard is back");
    /// ```
    pub fn record_since(
        &self,
        key: &K,
        failures_before: FailureCount,
        now_ms: u64,
        success: bool,
    ) -> Option<Transition> {
        self.record_with(key, now_ms, success, Some(failures_before.get()))
    }

    /// Records an outcome for `key`, for an attempt that began when the
    /// count of failures read `began` (`None`: when the outcome is recorded).
    fn record_with(
        &self,
        key: &K,
        now_ms: u64,
        success: bool,
        began: Option<u64>,
    ) -> Option<Transition> {
        let mut map = self.lock();
        // counted under the lock, so that runs begin in the order of the count
        let counted = (!success).then(|| self.failures.fetch_add(1, Ordering::AcqRel));
        if let Some(slot) = map.get_mut(key) {
            return slot.record(now_ms, began, counted);
        }
        let mut slot = Slot::new(self.template);
        // a key that comes back after an eviction does not reuse the numbers
        // of its old breaker's rounds, which probes still out may hold
        slot.breaker.number_rounds_after(map.retired_round);
        let transition = slot.record(now_ms, began, counted);
        map.insert(key.clone(), slot);
        transition
    }

    /// Hands back the slot of a probe for `key` of `round` that ended without
    /// an outcome; see [`Breaker::release_probe`]: a probe of a round that is
    /// no longer the key's current one frees nothing, and neither does one
    /// whose key was evicted or removed since (a key that comes back numbers
    /// its rounds on from those of every breaker the map let go). Does not
    /// count as a use.
    ///
    /// ```
    /// use core::num::NonZeroUsize;
    /// use bayesretry_breaker::{Admission, Config, KeyedBreaker, State};
    ///
    /// let template = Config::new().with_cooldown_ms(1_000).build().unwrap();
    /// let breakers = KeyedBreaker::new(template, NonZeroUsize::new(8).unwrap());
    /// for t in 0..100 {
    ///     let _ = breakers.record(&"db", t, false);
    /// }
    /// let Some(State::Open { until_ms }) = breakers.state(&"db") else {
    ///     panic!("a hundred failures open the breaker");
    /// };
    /// let Admission::Probe { round, .. } = breakers.check(&"db", until_ms) else {
    ///     panic!("the cooldown is over");
    /// };
    /// assert!(!breakers.check(&"db", until_ms).is_allowed()); // the one probe is out
    /// breakers.release_probe(&"db", round); // it ended in a 404
    /// assert!(breakers.check(&"db", until_ms).is_allowed());
    /// ```
    pub fn release_probe(&self, key: &K, round: ProbeRound) {
        if let Some(slot) = self.lock().peek_mut(key) {
            slot.breaker.release_probe(round);
        }
    }

    /// The state of `key`'s breaker, if it has one. Does not count as a use.
    pub fn state(&self, key: &K) -> Option<State> {
        self.lock().peek(key).map(|slot| slot.breaker.state())
    }

    /// A copy of `key`'s breaker, if it has one. Does not count as a use.
    pub fn snapshot(&self, key: &K) -> Option<Breaker> {
        self.lock().peek(key).map(|slot| slot.breaker)
    }

    /// Forgets `key`'s breaker.
    pub fn remove(&self, key: &K) -> Option<Breaker> {
        self.lock().remove(key).map(|slot| slot.breaker)
    }

    /// How many keys have a breaker.
    pub fn len(&self) -> usize {
        self.lock().index.len()
    }

    /// Whether no key has a breaker.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The most keys held at once.
    pub fn max_keys(&self) -> usize {
        self.lock().capacity
    }

    /// The breaker every new key starts from.
    pub const fn template(&self) -> &Breaker {
        &self.template
    }

    fn lock(&self) -> MutexGuard<'_, Lru<K, S>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<K, S> fmt::Debug for KeyedBreaker<K, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = f.debug_struct("KeyedBreaker");
        out.field("template", &self.template);
        if let Ok(map) = self.map.try_lock() {
            out.field("len", &map.index.len())
                .field("max_keys", &map.capacity);
        }
        out.finish_non_exhaustive()
    }
}

/// No neighbour.
const NIL: usize = usize::MAX;

/// A map with a fixed capacity that evicts its least recently used entry: a hash
/// index into a vector of entries, which are linked in order of use.
struct Lru<K, S> {
    index: HashMap<K, usize, S>,
    entries: Vec<Entry<K>>,
    /// The most recently used entry.
    head: usize,
    /// The least recently used entry, the next to go.
    tail: usize,
    capacity: usize,
    /// The latest round of probes of any breaker evicted or removed: a new
    /// key's breaker numbers its rounds on from it.
    retired_round: u64,
}

/// A key's breaker, and when its current run of failures began.
#[derive(Clone, Copy)]
struct Slot {
    breaker: Breaker,
    /// The map's count of failures when the first failing attempt of the
    /// key's current run began.
    run_began_at: u64,
}

impl Slot {
    fn new(breaker: Breaker) -> Slot {
        Slot {
            breaker,
            run_began_at: 0,
        }
    }

    /// Records an outcome of an attempt that began when the map's count of
    /// failures read `note` (`None`: not known); `counted` is the count this
    /// outcome took, for a failure (`None`: a success).
    fn record(
        &mut self,
        now_ms: u64,
        note: Option<u64>,
        counted: Option<u64>,
    ) -> Option<Transition> {
        match (counted, note) {
            (Some(counted), note) => {
                self.breaker
                    .record_failure_begun(now_ms, note, counted, &mut self.run_began_at)
            }
            (None, Some(note)) => {
                self.breaker
                    .record_success_begun(now_ms, note, self.run_began_at)
            }
            (None, None) => self.breaker.record(now_ms, true),
        }
    }
}

struct Entry<K> {
    key: K,
    slot: Slot,
    /// The entry used just before this one (towards the head).
    newer: usize,
    /// The entry used just after this one (towards the tail).
    older: usize,
}

impl<K: Hash + Eq + Clone, S: BuildHasher> Lru<K, S> {
    fn new(capacity: usize, hasher: S) -> Self {
        Lru {
            index: HashMap::with_hasher(hasher),
            entries: Vec::new(),
            head: NIL,
            tail: NIL,
            capacity,
            retired_round: 0,
        }
    }

    fn peek(&self, key: &K) -> Option<&Slot> {
        let &at = self.index.get(key)?;
        self.entries.get(at).map(|entry| &entry.slot)
    }

    /// The slot for `key`, not marked as used.
    fn peek_mut(&mut self, key: &K) -> Option<&mut Slot> {
        let &at = self.index.get(key)?;
        self.entries.get_mut(at).map(|entry| &mut entry.slot)
    }

    /// The slot for `key`, marked as the most recently used.
    fn get_mut(&mut self, key: &K) -> Option<&mut Slot> {
        let &at = self.index.get(key)?;
        if at != self.head {
            self.unlink(at);
            self.push_front(at);
        }
        self.entries.get_mut(at).map(|entry| &mut entry.slot)
    }

    /// Adds `key` (not present), evicting the least recently used entry when full.
    fn insert(&mut self, key: K, slot: Slot) {
        let at = if self.entries.len() < self.capacity {
            self.entries.push(Entry {
                key: key.clone(),
                slot,
                newer: NIL,
                older: NIL,
            });
            self.entries.len() - 1
        } else {
            let at = self.tail;
            self.unlink(at);
            let Some(entry) = self.entries.get_mut(at) else {
                return;
            };
            self.index.remove(&entry.key);
            self.retired_round = self.retired_round.max(entry.slot.breaker.round());
            entry.key = key.clone();
            entry.slot = slot;
            at
        };
        self.index.insert(key, at);
        self.push_front(at);
    }

    fn remove(&mut self, key: &K) -> Option<Slot> {
        let at = self.index.remove(key)?;
        if let Some(entry) = self.entries.get(at) {
            self.retired_round = self.retired_round.max(entry.slot.breaker.round());
        }
        self.unlink(at);
        let last = self.entries.len().checked_sub(1)?;
        if at != last {
            // The last entry moves into the freed place: repoint its neighbours and
            // its index to the new place, keeping its rank in the order of use.
            let moved = self.entries.get(last)?;
            let (newer, older) = (moved.newer, moved.older);
            if let Some(slot) = self.index.get_mut(&moved.key) {
                *slot = at;
            }
            match self.entries.get_mut(newer) {
                Some(e) => e.older = at,
                None => self.head = at,
            }
            match self.entries.get_mut(older) {
                Some(e) => e.newer = at,
                None => self.tail = at,
            }
        }
        Some(self.entries.swap_remove(at).slot)
    }

    fn unlink(&mut self, at: usize) {
        let Some(entry) = self.entries.get(at) else {
            return;
        };
        let (newer, older) = (entry.newer, entry.older);
        match self.entries.get_mut(newer) {
            Some(e) => e.older = older,
            None => self.head = older,
        }
        match self.entries.get_mut(older) {
            Some(e) => e.newer = newer,
            None => self.tail = newer,
        }
    }

    fn push_front(&mut self, at: usize) {
        let old_head = self.head;
        if let Some(entry) = self.entries.get_mut(at) {
            entry.newer = NIL;
            entry.older = old_head;
        }
        match self.entries.get_mut(old_head) {
            Some(e) => e.newer = at,
            None => self.tail = at,
        }
        self.head = at;
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;
    use std::hash::RandomState;

    use super::{Lru, Slot};
    use crate::Config;

    fn order(lru: &Lru<u32, RandomState>) -> Vec<u32> {
        let mut keys = Vec::new();
        let mut at = lru.head;
        while let Some(entry) = lru.entries.get(at) {
            keys.push(entry.key);
            at = entry.older;
        }
        keys
    }

    #[test]
    fn the_least_recently_used_key_is_evicted() {
        let breaker = Config::new().build().unwrap();
        let mut lru = Lru::new(3, RandomState::new());
        for key in [1, 2, 3] {
            lru.insert(key, Slot::new(breaker));
        }
        assert_eq!(order(&lru), [3, 2, 1]);
        assert!(lru.get_mut(&1).is_some());
        assert_eq!(order(&lru), [1, 3, 2]);
        lru.insert(4, Slot::new(breaker));
        assert_eq!(order(&lru), [4, 1, 3]);
        assert!(lru.peek(&2).is_none());
        assert_eq!(lru.index.len(), 3);
    }

    #[test]
    fn removing_keeps_the_order_of_the_rest() {
        let breaker = Config::new().build().unwrap();
        let mut lru = Lru::new(4, RandomState::new());
        for key in [1, 2, 3, 4] {
            lru.insert(key, Slot::new(breaker));
        }
        assert!(lru.get_mut(&2).is_some());
        assert_eq!(order(&lru), [2, 4, 3, 1]);
        assert!(lru.remove(&3).is_some());
        assert!(lru.remove(&3).is_none());
        assert_eq!(order(&lru), [2, 4, 1]);
        lru.insert(5, Slot::new(breaker));
        lru.insert(6, Slot::new(breaker));
        assert_eq!(order(&lru), [6, 5, 2, 4]);
        for key in [6, 5, 2, 4] {
            assert_eq!(
                lru.index.get(&key).map(|&at| lru.entries[at].key),
                Some(key)
            );
        }
    }

    /// A key that comes back after its breaker was let go numbers its rounds
    /// on from the latest round any let-go breaker reached, past 2³² rounds
    /// too: a probe of the old breaker's first round, handed back late, frees
    /// no slot of the new breaker's.
    #[test]
    fn a_returning_key_numbers_its_rounds_on_past_two_to_the_32() {
        use core::num::NonZeroUsize;

        use super::KeyedBreaker;
        use crate::{Admission, State};

        let mut template = Config::new().with_cooldown_ms(1_000).build().unwrap();
        template.number_rounds_after(u64::from(u32::MAX));
        let breakers = KeyedBreaker::new(template, NonZeroUsize::new(1).unwrap());
        let open_and_probe = |t0: u64| {
            for t in t0..t0 + 100 {
                let _ = breakers.record(&"a", t, false);
            }
            let Some(State::Open { until_ms }) = breakers.state(&"a") else {
                panic!("the breaker opened")
            };
            let Admission::Probe { round, .. } = breakers.check(&"a", until_ms) else {
                panic!("a probe was admitted")
            };
            (round, until_ms)
        };
        let (old, _) = open_and_probe(0);
        let _ = breakers.record(&"b", 5_000, true); // lets "a" go
        let (new, at) = open_and_probe(10_000);
        assert_ne!(old, new);
        assert!(!breakers.check(&"a", at).is_allowed(), "one probe out");
        breakers.release_probe(&"a", old);
        assert!(
            !breakers.check(&"a", at).is_allowed(),
            "still one probe out"
        );
    }
}
