#![doc = include_str!("../README.md")]

extern crate alloc;

mod atomic;
mod autosave;
mod error;
mod file_store;
mod identity;
mod lock;
mod migrate;
mod read;
mod recovery;
mod target;

pub use autosave::{Autosave, AutosaveConfig, AutosaveStats, Check};
pub use error::Error;
pub use file_store::FileStore;
pub use read::parse_snapshot;
pub use recovery::{Merged, Origin, Recovery, Source};
