//! [`StoreConfig`]: the settings of a [`MemoryStore`], checked once by
//! [`StoreConfig::build`].

use bayesretry_beta::Beta;
use bayesretry_decay::HalfLife;

use crate::error::Error;
use crate::memory::MemoryStore;
use crate::writer::WriterId;

/// The settings of a [`MemoryStore`]: a small `Copy` value built with `with_*`
/// setters and checked by [`build`](StoreConfig::build), which returns the store.
///
/// # Default
///
/// - `prior`: Beta(1, 1), the uniform prior
/// - `half_life`: [`HalfLife::NEVER`], no decay
/// - `max_contexts`: 100 000
/// - hierarchical priors on, `max_borrowed`: 10 pseudo-observations
/// - `shards`: 32 (fewer when `max_contexts` is below 32)
/// - `writer`: a random [`WriterId`], drawn when the store is built (never
///   [`WriterId::MIGRATED`])
/// - `hash_seed`: random, drawn when the store is built
/// - `class_refresh_ms`: 1 000
/// - `max_endpoint_bytes`: 256
///
/// ```
/// use bayesretry_store::{Error, HalfLife, StoreConfig, WriterId};
///
/// let store = StoreConfig::new()
///     .with_half_life(HalfLife::new(60_000.0)?)
///     .with_max_contexts(10_000)
///     .with_writer(WriterId::new(3))
///     .build()?;
/// assert_eq!(store.writer(), WriterId::new(3));
/// assert_eq!(
///     StoreConfig::new().with_max_contexts(0).build().unwrap_err(),
///     Error::InvalidMaxContexts(0)
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StoreConfig {
    pub(crate) prior: Beta,
    pub(crate) half_life: HalfLife,
    pub(crate) max_contexts: usize,
    pub(crate) hierarchical: bool,
    pub(crate) max_borrowed: f64,
    pub(crate) shards: usize,
    pub(crate) writer: Option<WriterId>,
    pub(crate) hash_seed: Option<u64>,
    pub(crate) class_refresh_ms: u64,
    pub(crate) max_endpoint_bytes: usize,
}

impl StoreConfig {
    /// The defaults listed above.
    pub const fn new() -> StoreConfig {
        StoreConfig {
            prior: Beta::uniform(),
            half_life: HalfLife::NEVER,
            max_contexts: 100_000,
            hierarchical: true,
            max_borrowed: 10.0,
            shards: 32,
            writer: None,
            hash_seed: None,
            class_refresh_ms: 1_000,
            max_endpoint_bytes: 256,
        }
    }

    /// The belief about a context before any evidence, its own or borrowed.
    pub const fn with_prior(self, prior: Beta) -> StoreConfig {
        StoreConfig { prior, ..self }
    }

    /// Lets evidence fade with this half-life; see
    /// [`bayesretry_decay`](bayesretry_decay#the-rule).
    pub const fn with_half_life(self, half_life: HalfLife) -> StoreConfig {
        StoreConfig { half_life, ..self }
    }

    /// Keeps evidence forever (the default).
    pub const fn without_decay(self) -> StoreConfig {
        StoreConfig {
            half_life: HalfLife::NEVER,
            ..self
        }
    }

    /// The most contexts the store holds, at least 1. Past it, the least
    /// recently updated context of the shard that needs the room is forgotten;
    /// see [`MemoryStore`](crate::MemoryStore#bounded).
    pub const fn with_max_contexts(self, max_contexts: usize) -> StoreConfig {
        StoreConfig {
            max_contexts,
            ..self
        }
    }

    /// Turns hierarchical priors on or off (on by default). Off, every context
    /// starts from the plain prior; see the
    /// [crate documentation](crate#hierarchical-priors).
    pub const fn with_hierarchical_priors(self, hierarchical: bool) -> StoreConfig {
        StoreConfig {
            hierarchical,
            ..self
        }
    }

    /// The most pseudo-observations a context borrows from its parents, finite
    /// and at least 0 (0 turns borrowing off, like
    /// [`with_hierarchical_priors(false)`](StoreConfig::with_hierarchical_priors)).
    pub const fn with_max_borrowed(self, max_borrowed: f64) -> StoreConfig {
        StoreConfig {
            max_borrowed,
            ..self
        }
    }

    /// How many independently locked shards the store is split into: a power of
    /// two from 1 to 1024. More shards let more threads on distinct endpoints
    /// work at once; each shard holds `max_contexts / shards` contexts, so the
    /// store uses fewer shards than asked when `max_contexts` is smaller.
    pub const fn with_shards(self, shards: usize) -> StoreConfig {
        StoreConfig { shards, ..self }
    }

    /// The id stamped on the evidence this store writes, which keeps it apart
    /// from other stores' in merged snapshots; see [`WriterId`]. Any id but
    /// [`WriterId::MIGRATED`], which [`build`](StoreConfig::build) refuses.
    pub const fn with_writer(self, writer: WriterId) -> StoreConfig {
        StoreConfig {
            writer: Some(writer),
            ..self
        }
    }

    /// The key of the store's hash, for runs that must place keys the same way
    /// every time (where they land never changes what the store answers).
    pub const fn with_hash_seed(self, seed: u64) -> StoreConfig {
        StoreConfig {
            hash_seed: Some(seed),
            ..self
        }
    }

    /// How old, in milliseconds of the caller's clock, a shard's view of the
    /// other shards' class evidence may get before it is refreshed; see
    /// [`MemoryStore`](crate::MemoryStore#the-class-level-across-shards). 0
    /// refreshes on every call: exact, and slower.
    pub const fn with_class_refresh_ms(self, class_refresh_ms: u64) -> StoreConfig {
        StoreConfig {
            class_refresh_ms,
            ..self
        }
    }

    /// The longest endpoint name kept, in bytes, at least 1. A longer name is
    /// cut (at a character boundary: [`clip_name`](crate::clip_name)) to this
    /// length before it is looked up, so names that differ only beyond it
    /// share a context. A policy built on the store cuts the names of its
    /// breakers' endpoints alike.
    pub const fn with_max_endpoint_bytes(self, max_endpoint_bytes: usize) -> StoreConfig {
        StoreConfig {
            max_endpoint_bytes,
            ..self
        }
    }

    /// Checks every setting and returns an empty store.
    pub fn build(self) -> Result<MemoryStore, Error> {
        if self.max_contexts == 0 {
            return Err(Error::InvalidMaxContexts(self.max_contexts));
        }
        if !(self.shards.is_power_of_two() && self.shards <= 1024) {
            return Err(Error::InvalidShards(self.shards));
        }
        if !(self.max_borrowed >= 0.0 && self.max_borrowed < f64::INFINITY) {
            return Err(Error::InvalidMaxBorrowed(self.max_borrowed));
        }
        if self.max_endpoint_bytes == 0 {
            return Err(Error::InvalidMaxEndpointBytes(self.max_endpoint_bytes));
        }
        if let Some(writer @ WriterId::MIGRATED) = self.writer {
            return Err(Error::ReservedWriter(writer));
        }
        Ok(MemoryStore::from_checked(self))
    }

    /// The prior.
    pub const fn prior(&self) -> Beta {
        self.prior
    }

    /// The half-life of evidence.
    pub const fn half_life(&self) -> HalfLife {
        self.half_life
    }

    /// The most contexts held.
    pub const fn max_contexts(&self) -> usize {
        self.max_contexts
    }

    /// Whether contexts borrow their prior from their parents.
    pub const fn hierarchical_priors(&self) -> bool {
        self.hierarchical
    }

    /// The most pseudo-observations borrowed.
    pub const fn max_borrowed(&self) -> f64 {
        self.max_borrowed
    }

    /// The shards asked for.
    pub const fn shards(&self) -> usize {
        self.shards
    }

    /// The writer id, if one was set.
    pub const fn writer(&self) -> Option<WriterId> {
        self.writer
    }

    /// How old a shard's view of the class evidence may get, in milliseconds.
    pub const fn class_refresh_ms(&self) -> u64 {
        self.class_refresh_ms
    }

    /// The longest endpoint name kept, in bytes.
    pub const fn max_endpoint_bytes(&self) -> usize {
        self.max_endpoint_bytes
    }
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self::new()
    }
}
