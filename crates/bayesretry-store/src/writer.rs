//! [`WriterId`]: which store instance wrote a piece of evidence.

use core::fmt;

/// The identity of a store instance, stamped on every piece of evidence it
/// writes, so that merged snapshots keep each writer's contribution apart.
///
/// Two stores whose snapshots are merged must have different ids; one store must
/// keep its id for as long as its evidence lives (load its own last snapshot
/// when it restarts, or take a new id). A `MemoryStore` draws a random id unless
/// given one.
///
/// [`WriterId::MIGRATED`] is reserved for evidence that names no writer: no
/// store is built with it.
///
/// ```
/// use bayesretry_store::WriterId;
/// assert_eq!(WriterId::new(7).get(), 7);
/// assert_eq!(WriterId::from_seed(7), WriterId::from_seed(7));
/// assert_ne!(WriterId::from_seed(7), WriterId::from_seed(8));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(transparent)
)]
pub struct WriterId(u64);

impl WriterId {
    /// The owner of evidence that was written without a writer id: `u64::MAX`.
    /// Snapshot files whose version 0 contexts were migrated by earlier
    /// releases of `bayesretry-fs` hold them under it (that crate now names
    /// each migrated file's writer after its content, so that two such files
    /// merge additively).
    ///
    /// No store writes under it — [`StoreConfig::build`](crate::StoreConfig::build)
    /// refuses it and a drawn id is never it — so a merge never replaces such
    /// evidence with a live store's: it is kept beside every writer's, once.
    pub const MIGRATED: WriterId = WriterId(u64::MAX);

    /// The id `id`, as chosen by the caller (a host number, a pod ordinal;
    /// any number but `u64::MAX`, which is [`WriterId::MIGRATED`]).
    pub const fn new(id: u64) -> WriterId {
        WriterId(id)
    }

    /// An id derived from `seed` by the SplitMix64 finaliser, so that small,
    /// close seeds (0, 1, 2 ...) give ids that look unrelated.
    pub const fn from_seed(seed: u64) -> WriterId {
        WriterId(splitmix64(seed))
    }

    /// The id as a number.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for WriterId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// SplitMix64's output function (Steele, Lea and Flood, 2014).
pub(crate) const fn splitmix64(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The order of two versions of one writer's entry for one context, each
/// `(sequence number, last update, evidence)`: by sequence number, ties broken
/// by the later update, then by the counts (total order on their bits). Every
/// merge keeps the greater, so any two versions are ordered the same way
/// everywhere, and merging is a join.
#[cfg(feature = "serde")]
pub(crate) fn cmp_versions(
    a: (u64, u64, bayesretry_decay::Evidence),
    b: (u64, u64, bayesretry_decay::Evidence),
) -> core::cmp::Ordering {
    a.0.cmp(&b.0)
        .then(a.1.cmp(&b.1))
        .then(a.2.successes().total_cmp(&b.2.successes()))
        .then(a.2.failures().total_cmp(&b.2.failures()))
}
