#![doc = include_str!("../README.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]

extern crate alloc;

mod breaker;
mod budget;
mod codec;
mod config;
mod error;
mod evidence;
mod fleet;
mod reconnect;
mod replica;
mod scripts;
mod share;
mod spends;
#[cfg(feature = "tls")]
mod tls;
mod url;

pub use breaker::FleetBreaker;
pub use budget::{FleetBudget, FleetBudgetConfig};
pub use config::FleetConfig;
pub use error::{Error, SyncError};
pub use fleet::{Fleet, Stats};
pub use replica::Replica;
pub use url::RedisUrl;
