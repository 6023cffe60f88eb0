//! [`Replica`]: the local copy of the evidence that the fleet keeps in sync.

use alloc::sync::Arc;

use bayesretry_policy::RetryPolicy;
use bayesretry_store::{MemoryStore, Snapshot};

/// What a [`Fleet`](crate::Fleet) syncs: a local store that decisions read at
/// in-memory speed, whose evidence the fleet pushes to Redis and into which
/// it merges everyone else's.
///
/// Implemented for [`RetryPolicy`] (its own store), for [`MemoryStore`], and
/// through `Arc`. The fleet only ever calls these two methods, from its sync
/// task, never on a caller's path.
pub trait Replica: Send + Sync + 'static {
    /// Every writer's evidence the replica holds, as of `now_ms` on the
    /// fleet's clock (a policy uses its own clock instead).
    ///
    /// A store's snapshot names the store's writer
    /// ([`Snapshot::taken_by`]): the fleet pushes that writer's entries as
    /// this process's own and renews their time to live, even those Redis
    /// already held from an earlier process under the same id. In a
    /// snapshot that names none, a writer is this process's own only if its
    /// entries were not read from Redis first.
    fn snapshot(&self, now_ms: u64) -> Snapshot;

    /// Merges the fleet's evidence in at `now_ms` on the fleet's clock (a
    /// policy uses its own clock instead), with the store's per-writer merge:
    /// commutative, associative and idempotent; evidence stamped after
    /// `now_ms` is taken as arriving then (`MemoryStore::merge_at`).
    fn merge(&self, snapshot: &Snapshot, now_ms: u64);
}

impl Replica for RetryPolicy {
    fn snapshot(&self, _now_ms: u64) -> Snapshot {
        RetryPolicy::snapshot(self)
    }

    fn merge(&self, snapshot: &Snapshot, _now_ms: u64) {
        self.load(snapshot);
    }
}

impl Replica for MemoryStore {
    fn snapshot(&self, now_ms: u64) -> Snapshot {
        MemoryStore::snapshot(self, now_ms)
    }

    fn merge(&self, snapshot: &Snapshot, now_ms: u64) {
        MemoryStore::merge_at(self, snapshot, now_ms);
    }
}

impl<T: Replica + ?Sized> Replica for Arc<T> {
    fn snapshot(&self, now_ms: u64) -> Snapshot {
        (**self).snapshot(now_ms)
    }

    fn merge(&self, snapshot: &Snapshot, now_ms: u64) {
        (**self).merge(snapshot, now_ms);
    }
}
