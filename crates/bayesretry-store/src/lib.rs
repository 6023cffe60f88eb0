#![doc = include_str!("../README.md")]
#![no_std]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

#[cfg(any(feature = "std", feature = "serde"))]
mod class;
#[cfg(feature = "std")]
mod config;
mod context;
mod error;
mod error_class;
#[cfg(feature = "std")]
mod hash;
mod hierarchy;
#[cfg(feature = "std")]
mod memory;
mod name;
mod posterior_store;
#[cfg(feature = "serde")]
mod snapshot;
mod writer;

pub use bayesretry_beta::Beta;
pub use bayesretry_decay::{Evidence, HalfLife};
#[cfg(feature = "std")]
pub use config::StoreConfig;
pub use context::Context;
pub use error::Error;
pub use error_class::ErrorClass;
pub use hierarchy::borrowed_evidence;
#[cfg(feature = "std")]
pub use memory::MemoryStore;
pub use name::{clip_name, same_name};
pub use posterior_store::PosteriorStore;
#[cfg(feature = "serde")]
pub use snapshot::{Snapshot, SnapshotEntry};
pub use writer::WriterId;
