#![doc = include_str!("../README.md")]
#![no_std]

#[cfg(feature = "std")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

mod breaker;
mod config;
mod error;
mod evidence;
mod fleet;
#[cfg(feature = "std")]
mod keyed;
mod math;
mod pacing;
#[cfg(feature = "std")]
mod shared;

pub use bayesretry_beta::{Beta, CHANGE_HAZARD};
pub use breaker::{Admission, Breaker, ProbeRound, RunReading, State, Transition};
pub use config::Config;
pub use error::Error;
pub use fleet::FleetView;
#[cfg(feature = "std")]
pub use keyed::KeyedBreaker;
#[cfg(feature = "std")]
pub use shared::{FailureCount, SharedBreaker};
